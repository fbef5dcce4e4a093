"""Findings on the terminal (a table) and as CSV (one row per finding: export --format
findings-csv)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from rich.markup import escape
from rich.table import Table

from perfatlas.findings.compute import RunFindings
from perfatlas.findings.model import Finding
from perfatlas.report.common import number
from perfatlas.stats import CONFIDENCE

CSV_COLUMNS = (
    "run_id",
    "kind",
    "subject",
    "value",
    "unit",
    "low",
    "high",
    "confidence",
    "samples",
    "interval_reason",
    "verdict",
    "severity",
    "method",
    "results",
    "scenarios",
)
_MARKUP = {"warning": "red", "notice": "yellow"}


def value_text(f: Finding) -> str:
    """'12.3 % [11.9, 12.8]', or the value alone (and '-' without one)."""
    if f.value is None:
        return "-"
    text = f"{number(f.value, 4)} {f.unit}".rstrip()
    if f.interval is not None:
        text += f" [{number(f.interval.low, 4)}, {number(f.interval.high, 4)}]"
    return text


def coverage_text(f: Finding) -> str:
    """What a finding's interval covers: '95 % CI', '96.1 % CI' (an order-statistic interval's
    exact coverage), '75 %, 3 samples' (the full range of fewer than 6, under 95 %); without an
    interval, the reason."""
    if f.interval is None:
        return f.interval_reason or "-"
    coverage = f"{100 * f.interval.confidence:.3g} %"
    if f.interval.samples is not None and f.interval.confidence < CONFIDENCE:
        return f"{coverage}, {f.interval.samples} samples"
    return f"{coverage} CI"


def figure_text(
    f: Finding | None, form: Callable[[float], str] = number, dim: bool = False, unit: str = ""
) -> str:
    """A finding's value (and `unit`) and interval as a table cell, each bound written by `form`:
    '1.234 µs [1.100, 1.300]'; '-' without the finding or its value; `dim`: the interval in rich's
    dim markup (the terminal's tables)."""
    if f is None or f.value is None:
        return "-"
    value = f"{form(f.value)} {unit}".rstrip()
    if f.interval is None:
        return value
    bounds = f"[{form(f.interval.low)}, {form(f.interval.high)}]"
    return f"{value} " + (f"[dim]{bounds}[/]" if dim else bounds)


def findings_table(found: RunFindings, kinds: tuple[str, ...] = ()) -> Table:
    """The findings of a run (those whose kind starts with one of `kinds`, if given)."""
    from perfatlas.views import titled_table

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


def findings_csv(found: RunFindings) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for f in found.findings:
        writer.writerow(
            [
                found.run_id,
                f.kind,
                f.subject,
                "" if f.value is None else repr(f.value),
                f.unit,
                "" if f.interval is None else repr(f.interval.low),
                "" if f.interval is None else repr(f.interval.high),
                "" if f.interval is None else repr(f.interval.confidence),
                "" if f.interval is None or f.interval.samples is None else f.interval.samples,
                f.interval_reason or "",
                f.verdict or "",
                f.severity,
                f.method,
                " ".join(map(str, f.sources.results)),
                " ".join(map(str, f.sources.scenarios)),
            ]
        )
    return buffer.getvalue()
