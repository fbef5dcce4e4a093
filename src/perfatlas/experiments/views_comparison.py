"""perfatlas compare on the terminal: every matched point of two runs, their ratio and verdict."""

from __future__ import annotations

from rich.table import Table

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.units import format_value
from perfatlas.experiments.analysis_comparison import PointRatio
from perfatlas.terminal.run_views import titled_table


def comparison_table(
    points: list[PointRatio], run_a: int, run_b: int, expect: float | None
) -> Table:
    """Every matched point: both medians, the ratio B / A with its interval, and the verdict."""
    against = "1" if expect is None else f"the expected {expect:g}"
    table = titled_table(
        f"run {run_b} relative to run {run_a} (ratio of medians, 95% bootstrap CI, held against "
        f"{against})",
        "benchmark",
        "parameters",
        "metric",
        f"run {run_a}",
        f"run {run_b}",
        "ratio",
        "95% CI",
        "",
        right=(3, 4, 5, 6),
    )
    for p in points:
        table.add_row(
            p.b.benchmark,
            params_label(p.b),
            p.b.metric,
            format_value(p.a.median, p.a.unit),
            format_value(p.b.median, p.b.unit),
            f"{p.ratio.median:.3f}",
            f"{p.ratio.ci_lo:.3f} .. {p.ratio.ci_hi:.3f}",
            p.verdict(expect),
        )
    return table
