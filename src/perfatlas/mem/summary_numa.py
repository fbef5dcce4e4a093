"""The NUMA line of the terminal summary: local latency and bandwidth, and the worst remote
penalty as the run's findings state it."""

from __future__ import annotations

from perfatlas.findings.compute import run_findings
from perfatlas.mem.analysis_numa import numa_matrices, summary_line
from perfatlas.mem.findings_memory import worst_penalty_text
from perfatlas.store.run_data import RunData
from perfatlas.terminal.summary_registry import summary_table


@summary_table("numa", 35, ("mem.numa_matrix",))
def numa_line(data: RunData) -> str | None:
    found = run_findings(data)
    matrices = numa_matrices(data.measured("mem.numa_matrix"))
    return summary_line(matrices, lambda matrix: worst_penalty_text(found, matrix)) or None
