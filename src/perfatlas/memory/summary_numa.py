"""The NUMA line of the terminal summary: local vs remote latency and bandwidth."""

from __future__ import annotations

from perfatlas.memory.analysis_numa import numa_matrices, summary_line
from perfatlas.report.data import RunData
from perfatlas.summary_tables import summary_table


@summary_table("numa", 35, ("mem.numa_matrix",))
def numa_line(data: RunData) -> str | None:
    return summary_line(numa_matrices(data.measured("mem.numa_matrix"))) or None
