"""The verdict table of a check, in the terminal (rich) and as words (JUnit)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from perfatlas.common.units import format_value
from perfatlas.regression.verdicts import Row
from perfatlas.terminal.run_views import titled_table

STYLE = {"regression": "red", "improved": "green", "not significant": "yellow"}


def figure_text(value: float, lo: float, hi: float, unit: str) -> str:
    return f"{format_value(value, unit)} [{format_value(lo, unit)}, {format_value(hi, unit)}]"


def ratio_text(row: Row) -> str:
    if row.ratio is None:
        return "-"
    r = row.ratio
    return f"{r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]"


def row_words(row: Row) -> dict[str, str]:
    b, n = row.baseline, row.now
    return {
        "figure": row.label,
        "baseline": figure_text(b.value, b.ci_lo, b.ci_hi, b.unit),
        "now": "-" if n is None else figure_text(n.value, n.ci_lo, n.ci_hi, n.unit),
        "ratio": ratio_text(row),
        "verdict": row.verdict,
        "note": row.note,
    }


def verdict_table(rows: Sequence[Row], title: str) -> Table:
    table = titled_table(title, "figure", "baseline", "now", "now / baseline", "verdict", "note")
    for row in rows:
        words = {k: escape(v) for k, v in row_words(row).items()}
        style = STYLE.get(row.verdict)
        if style:
            words["verdict"] = f"[{style}]{words['verdict']}[/]"
        table.add_row(*words.values())
    return table
