"""Small helpers several sections share: value cells and the series-context table."""

from __future__ import annotations

from perfatlas.common.stats import MIN_SAMPLES_FOR_CI
from perfatlas.common.units import format_number, format_value
from perfatlas.report.blocks import Note, Table
from perfatlas.report.series import Series
from perfatlas.store.result import Result


def value_with_ci(
    result: Result, scale: float = 1.0, unit: str | None = None, digits: int = 3
) -> str:
    """'12.3 [12.1, 12.6]' — the median and its 95 % CI, in `unit` after multiplying by scale."""
    if result.median is None:
        return "-"
    if unit is None:
        return (
            f"{format_value(result.median, result.unit)} "
            f"[{format_value(result.ci_lo, result.unit)}, {format_value(result.ci_hi, result.unit)}]"
        )
    m, lo, hi = (
        format_number(v * scale, digits) for v in (result.median, result.ci_lo, result.ci_hi)
    )
    return f"{m} [{lo}, {hi}] {unit}"


def context_table(series: list[Series], caption: str = "") -> Table:
    """Per plotted line: the binding, memory placement and page size read back from the results."""
    return Table(
        ["series", "context (read back from the result documents)"],
        [[s.label, s.context()] for s in series],
        caption=caption
        or "Measurement context of each line: binding as applied (Cpus_allowed "
        "read back), where the pages actually landed, page size, samples per point.",
    )


def few_samples_note(results: list[Result]) -> Note | None:
    """Say so when some intervals are the full range because there were too few samples."""
    few = [r for r in results if 0 < r.n < MIN_SAMPLES_FOR_CI]
    if not few:
        return None
    smallest = min(r.n for r in few)
    return Note(
        f"{len(few)} of these {len(results)} points have fewer than {MIN_SAMPLES_FOR_CI} "
        f"samples (as few as {smallest}): their interval is the full range of the "
        f"samples, with less than 95 % coverage. Use samples={MIN_SAMPLES_FOR_CI} or more "
        "for a 95 % CI.",
        "warning",
    )
