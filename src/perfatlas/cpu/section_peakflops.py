"""Peak compute: the flop rate of every kernel (precision x ISA) against the thread count, the
per-core rate against the nominal clock, and the kernels this CPU lacks."""

from __future__ import annotations

import numpy as np

from perfatlas.cpu.analysis_peakflops import (
    BENCHMARK,
    PeakRow,
    peak_rows,
    thread_counts,
    unmeasured_kernels,
)
from perfatlas.cpu.findings_cpu import peak_cells
from perfatlas.findings.compute import run_findings
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData

GFLOP = 1e9  # flop/s per Gflop/s


def _figure(rows: list[PeakRow]) -> str:
    with plots.figure("peakflops", width=7.5, height=3.6) as (fig, axes):
        ax = axes[0][0]
        curves = []
        for i, row in enumerate(rows):
            points = [(t, r) for t, r in row.by_threads.items() if r.median is not None]
            x = np.array([t for t, _ in points], dtype=float)
            curves.append(
                Curve(
                    f"{row.precision} {row.isa}",
                    x,
                    np.array([r.median / GFLOP for _, r in points]),
                    np.array([r.ci_lo / GFLOP for _, r in points]),
                    np.array([r.ci_hi / GFLOP for _, r in points]),
                    color=plots.COLORS[i % len(plots.COLORS)],
                    linestyle="-" if row.precision == "double" else "--",
                )
            )
        plots.draw_curves(ax, curves)
        ax.set_xlabel("threads (one per core first)")
        ax.set_xticks(thread_counts(rows))
        plots.plain_log_y(ax, "Gflop/s (10^9 flop/s)")
        plots.legend_below(ax, ncol=4)
        return plots.to_svg(fig)


@section("peakflops", "Peak compute (cpu.peakflops)", order=36)
def peakflops_section(data: RunData) -> list[Block]:
    rows = peak_rows(data)
    missing = unmeasured_kernels(data)
    if not rows and not missing:
        return []
    blocks: list[Block] = []
    if rows:
        counts = thread_counts(rows)
        blocks.append(
            Figure(
                _figure(rows),
                "Median flop rate of every thread's independent FMA (or multiply + add) chains, "
                "with its 95 % CI band; solid: double, dashed: single precision. Every block of "
                "every lane was checked against its exact closed form.",
            )
        )
        clock = rows[0].nominal_clock_source
        found = run_findings(data)
        blocks.append(
            Table(
                [
                    "precision",
                    "ISA",
                    "operations",
                    "lanes",
                    *[f"{t} thread{'s' * (t > 1)}, Gflop/s" for t in counts],
                    "flop per nominal cycle, one core",
                    "full-width vector operations per cycle",
                ],
                [
                    [
                        row.precision,
                        row.isa,
                        row.operations,
                        str(row.lanes),
                        *peak_cells(found, row, counts, dim=False),
                    ]
                    for row in rows
                ],
                caption="Peak flop rate, median [95 % CI]. An FMA counts 2 flop per lane, a "
                "multiply and an add 1 each. Per core: the 1-thread median over the nominal "
                f"clock (source: {clock}); over 2 x lanes it is the number of full-width FMAs "
                "(or multiply + add pairs) completed per cycle, the FMA pipes times the clock's "
                "ratio to nominal.",
                numeric=tuple(range(3, 6 + len(counts))),
            )
        )
    if missing:
        blocks.append(
            Note(
                "Not measurable here: "
                + "; ".join(f"{isa} {precision}: {why}" for precision, isa, why in missing)
                + "."
            )
        )
    benchmark_results = data.measured(BENCHMARK)
    if benchmark_results and any(r.n < 6 for r in benchmark_results):
        blocks.append(Note("Fewer than 6 samples: the intervals are the full range.", "warning"))
    return blocks
