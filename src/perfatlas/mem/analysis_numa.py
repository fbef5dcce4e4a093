"""The NUMA matrix (mem.numa_matrix): latency and bandwidth per (cpu node, memory node), and how
much worse than local each remote pair is.

Definitions, used by the report and the terminal summary:
- a row is a NUMA node with PUs, a column a node with memory; memory-only nodes are columns only;
- the local cell of a row is (n, n); a row without one (a CPU-only node) takes as its reference
  the column nearest by the kernel's distance (ACPI SLIT), the memory its first touch would get;
- the penalty of a cell is the ratio of its median to the reference's, turned so that > 1 is
  worse: latency remote / local, bandwidth local / remote; with a percentile-bootstrap 95 % CI
  from the raw samples (stats.ratio).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from perfatlas.common.stats import Ratio, ratio
from perfatlas.common.units import format_value
from perfatlas.store.result import Result

BENCHMARK = "mem.numa_matrix"
METRICS = {"latency_ns": "latency", "bandwidth_Bps": "read bandwidth"}


@dataclass(frozen=True)
class Penalty:
    cpu_node: int
    mem_node: int
    reference: int  # the memory node this row's figure is compared with
    factor: Ratio  # > 1: worse than the reference


@dataclass
class NumaMatrix:
    metric: str
    unit: str
    cells: dict[tuple[int, int], Result]  # (cpu node, memory node) -> result
    distances: dict[tuple[int, int], int] = field(default_factory=dict)

    @property
    def cpu_nodes(self) -> list[int]:
        return sorted({c for c, _ in self.cells})

    @property
    def mem_nodes(self) -> list[int]:
        return sorted({m for _, m in self.cells})

    @property
    def lower_is_better(self) -> bool:
        return self.metric == "latency_ns"

    def medians(self) -> np.ndarray:
        """Rows by cpu node, columns by memory node; NaN where nothing was measured."""
        values = np.full((len(self.cpu_nodes), len(self.mem_nodes)), np.nan)
        for (c, m), r in self.cells.items():
            values[self.cpu_nodes.index(c), self.mem_nodes.index(m)] = r.median
        return values

    def reference(self, cpu_node: int) -> int | None:
        """The memory node a row is compared with: its own, else the nearest measured one."""
        if (cpu_node, cpu_node) in self.cells:
            return cpu_node
        columns = [m for c, m in self.cells if c == cpu_node]
        if not columns:
            return None
        return min(columns, key=lambda m: (self.distances.get((cpu_node, m)) or 1 << 30, m))

    def penalties(self) -> list[Penalty]:
        """Every cell other than its row's reference, compared with it."""
        found = []
        for c in self.cpu_nodes:
            ref = self.reference(c)
            if ref is None:
                continue
            base = self.cells[(c, ref)]
            for m in self.mem_nodes:
                cell = self.cells.get((c, m))
                if m == ref or cell is None:
                    continue
                worse, better = (cell, base) if self.lower_is_better else (base, cell)
                found.append(Penalty(c, m, ref, ratio(worse.samples, better.samples)))
        return found

    def worst(self) -> Penalty | None:
        penalties = self.penalties()
        return max(penalties, key=lambda p: p.factor.median) if penalties else None

    def local_median(self) -> float | None:
        """Median over rows of the reference cell's median (the local figure)."""
        values = [
            self.cells[(c, ref)].median
            for c in self.cpu_nodes
            if (ref := self.reference(c)) is not None
        ]
        return float(np.median(values)) if values else None


def numa_matrices(results: list[Result]) -> list[NumaMatrix]:
    """One matrix per metric and per set of other parameters (sizes, page, threads), from the
    measured results of mem.numa_matrix; the last launch wins where a cell repeats."""
    groups: dict[tuple, NumaMatrix] = {}
    for r in results:
        if r.benchmark != BENCHMARK or not r.samples or r.metric not in METRICS:
            continue
        p = r.params
        fixed = tuple(
            (k, str(v))
            for k, v in sorted(p.items())
            if k not in ("cpu_node", "mem_node", "measure", "samples", "min_sample_time")
        )
        matrix = groups.setdefault((r.metric, fixed), NumaMatrix(r.metric, r.unit, {}))
        cell = (int(p["cpu_node"]), int(p["mem_node"]))
        matrix.cells[cell] = r
        distance = (r.document.get("derived") or {}).get("distance")
        if distance:
            matrix.distances[cell] = int(distance)
    return sorted(groups.values(), key=lambda m: list(METRICS).index(m.metric))


def worst_text(matrix: NumaMatrix) -> str | None:
    """The matrix's worst remote penalty as this analysis finds it, for summary_line."""
    worst = matrix.worst()
    if worst is None:
        return None
    f = worst.factor
    return (
        f"worst remote {f.median:.2f}x [{f.ci_lo:.2f}, {f.ci_hi:.2f}] "
        f"(cpu node {worst.cpu_node} -> memory node {worst.mem_node})"
    )


def summary_line(
    matrices: list[NumaMatrix], worst: Callable[[NumaMatrix], str | None] = worst_text
) -> str | None:
    """One line for the terminal: local figures and the worst remote penalty of each metric, as
    `worst` states it (the terminal passes the run's findings' word)."""
    parts = []
    for matrix in matrices:
        local = matrix.local_median()
        if local is None:
            continue
        text = f"{METRICS[matrix.metric]} local {format_value(local, matrix.unit)}"
        said = worst(matrix)
        parts.append(f"{text}, {said}" if said else text)
    if not parts:
        return None
    shape = max(matrices, key=lambda m: len(m.cells))
    size = f"{len(shape.cpu_nodes)} CPU x {len(shape.mem_nodes)} memory node(s)"
    return f"NUMA matrix, {size}: " + "; ".join(parts)
