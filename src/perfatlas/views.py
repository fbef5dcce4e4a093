"""Terminal tables: results of a run, runs of a store, comparisons of two runs."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from perfatlas.anomaly import REMEASURE_KEY
from perfatlas.experiments.analysis_comparison import PointRatio
from perfatlas.report.data import params_label
from perfatlas.store import Result
from perfatlas.units import format_value

# Tables go to stdout; when that is not a terminal, do not squeeze them into 80 columns.
console = Console(width=None if sys.stdout.isatty() else 200)


def titled_table(title: str, *columns: str, right: tuple[int, ...] = ()) -> Table:
    """A table with a bold left-aligned title; the columns listed in `right` align right."""
    table = Table(title=title, title_justify="left", title_style="bold")
    for i, column in enumerate(columns):
        table.add_column(column, justify="right" if i in right else "left")
    return table


def results_table(results: list[Result], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("benchmark", "parameters", "metric", "median", "95% CI", "min", "max", "n"):
        table.add_column(column, justify="right" if column in ("n",) else "left")
    for r in results:
        if r.not_measurable:
            table.add_row(
                r.benchmark,
                params_label(r),
                r.metric,
                f"[yellow]not measurable here: {r.not_measurable}[/]",
                "",
                "",
                "",
                "0",
            )
            continue
        again = r.document.get(REMEASURE_KEY)
        table.add_row(
            r.benchmark,
            params_label(r)
            + (
                f" [dim](re-measures result {', '.join(map(str, again['of']))})[/]" if again else ""
            ),
            r.metric,
            format_value(r.median, r.unit) + (" [yellow]![/]" if r.warnings else ""),
            f"{format_value(r.ci_lo, r.unit)} .. {format_value(r.ci_hi, r.unit)}",
            format_value(r.min, r.unit),
            format_value(r.max, r.unit),
            str(r.n),
        )
    return table


def print_warnings(results: list[Result]) -> None:
    """Each warning with the result it belongs to, and its metric where it concerns one."""
    for r in results:
        for warning in r.warnings:
            about = f" {warning.metric}" if warning.metric else ""
            console.print(
                f"[yellow]warning[/] {r.benchmark} {params_label(r)}{about}: {warning.text}",
                highlight=False,
            )


def runs_table(runs: list[dict]) -> Table:
    table = Table(title="runs", title_justify="left")
    for column in ("id", "started", "status", "host", "machine", "suite", "results"):
        table.add_column(column)
    for run in runs:
        table.add_row(
            str(run["id"]),
            run["started"],
            run["status"],
            run["host"],
            run["fingerprint"],
            run["suite"] or "measure",
            str(run["results"]),
        )
    return table


def comparison_table(points: list[PointRatio], run_a: int, run_b: int, expect: float | None):
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
