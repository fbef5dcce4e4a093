"""Findings as text: a value with its interval, its coverage, a table cell; and as CSV (one row per
finding: export --format findings-csv). The terminal's table of them: perfatlas.terminal.findings_table."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from perfatlas.common.stats import CONFIDENCE
from perfatlas.common.units import format_number
from perfatlas.findings.compute import RunFindings
from perfatlas.findings.model import Finding

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


def value_text(f: Finding) -> str:
    """'12.3 % [11.9, 12.8]', or the value alone (and '-' without one)."""
    if f.value is None:
        return "-"
    text = f"{format_number(f.value, 4)} {f.unit}".rstrip()
    if f.interval is not None:
        text += f" [{format_number(f.interval.low, 4)}, {format_number(f.interval.high, 4)}]"
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
    f: Finding | None,
    form: Callable[[float], str] = format_number,
    dim: bool = False,
    unit: str = "",
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
