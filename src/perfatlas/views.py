"""Terminal tables: results of a run, runs of a store, comparisons of two runs."""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table

from perfatlas.benchmarks import get
from perfatlas.stats import ratio
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


def _params_label(result: Result) -> str:
    try:
        return get(result.benchmark).label(result.params)
    except Exception:  # a benchmark this version does not know: show the raw parameters
        return json.dumps(result.params, sort_keys=True)


def results_table(results: list[Result], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("benchmark", "parameters", "metric", "median", "95% CI", "min", "max", "n"):
        table.add_column(column, justify="right" if column in ("n",) else "left")
    for r in results:
        if r.not_measurable:
            table.add_row(
                r.benchmark,
                _params_label(r),
                r.metric,
                f"[yellow]not measurable here: {r.not_measurable}[/]",
                "",
                "",
                "",
                "0",
            )
            continue
        table.add_row(
            r.benchmark,
            _params_label(r),
            r.metric,
            format_value(r.median, r.unit) + (" [yellow]![/]" if r.warnings else ""),
            f"{format_value(r.ci_lo, r.unit)} .. {format_value(r.ci_hi, r.unit)}",
            format_value(r.min, r.unit),
            format_value(r.max, r.unit),
            str(r.n),
        )
    return table


def print_warnings(results: list[Result]) -> None:
    for r in results:
        for warning in r.warnings:
            console.print(f"[yellow]warning[/] {r.benchmark} {_params_label(r)}: {warning}")


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


def result_key(result: Result) -> tuple:
    """Results of two runs match when benchmark, parameters and metric are equal."""
    return (result.benchmark, json.dumps(result.params, sort_keys=True), result.metric)


def comparison_table(a: list[Result], b: list[Result], run_a: int, run_b: int) -> Table:
    table = Table(
        title=f"run {run_b} relative to run {run_a} (ratio of medians, 95% bootstrap CI)",
        title_justify="left",
    )
    for column in (
        "benchmark",
        "parameters",
        "metric",
        f"run {run_a}",
        f"run {run_b}",
        "ratio",
        "95% CI",
        "",
    ):
        table.add_column(column)
    by_key = {result_key(r): r for r in a if r.samples}
    for rb in b:
        ra = by_key.get(result_key(rb))
        if ra is None or not rb.samples:
            continue
        r = ratio(rb.samples, ra.samples)
        verdict = "same" if r.ci_lo <= 1.0 <= r.ci_hi else ("higher" if r.ci_lo > 1 else "lower")
        table.add_row(
            rb.benchmark,
            _params_label(rb),
            rb.metric,
            format_value(ra.median, ra.unit),
            format_value(rb.median, rb.unit),
            f"{r.median:.3f}",
            f"{r.ci_lo:.3f} .. {r.ci_hi:.3f}",
            verdict,
        )
    return table
