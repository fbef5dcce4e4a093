"""The peak-flops part of the terminal summary: flop/s per precision, ISA and thread count, as
the run's cpu.peakflops findings state them."""

from __future__ import annotations

from rich.table import Table

from perfatlas.cpu.analysis_peakflops import BENCHMARK, peak_rows, thread_counts
from perfatlas.cpu.findings_cpu import peak_cells
from perfatlas.findings.compute import run_findings
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table


@summary_table("peakflops", 37, (BENCHMARK,))
def peakflops_table(data: RunData) -> Table | None:
    rows = peak_rows(data)
    if not rows:
        return None
    counts = thread_counts(rows)
    found = run_findings(data)
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
            *peak_cells(found, row, counts, dim=True),
        )
    return table
