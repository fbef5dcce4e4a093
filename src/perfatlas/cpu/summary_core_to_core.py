"""The core-to-core table of the terminal summary: the latency levels, their groups, and
whether hwloc's objects explain them."""

from __future__ import annotations

from rich.table import Table

from perfatlas.cpu.analysis_core_to_core import core_matrix, groups_found
from perfatlas.cpu.section_core_to_core import level_rows
from perfatlas.report.data import RunData
from perfatlas.summary_tables import summary_table
from perfatlas.views import titled_table


@summary_table("core-to-core", 36, ("cpu.core_to_core",))
def core_to_core_table(data: RunData) -> Table | None:
    matrix = core_matrix(data.measured("cpu.core_to_core"))
    if matrix is None:
        return None
    n = len(matrix.cpus)
    table = titled_table(
        f"core-to-core latency, one-way ({len(matrix.pairs)} pair(s) of {n} CPUs)",
        "level",
        "pair medians",
        "pairs",
        "groups found",
        "hwloc",
        "matches",
        right=(1, 2),
    )
    for row in level_rows(groups_found(matrix, data.run["topology"])):
        table.add_row(*row)
    return table
