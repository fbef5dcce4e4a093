"""Terminal tables: results of a run, their warnings, runs of a store; the console they print on."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.anomaly import REMEASURE_KEY
from perfatlas.common.units import format_value
from perfatlas.store.result import Result

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
