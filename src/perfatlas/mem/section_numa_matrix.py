"""The NUMA matrix: latency and read bandwidth from every CPU node to every memory node, each
remote cell's penalty as the run's findings state it."""

from __future__ import annotations

import numpy as np

from perfatlas.common.units import format_size
from perfatlas.findings.compute import RunFindings, run_findings
from perfatlas.mem.analysis_numa import METRICS, NumaMatrix, numa_matrices
from perfatlas.mem.findings_memory import penalty_of, ratio_text
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Table
from perfatlas.report.cells import few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import pages_text
from perfatlas.store.run_data import RunData

SCALE = {"latency_ns": (1.0, "ns"), "bandwidth_Bps": (1e-9, "GB/s")}


def _figure(matrices: list[NumaMatrix]) -> str:
    with plots.figure(
        "numa-matrix", 1, len(matrices), width=4.2 * len(matrices) + 0.6, height=3.4
    ) as (fig, axes):
        for ax, matrix in zip(axes[0], matrices):
            scale, unit = SCALE[matrix.metric]
            values = np.nan_to_num(matrix.medians() * scale, nan=0.0)
            small = values.size <= 64
            plots.draw_heatmap(
                fig,
                ax,
                values,
                f"{METRICS[matrix.metric]} ({unit})",
                annotate=(lambda v: f"{v:.3g}") if small else None,
            )
            ax.set_xticks(range(len(matrix.mem_nodes)), [str(n) for n in matrix.mem_nodes])
            ax.set_yticks(range(len(matrix.cpu_nodes)), [str(n) for n in matrix.cpu_nodes])
            ax.set_xlabel("memory node")
            ax.set_ylabel("CPU node")
            ax.set_title(f"{METRICS[matrix.metric]}, median", loc="left")
        fig.tight_layout()
        return plots.to_svg(fig)


def _rows(matrices: list[NumaMatrix], found: RunFindings) -> list[list[str]]:
    """A row per cell: its median, and its penalty as the run's findings state it."""
    rows = []
    for matrix in matrices:
        penalty = {(p.cpu_node, p.mem_node): p for p in matrix.penalties()}
        for (c, m), r in sorted(matrix.cells.items()):
            p = penalty.get((c, m))
            rows.append(
                [
                    METRICS[matrix.metric],
                    str(c),
                    str(m),
                    str(matrix.distances.get((c, m), "?")),
                    value_with_ci(r),
                    ratio_text(penalty_of(found, matrix, p)) if p else "reference",
                    pages_text(r.document.get("placement") or {}),
                ]
            )
    return rows


@section("numa-matrix", "NUMA matrix (mem.numa_matrix)", order=33)
def numa_matrix_section(data: RunData) -> list[Block]:
    matrices = numa_matrices(data.measured("mem.numa_matrix"))
    if not matrices:
        return []
    results = [r for m in matrices for r in m.cells.values()]
    note = few_samples_note(results)
    nodes = max(len(m.mem_nodes) for m in matrices)
    first = results[0].params
    caption = (
        "Each cell: one thread on the CPU node's first PU chasing pointers through a "
        f"{format_size(first.get('latency_bytes', 0))} buffer bound to the memory node "
        "(page-local random order), and the node's threads (one per core) reading a "
        f"{format_size(first.get('bandwidth_bytes', 0))} buffer bound there, all in one "
        "launch; pages read back with move_pages. Memory-only nodes are columns without a row."
    )
    if nodes == 1:
        caption += " This machine has one NUMA node: the matrix is its local figure alone."
    return [
        *([note] if note else []),
        Figure(_figure(matrices), caption),
        Table(
            [
                "metric",
                "CPU node",
                "memory node",
                "distance",
                "median [95 % CI]",
                "penalty vs local [95 % CI]",
                "pages (read back)",
            ],
            _rows(matrices, run_findings(data)),
            caption="Penalty: remote / local latency, local / remote bandwidth (> 1 is worse), "
            "ratio of medians with a percentile-bootstrap 95 % CI; the reference is the row's own "
            "node (a CPU-only node: its nearest by distance). Distance: the kernel's SLIT entry.",
            numeric=(3, 4, 5),
        ),
    ]
