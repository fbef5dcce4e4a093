"""Two runs compared (perfatlas compare --report): the machines side by side, per-benchmark
geometric-mean ratios, the ratio against thread count with the expected ratio drawn, and every
point's ratio (perfatlas.experiments.analysis_comparison)."""

from __future__ import annotations

import json

import numpy as np

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.units import format_number, format_value
from perfatlas.experiments.analysis_comparison import (
    PointRatio,
    benchmark_ratios,
    point_ratios,
    thread_series,
)
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData

SERIES_PER_FIGURE = 6


def _runs(data: RunData) -> Table:
    a, b = data.comparison.run_a, data.run
    rows = [
        ["run", str(a["id"]), str(b["id"])],
        ["host", a["host"], b["host"]],
        ["CPU", a["context"].get("cpu_model") or "?", b["context"].get("cpu_model") or "?"],
        ["suite", a["suite"] or "measure", b["suite"] or "measure"],
        ["started", a["started"], b["started"]],
        ["status", a["status"], b["status"]],
    ]
    return Table(["", "A", "B"], rows, caption="The two runs. Ratios are B / A.")


def _ratio_text(r) -> str:
    return f"{format_number(r.median)} [{format_number(r.ci_lo)}, {format_number(r.ci_hi)}]"


def _per_benchmark(points: list[PointRatio]) -> Table:
    rows = [
        [benchmark, metric, str(n), _ratio_text(r)]
        for (benchmark, metric), (r, n) in sorted(benchmark_ratios(points).items())
    ]
    return Table(
        ["benchmark", "metric", "points", "geometric mean B / A (95 % CI)"],
        rows,
        caption="Per benchmark and metric: the geometric mean of the points' ratios, with a "
        "bootstrap interval over the points.",
        numeric=(2, 3),
    )


def _threads_figure(name: str, series: list[tuple[tuple, list[PointRatio]]], expect) -> str:
    with plots.figure(name, 1, 1, width=8.0, height=3.8) as (fig, axes):
        ax = axes[0][0]
        curves = []
        for i, ((benchmark, metric, others), members) in enumerate(series):
            policy = json.loads(others)
            tag = " ".join(f"{k}={policy[k]}" for k in ("bind", "mempolicy") if k in policy)
            curves.append(
                Curve(
                    f"{benchmark} {metric} {tag}".strip(),
                    np.array([p.threads for p in members], dtype=float),
                    np.array([p.ratio.median for p in members]),
                    np.array([p.ratio.ci_lo for p in members]),
                    np.array([p.ratio.ci_hi for p in members]),
                    color=plots.COLORS[i % len(plots.COLORS)],
                    marker="o",
                )
            )
        plots.draw_error_bars(ax, curves)
        ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle=":")
        if expect is not None:
            ax.axhline(expect, color="#b03030", linewidth=1.0, linestyle="--", label="expected")
        ax.set_xlabel("threads")
        ax.set_xticks(sorted({p.threads for _, members in series for p in members}))
        ax.set_ylabel("B / A (ratio of medians, 95 % CI)")
        plots.legend_below(ax, ncol=2)
        fig.tight_layout()
        return plots.to_svg(fig)


def _points(points: list[PointRatio], expect: float | None) -> Table:
    rows = [
        [
            p.b.benchmark,
            params_label(p.b),
            p.b.metric,
            format_value(p.a.median, p.a.unit),
            format_value(p.b.median, p.b.unit),
            _ratio_text(p.ratio),
            p.verdict(expect),
        ]
        for p in points
    ]
    return Table(
        ["benchmark", "parameters", "metric", "A", "B", "B / A (95 % CI)", "verdict"],
        rows,
        caption="Every point measured in both runs (a sweep's launches pooled): ratio of medians "
        "with a percentile-bootstrap interval; the verdict holds the interval against "
        + ("the expected ratio." if expect is not None else "1."),
        numeric=(3, 4, 5),
    )


@section("comparison", "Comparison of two runs", order=15)
def build(data: RunData) -> list[Block] | None:
    if data.comparison is None:
        return None
    expect = data.comparison.expect
    points = point_ratios(data.comparison.results_a, data.results)
    blocks: list[Block] = [_runs(data)]
    if not points:
        return [*blocks, Note("the two runs have no result with the same parameters", "bad")]
    blocks.append(_per_benchmark(points))
    series = list(thread_series(points).items())
    for start in range(0, len(series), SERIES_PER_FIGURE):
        chunk = series[start : start + SERIES_PER_FIGURE]
        blocks.append(
            Figure(
                _threads_figure(f"comparison-{start}", chunk, expect),
                "The ratio B / A against thread count"
                + (f"; the dashed line is the expected ratio {expect:g}." if expect else "."),
            )
        )
    blocks.append(Details(f"all {len(points)} points", [_points(points, expect)]))
    return blocks
