"""The peak-flops part of the terminal summary: flop/s per precision, ISA and thread count."""

from __future__ import annotations

from rich.table import Table

from perfatlas.cpu.analysis_peakflops import BENCHMARK, PeakRow, peak_rows, thread_counts
from perfatlas.report.common import number
from perfatlas.report.data import RunData
from perfatlas.store import Result
from perfatlas.summary_tables import summary_table
from perfatlas.views import titled_table

GFLOP = 1e9


def gflops(result: Result | None, markup: bool = True) -> str:
    """A median in Gflop/s with its 95 % CI, or '-'."""
    if result is None or result.median is None:
        return "-"
    m, lo, hi = (number(v / GFLOP) for v in (result.median, result.ci_lo, result.ci_hi))
    return f"{m} [dim][{lo}, {hi}][/]" if markup else f"{m} [{lo}, {hi}]"


def per_core(row: PeakRow) -> tuple[str, str]:
    """(flop per nominal cycle of one core, full-width vector operations per cycle), or why not."""
    if row.single_thread is None:
        return "-", "-"
    if row.flop_per_cycle is None:
        return "no nominal clock", "-"
    return number(row.flop_per_cycle), number(row.vector_units or 0.0)


@summary_table("peakflops", 37, (BENCHMARK,))
def peakflops_table(data: RunData) -> Table | None:
    rows = peak_rows(data)
    if not rows:
        return None
    counts = thread_counts(rows)
    table = titled_table(
        "peak floating-point rate, Gflop/s (10^9 flop/s) [95 % CI]",
        "precision",
        "ISA",
        "ops",
        "lanes",
        *[f"{t} thread{'s' * (t > 1)}" for t in counts],
        "flop/cycle/core",
        "vector ops/cycle",
        right=tuple(range(3, 6 + len(counts))),
    )
    for row in rows:
        table.add_row(
            row.precision,
            row.isa,
            row.operations,
            str(row.lanes),
            *[gflops(row.by_threads.get(t)) for t in counts],
            *per_core(row),
        )
    return table
