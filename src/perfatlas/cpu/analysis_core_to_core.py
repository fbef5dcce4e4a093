"""The core-to-core matrix (cpu.core_to_core) and the groups of CPUs its latency levels reveal.

Definitions, used by the report and the terminal summary:
- a pair's latency is the median of both directions' samples pooled (each CPU initiated in turn,
  interleaved), with its 95 % interval (stats.summarize); a pair whose directions differ by a
  paired sign test (p < SYMMETRY_ALPHA) is listed as asymmetric;
- latency levels: the pairs' medians sorted, split wherever one is more than LEVEL_GAP times the
  one before it (1-D single-linkage clustering in log space: SMT siblings share a core's L1,
  cores a CCX's L3 slice, CCXs a die or a mesh, dies a package, packages the machine);
- the groups of a level: the connected components of the graph whose edges are the measured
  pairs at or below the level (agglomerative clustering with single linkage, cut between levels);
- a level matches an hwloc object (core, L2, L3, die, NUMA node, package, the machine) where, over
  every measured pair, "same group" and "share that object" agree; a partial matrix (pairs=first)
  is thus checked for its first CPU's groups. Where none matches, the nearest object is named with
  the share of measured pairs it agrees on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from perfatlas.common.stats import Summary, summarize
from perfatlas.store.result import Result

BENCHMARK = "cpu.core_to_core"
LEVEL_GAP = 1.25  # a jump of 25 % between sorted pair medians starts a new level
SYMMETRY_ALPHA = 1e-4  # a pair's directions differ where the paired sign test gives p below it

# hwloc objects, finest first: the key of a PU in the topology document and its name
OBJECTS = (
    ("core", "core (SMT siblings)"),
    ("l2", "L2"),
    ("l3", "L3"),
    ("die", "die"),
    ("numa_node", "NUMA node"),
    ("package", "package"),
    (None, "machine"),
)

Pair = tuple[int, int]  # (lower cpu, higher cpu)


def _pair(a: int, b: int) -> Pair:
    return (a, b) if a < b else (b, a)


@dataclass
class CoreMatrix:
    directed: dict[Pair, Result]  # (initiator, responder) -> its result
    pairs: dict[Pair, Summary] = field(default_factory=dict)  # both directions pooled

    def __post_init__(self) -> None:
        samples: dict[Pair, list[float]] = {}
        for (a, b), result in self.directed.items():
            samples.setdefault(_pair(a, b), []).extend(result.samples)
        self.pairs = {pair: summarize(values) for pair, values in sorted(samples.items())}

    @property
    def cpus(self) -> list[int]:
        return sorted({cpu for pair in self.pairs for cpu in pair})

    def medians(self, order: list[int] | None = None) -> np.ndarray:
        """Symmetric, rows and columns in `order` (default: cpu number); 0 on the diagonal and
        NaN where a pair was not measured."""
        order = order or self.cpus
        at = {cpu: i for i, cpu in enumerate(order)}
        values = np.full((len(order), len(order)), np.nan)
        np.fill_diagonal(values, 0.0)
        for (a, b), summary in self.pairs.items():
            values[at[a], at[b]] = values[at[b], at[a]] = summary.median
        return values

    def asymmetric(self, alpha: float = SYMMETRY_ALPHA) -> list[Pair]:
        """Pairs measured both ways whose directions differ: a two-sided sign test on the
        samples paired as they were taken (sample i of one direction, then sample i of the
        other), p < alpha. A load on the machine hits the two directions of a sample alike, so
        the test stays valid however many samples it spoils (Conover, Practical Nonparametric
        Statistics, 3.4)."""
        found = []
        for (a, b), forward in self.directed.items():
            back = self.directed.get((b, a))
            if a < b and back is not None and sign_test(forward.samples, back.samples) < alpha:
                found.append((a, b))
        return found


def sign_test(first: list[float], second: list[float]) -> float:
    """Two-sided p-value of the sign test on paired samples (ties dropped)."""
    pairs = list(zip(first, second))
    above = sum(x > y for x, y in pairs)
    n = above + sum(x < y for x, y in pairs)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(above, n - above) + 1)) / 2**n
    return min(1.0, 2 * tail)


def core_matrix(results: list[Result]) -> CoreMatrix | None:
    """The matrix of a run's cpu.core_to_core results (those with samples), or None."""
    directed = {
        (r.params["initiator"], r.params["responder"]): r
        for r in results
        if r.benchmark == BENCHMARK and r.samples and "initiator" in r.params
    }
    return CoreMatrix(directed) if directed else None


# -- levels and groups ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Level:
    low_ns: float  # the smallest and largest pair median of the level
    high_ns: float
    pairs: int  # measured pairs at this level
    groups: list[list[int]]  # the partition of the measured CPUs after merging up to this level
    hwloc: list[str]  # the hwloc objects whose sharing it matches exactly ([]: none)
    nearest: str  # the object that agrees on most measured pairs
    agreement: float  # the share of measured pairs on which `nearest` agrees

    @property
    def matches(self) -> bool:
        return bool(self.hwloc)

    @property
    def name(self) -> str:
        return " = ".join(self.hwloc) if self.hwloc else f"unmatched (nearest: {self.nearest})"

    def shape(self) -> str:
        """'4 groups of 2', '1 group of 8 + 2 single CPUs'."""
        sizes: dict[int, int] = {}
        for group in self.groups:
            sizes[len(group)] = sizes.get(len(group), 0) + 1
        parts = [
            f"{count} group{'s' if count > 1 else ''} of {size}"
            for size, count in sorted(sizes.items(), reverse=True)
            if size > 1
        ]
        singles = sizes.get(1, 0)
        if singles:
            parts.append(f"{singles} single CPU{'s' if singles > 1 else ''}")
        return " + ".join(parts)


def latency_levels(medians: list[float], gap: float = LEVEL_GAP) -> list[tuple[float, float]]:
    """(low, high) of each level: the sorted values split where one exceeds `gap` x the last."""
    values = sorted(v for v in medians if v is not None and math.isfinite(v) and v > 0)
    levels: list[list[float]] = []
    for v in values:
        if levels and v <= levels[-1][-1] * gap:
            levels[-1].append(v)
        else:
            levels.append([v])
    return [(level[0], level[-1]) for level in levels]


def _components(cpus: list[int], edges: list[Pair]) -> list[list[int]]:
    parent = {cpu: cpu for cpu in cpus}

    def root(cpu: int) -> int:
        while parent[cpu] != cpu:
            parent[cpu] = parent[parent[cpu]]
            cpu = parent[cpu]
        return cpu

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for cpu in cpus:
        groups.setdefault(root(cpu), []).append(cpu)
    return sorted(groups.values())


def hwloc_sharing(topology: dict, cpus: list[int]) -> dict[str, dict[int, object]]:
    """For each hwloc object the topology names, the object of each measured CPU (a CPU without
    one is alone); objects absent from the topology (no L3, no die, older documents) left out."""
    pus = {pu["os_index"]: pu for pu in topology.get("pus", [])}
    found: dict[str, dict[int, object]] = {}
    for key, name in OBJECTS:
        if key is None:
            found[name] = {cpu: 0 for cpu in cpus}
            continue
        owner = {cpu: pus.get(cpu, {}).get(key, -1) for cpu in cpus}
        if all(v is None or v < 0 for v in owner.values()):
            continue
        found[name] = {
            cpu: v if v is not None and v >= 0 else ("alone", cpu) for cpu, v in owner.items()
        }
    return found


def groups_found(matrix: CoreMatrix, topology: dict, gap: float = LEVEL_GAP) -> list[Level]:
    """The latency levels of the matrix, finest first, each with its groups and the hwloc
    objects it matches (module docstring)."""
    cpus = matrix.cpus
    medians = {pair: s.median for pair, s in matrix.pairs.items()}
    sharing = hwloc_sharing(topology, cpus)
    found = []
    for low, high in latency_levels(list(medians.values()), gap):
        groups = _components(cpus, [p for p, v in medians.items() if v <= high])
        group_of = {cpu: i for i, group in enumerate(groups) for cpu in group}
        agreement = {}
        for name, owner in sharing.items():
            agree = sum((group_of[a] == group_of[b]) == (owner[a] == owner[b]) for a, b in medians)
            agreement[name] = agree / len(medians)
        nearest = max(agreement, key=lambda name: agreement[name]) if agreement else "-"
        found.append(
            Level(
                low,
                high,
                sum(low <= v <= high for v in medians.values()),
                groups,
                [name for name, share in agreement.items() if share == 1.0],
                nearest,
                agreement.get(nearest, 0.0),
            )
        )
    return found


def display_order(cpus: list[int], levels: list[Level]) -> list[int]:
    """The CPUs ordered so that every group of every level is contiguous: by the lowest CPU of
    their group at the coarsest level, then at the next finer one, and so on."""
    lowest = [{cpu: min(group) for group in level.groups for cpu in group} for level in levels]
    return sorted(cpus, key=lambda cpu: (*(m[cpu] for m in reversed(lowest)), cpu))
