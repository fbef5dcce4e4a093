"""A run's findings as a terminal table (perfatlas show, run, measure)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from perfatlas.findings.compute import RunFindings
from perfatlas.findings.render import coverage_text, value_text
from perfatlas.terminal.run_views import titled_table

_MARKUP = {"warning": "red", "notice": "yellow"}


def findings_table(found: RunFindings, kinds: tuple[str, ...] = ()) -> Table:
    """The findings of a run (those whose kind starts with one of `kinds`, if given)."""
    origin = "stored with the run" if found.origin == "stored" else "recomputed from its results"
    table = titled_table(
        f"findings of run {found.run_id} ({origin})",
        "kind",
        "subject",
        escape("value [interval]"),
        "coverage",
        "verdict",
    )
    for f in found.findings:
        if kinds and not f.kind.startswith(kinds):
            continue
        color = _MARKUP.get(f.severity)
        verdict = escape(f.verdict or "")
        table.add_row(
            f.kind,
            escape(f.subject),
            escape(value_text(f)),
            escape(coverage_text(f)),
            f"[{color}]{verdict}[/]" if color and verdict else verdict,
        )
    return table
