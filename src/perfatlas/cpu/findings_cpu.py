"""Findings of the cores' analyses: the peak floating-point rate per precision, ISA and thread
count, and the core-to-core latency levels with the hwloc objects they match
(perfatlas.cpu.analysis_peakflops, perfatlas.cpu.analysis_core_to_core); and both read back as
the report's sections and the terminal's tables show them."""

from __future__ import annotations

import numpy as np

from perfatlas.common.units import format_number
from perfatlas.cpu.analysis_core_to_core import BENCHMARK as CORE_TO_CORE
from perfatlas.cpu.analysis_core_to_core import LEVEL_GAP, core_matrix, groups_found
from perfatlas.cpu.analysis_peakflops import PeakRow, peak_rows, vector_operations
from perfatlas.findings.compute import RunFindings
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import MEDIAN_CI, Finding, from_results, median_of, of_kind
from perfatlas.findings.render import figure_text
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData


@finding_source("peakflops", 36, {"cpu.peakflops": Better.HIGHER})
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


@finding_source("core-to-core", 35, {"cpu.core_to_core_level": Better.LOWER})
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
                details={
                    "low_ns": level.low_ns,
                    "high_ns": level.high_ns,
                    "pairs": level.pairs,
                    "groups": level.shape(),  # placed in the level tables
                },
            )
        )
    return found


# -- read back: the peaks and the core-to-core levels as the report's and the terminal's tables
# show them -------------------------------------------------------------------------------------
def peak_cells(found: RunFindings, row: PeakRow, counts: list[int], dim: bool) -> list[str]:
    """A peak row's cells as its cpu.peakflops findings state them: Gflop/s [95 % CI] per thread
    count of `counts`, then one core's flop per nominal cycle and full-width vector operations per
    cycle (from its 1-thread finding); `dim`: intervals in rich's dim markup."""
    by_result = found.of_results("cpu.peakflops")

    def of(result: Result | None) -> Finding | None:
        return None if result is None else by_result.get(result.id)

    cells = [figure_text(of(row.by_threads.get(t)), format_number, dim) for t in counts]
    return cells + _per_core(of(row.single_thread))


def _per_core(one_thread: Finding | None) -> list[str]:
    if one_thread is None:
        return ["-", "-"]
    per_cycle, lanes = one_thread.details.get("flop_per_cycle"), one_thread.details.get("lanes")
    if per_cycle is None or not lanes:
        return ["no nominal clock", "-"]
    return [format_number(per_cycle), format_number(vector_operations(per_cycle, lanes))]


LEVEL_HEADER = ("level", "pair medians", "pairs", "groups found", "against hwloc")


def level_rows(found: RunFindings) -> list[list[str]]:
    """A row (LEVEL_HEADER) per cpu.core_to_core_level finding, in its order, as it states the
    level: its range of pair medians, its pairs and groups, and its verdict against hwloc."""
    rows = []
    for k, f in enumerate(of_kind(found.findings, "cpu.core_to_core_level")):
        d = f.details
        span = (
            f"{format_number(d['low_ns'])} .. {format_number(d['high_ns'])} ns"
            if d.get("low_ns") is not None and d.get("high_ns") is not None
            else "-"
        )
        pairs = "-" if d.get("pairs") is None else str(d["pairs"])
        rows.append([str(k + 1), span, pairs, str(d.get("groups") or "-"), f.verdict or "-"])
    return rows
