"""Findings of the cores' analyses: the peak floating-point rate per precision, ISA and thread
count, and the core-to-core latency levels with the hwloc objects they match
(perfatlas.cpu.analysis_peakflops, perfatlas.cpu.analysis_core_to_core)."""

from __future__ import annotations

import numpy as np

from perfatlas.cpu.analysis_core_to_core import BENCHMARK as CORE_TO_CORE
from perfatlas.cpu.analysis_core_to_core import LEVEL_GAP, core_matrix, groups_found
from perfatlas.cpu.analysis_peakflops import peak_rows
from perfatlas.findings.model import MEDIAN_CI, Finding, from_results, median_of
from perfatlas.findings.registry import finding_source
from perfatlas.report.data import RunData


@finding_source("peakflops", 36)
def peakflops_findings(data: RunData) -> list[Finding]:
    found = []
    for row in peak_rows(data):
        for threads, result in sorted(row.by_threads.items()):
            value, interval = median_of(result, 1e-9)
            found.append(
                Finding(
                    kind="cpu.peakflops",
                    subject=f"{row.precision} {row.isa} {row.operations}, {threads} "
                    f"thread{'s' * (threads > 1)}",
                    value=value,
                    unit="Gflop/s",
                    method=f"checked {row.operations} kernel; {MEDIAN_CI}",
                    sources=from_results(result),
                    details={
                        "lanes": row.lanes,
                        "flop_per_cycle": row.flop_per_cycle if threads == 1 else None,
                        "nominal_clock_hz": row.nominal_clock_hz,
                        "nominal_clock_source": row.nominal_clock_source,
                    },
                    **interval,
                )
            )
    return found


@finding_source("core-to-core", 35)
def core_to_core_findings(data: RunData) -> list[Finding]:
    matrix = core_matrix(data.measured(CORE_TO_CORE))
    if matrix is None:
        return []
    medians = [s.median for s in matrix.pairs.values()]
    sources = from_results(*matrix.directed.values())
    found = []
    for k, level in enumerate(groups_found(matrix, data.run["topology"])):
        on = [v for v in medians if level.low_ns <= v <= level.high_ns]
        found.append(
            Finding(
                kind="cpu.core_to_core_level",
                subject=f"level {k + 1}: {level.shape()}",
                value=float(np.median(on)),
                unit="ns",
                method=f"sorted pair medians split where one exceeds the previous by "
                f"{LEVEL_GAP - 1:.0%}; value the median of the level's pairs",
                sources=sources,
                interval_reason="a level spans its pairs' medians (low_ns .. high_ns), not an "
                "interval of one figure",
                verdict=f"matches hwloc {level.name}"
                if level.matches
                else f"{level.name}: {100 * level.agreement:.0f} % of pairs agree",
                severity="info" if level.matches else "notice",
                details={"low_ns": level.low_ns, "high_ns": level.high_ns, "pairs": level.pairs},
            )
        )
    return found
