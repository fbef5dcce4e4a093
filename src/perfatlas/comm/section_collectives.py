"""MPI collectives: allreduce and barrier latency vs process count, with the growth check."""

from __future__ import annotations

import numpy as np

from perfatlas.comm.analysis_comm import FLAT_RATIO, GROWTH_MIN_SPAN, GROWTH_WIN_FACTOR
from perfatlas.comm.findings_comm import growth_verdict
from perfatlas.comm.series_comm import (
    COLLECTIVES,
    CollectiveLine,
    collective_lines,
    per_rank_medians,
    placement_details,
)
from perfatlas.common.units import format_number
from perfatlas.findings.compute import RunFindings, run_findings
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Table
from perfatlas.report.cells import few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData


def _vs_processes(lines: list[CollectiveLine]) -> str:
    with plots.figure("comm-collectives", height=4.0, width=9.5) as (fig, axes):
        ax = axes[0, 0]
        for i, line in enumerate(lines):
            color = plots.COLORS[i % 10]
            p = line.processes
            if len(lines) <= 3:  # min..max bands of more lines would hide each other
                ax.fill_between(
                    p,
                    line.values("min") * 1e-3,
                    line.values("max") * 1e-3,
                    color=color,
                    alpha=0.12,
                    lw=0,
                )
            plots.draw_error_bars(
                ax,
                [
                    Curve(
                        line.label,
                        p,
                        line.values("median") * 1e-3,
                        line.values("ci_lo") * 1e-3,
                        line.values("ci_hi") * 1e-3,
                        color=color,
                    )
                ],
            )
            g = line.growth
            if g.log_fit is not None and len(p) >= 3:
                dense = np.linspace(p.min(), p.max(), 50)
                ax.plot(
                    dense,
                    g.log_fit(np.log2(dense)) * 1e-3,
                    color=color,
                    linestyle="--",
                    linewidth=0.9,
                    alpha=0.8,
                )
                ax.plot(
                    dense,
                    g.linear_fit(dense) * 1e-3,
                    color=color,
                    linestyle=":",
                    linewidth=0.9,
                    alpha=0.8,
                )
        ax.set_xlabel("processes P (the first P ranks)")
        ax.set_xticks(sorted({int(x) for line in lines for x in line.processes}))
        plots.plain_log_y(ax, "latency per call (µs)")
        ax.set_title("collective latency vs process count", loc="left")
        plots.legend_below(ax, ncol=3)
        return plots.to_svg(fig)


def _vs_size(lines: list[CollectiveLine]) -> str | None:
    """Allreduce latency vs vector size, one line per process count."""
    allreduce = [line for line in lines if line.benchmark == "comm.allreduce"]
    if len({line.bytes for line in allreduce}) < 2:
        return None
    by_p: dict[int, list] = {}
    for line in allreduce:
        for r in line.results:
            by_p.setdefault(int(r.params["processes"]), []).append(r)
    with plots.figure("comm-allreduce-size", height=3.8, width=9.5) as (fig, axes):
        ax = axes[0, 0]
        curves = []
        for i, (p, results) in enumerate(sorted(by_p.items())):
            results = sorted(results, key=lambda r: r.params["bytes"])
            curves.append(
                Curve(
                    f"P={p}",
                    np.array([r.params["bytes"] for r in results], dtype=float),
                    np.array([r.median for r in results]) * 1e-3,
                    np.array([r.ci_lo for r in results]) * 1e-3,
                    np.array([r.ci_hi for r in results]) * 1e-3,
                    color=plots.COLORS[i % 10],
                )
            )
        plots.draw_curves(ax, curves)
        plots.size_axis(ax, [x for c in curves for x in c.x], label="vector (doubles, sum)")
        plots.plain_log_y(ax, "latency per call (µs)")
        ax.set_title("MPI_Allreduce latency vs vector size", loc="left")
        plots.legend_below(ax, ncol=6)
        return plots.to_svg(fig)


def _rows(lines: list[CollectiveLine]) -> list[list[str]]:
    rows = []
    for line in lines:
        for r in line.results:
            ranks = per_rank_medians(r)
            spread = (
                f"{format_number(min(ranks) * 1e-3)} .. {format_number(max(ranks) * 1e-3)} µs"
                if ranks
                else "-"
            )
            rows.append(
                [
                    line.label,
                    str(r.params["processes"]),
                    value_with_ci(r, 1e-3, "µs"),
                    f"{format_number(r.min * 1e-3)} µs",
                    f"{format_number(r.max * 1e-3)} µs",
                    spread,
                    str(r.n),
                ]
            )
    return rows


def _growth_rows(lines: list[CollectiveLine], found: RunFindings) -> list[list[str]]:
    """A row per line: its span of P, the growth verdict as the run's findings state it, and the
    two fits drawn in the figure."""
    rows = []
    for line in lines:
        g = line.growth
        fits = (
            f"{format_number(g.log_fit.intercept * 1e-3)} + {format_number(g.log_fit.slope * 1e-3)} log2 P µs; "
            f"{format_number(g.linear_fit.intercept * 1e-3)} + {format_number(g.linear_fit.slope * 1e-3)} P µs"
            if g.log_fit
            else "-"
        )
        span = f"{int(line.processes.min())}..{int(line.processes.max())}"
        rows.append([line.label, span, growth_verdict(found, line), fits])
    return rows


CRITERION = (
    "Growth: median latency is fitted by least squares against log2 P (dashed) and against P "
    f"(dotted); it is called logarithmic (or linear) when that fit leaves at most "
    f"{GROWTH_WIN_FACTOR:.0%} of the other's residual sum of squares, flat when the largest "
    f"median is within {FLAT_RATIO - 1:.0%} of the smallest, and inconclusive with fewer than 3 "
    f"process counts or when P spans less than a factor of {GROWTH_MIN_SPAN:.0f}."
)


@section("comm-collectives", "MPI collectives", order=52)
def collectives_section(data: RunData) -> list[Block]:
    lines = collective_lines(data)
    if not lines:
        return []
    results = [r for name in COLLECTIVES for r in data.measured(name)]
    blocks: list[Block] = [note] if (note := few_samples_note(results)) else []
    smallest = min((line.bytes for line in lines if line.benchmark == "comm.allreduce"), default=0)
    shown = [line for line in lines if line.benchmark != "comm.allreduce" or line.bytes == smallest]
    blocks.append(
        Figure(
            _vs_processes(shown),
            "Each rank times its own calls, back to back; points: median across ranks and "
            "samples with its 95 % CI; shaded: minimum to maximum across ranks and samples. "
            "Sub-communicators of the first P ranks (MPI_Comm_split) in one launch, so every P "
            "has the same placement. Allreduce is drawn at its smallest vector here, every size "
            "in the next figure. " + CRITERION,
        )
    )
    if size := _vs_size(lines):
        blocks.append(
            Figure(
                size, "MPI_Allreduce of doubles (MPI_SUM, verified on every rank) vs vector size."
            )
        )
    blocks.append(
        Table(
            ["collective", "P", "verdict: why", "fits"],
            _growth_rows(lines, run_findings(data)),
            caption="Growth with the process count.",
        )
    )
    blocks.append(
        Table(
            ["collective", "P", "median [95 % CI]", "min", "max", "per-rank medians", "n"],
            _rows(lines),
            numeric=(1, 2, 3, 4, 5, 6),
            caption="Across ranks and samples: n = ranks × samples; per-rank medians show "
            "whether one rank is consistently slower.",
        )
    )
    if placement := placement_details(results):
        blocks.append(placement)
    return blocks
