"""The core-to-core table of the terminal summary: the latency levels, their groups, and
whether hwloc's objects explain them, as the run's findings state them."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from perfatlas.cpu.analysis_core_to_core import core_matrix
from perfatlas.cpu.findings_cpu import LEVEL_HEADER, level_rows
from perfatlas.findings.compute import run_findings
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table


@summary_table("core-to-core", 36, ("cpu.core_to_core",))
def core_to_core_table(data: RunData) -> Table | None:
    matrix = core_matrix(data.measured("cpu.core_to_core"))
    if matrix is None:
        return None
    n = len(matrix.cpus)
    table = titled_table(
        f"core-to-core latency, one-way ({len(matrix.pairs)} pair(s) of {n} CPUs)",
        *LEVEL_HEADER,
        right=(1, 2),
    )
    for row in level_rows(run_findings(data)):
        table.add_row(*(escape(cell) for cell in row))
    return table
