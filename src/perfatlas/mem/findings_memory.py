"""Findings of the memory analyses: the levels of the latency curve, peak bandwidths, contention,
the NUMA penalties and loaded latency (perfatlas.mem.series_memory and its analyses); and the
contention, NUMA and loaded-latency findings read back for the report's sections and the
terminal's tables, so that both state the run's findings."""

from __future__ import annotations

from perfatlas.common.stats import summarize
from perfatlas.common.units import format_size
from perfatlas.findings.compute import RunFindings
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import (
    MEDIAN_CI,
    RATIO_CI,
    Finding,
    Sources,
    from_results,
    median_interval,
    median_of,
    of_kind,
    ratio_of,
)
from perfatlas.findings.render import figure_text
from perfatlas.mem.analysis_levels import Level, compare_with_hwloc
from perfatlas.mem.analysis_loaded_latency import SATURATION_RATIO, LoadedCurve, loaded_curves
from perfatlas.mem.analysis_numa import METRICS, NumaMatrix, Penalty, numa_matrices
from perfatlas.mem.series_memory import (
    ContentionRatio,
    bandwidth_peaks,
    bandwidth_series,
    contention_ratios,
    latency_series,
    levels_of,
    primary_latency,
)
from perfatlas.report.series import Series
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

LEVEL_METHOD = (
    "plateaus of log latency by optimal partitioning with a BIC penalty (Jackson et al. 2005), "
    "matched to hwloc's caches by size; latency the median of the plateau's point medians with "
    "its order-statistic interval over them (its exact coverage: under 95 % below 6 points)"
)


def _level_interval(medians: list[float]) -> dict:
    """The order-statistic interval of the median of a plateau's point medians, with its exact
    coverage (under 95 % for fewer than 6 points: stats.median_ci_ranks)."""
    s = summarize(medians)
    return median_interval(s.ci_lo, s.ci_hi, s.n)


def _plateau(reference: Series, level: Level) -> list[Result]:
    """The results on a level's plateau: those its memory.level finding cites."""
    return reference.results[level.first_index : level.last_index + 1]


@finding_source("memory levels", 10, {"memory.level": Better.LOWER})
def level_findings(data: RunData) -> list[Finding]:
    reference = primary_latency(latency_series(data))
    if reference is None:
        return []
    found = []
    for row in compare_with_hwloc(levels_of(reference, data), data.caches):
        level, cache = row.level, row.cache
        if level is None:
            found.append(
                Finding(
                    kind="memory.level",
                    subject=f"{row.name} ({reference.label})",
                    value=None,
                    unit="ns",
                    method=LEVEL_METHOD,
                    sources=from_results(*reference.results),
                    interval_reason="not detected on the latency curve",
                    verdict=f"hwloc's {cache.name} ({format_size(cache.size_bytes)}) not detected",
                    severity="notice",
                    details={"hwloc_bytes": cache.size_bytes},
                )
            )
            continue
        on = _plateau(reference, level)
        hwloc = f"hwloc {cache.name} {format_size(cache.size_bytes)}" if cache else "no hwloc cache"
        capacity = level.capacity_bytes
        found.append(
            Finding(
                kind="memory.level",
                subject=f"{level.name} ({reference.label})",
                value=level.latency_ns,
                unit="ns",
                method=LEVEL_METHOD,
                sources=from_results(*on),
                verdict=f"holds {format_size(capacity)} or more; {hwloc}"
                if capacity
                else f"beyond the caches; {hwloc}",
                details={
                    "first_bytes": level.first_bytes,
                    "last_bytes": level.last_bytes,
                    "capacity_bytes": capacity,
                    "boundary_bytes": level.boundary_bytes,
                    "hwloc_bytes": cache.size_bytes if cache else None,
                    "matched_by": level.matched_by,
                },
                **_level_interval([r.median for r in on]),
            )
        )
    return found


@finding_source("memory bandwidth", 11, {"memory.peak_bandwidth": Better.HIGHER})
def bandwidth_findings(data: RunData) -> list[Finding]:
    series = bandwidth_series(data)
    if not series:
        return []
    found = []
    for row in bandwidth_peaks(series)[1]:
        for threads, best in sorted(row.peak.items()):
            value, interval = median_of(best, 1e-9)
            found.append(
                Finding(
                    kind="memory.peak_bandwidth",
                    subject=f"{row.op}, {row.variant}, {threads} thread{'s' * (threads > 1)}",
                    value=value,
                    unit="GB/s",
                    method=f"the working set with the highest median; {MEDIAN_CI}",
                    sources=from_results(best),
                    details={"bytes": best.params.get("bytes")},
                    **interval,
                )
            )
    return found


def _how_much(slowdown: float) -> str:
    """'1.50x slower', or '1.25x faster' (not '0.80x faster'), with the load."""
    if slowdown > 1:
        return f"{slowdown:.2f}x slower with the load"
    return f"{1 / slowdown:.2f}x faster with the load"


def _contention_sources(c: ContentionRatio) -> Sources:
    return from_results(c.alone, c.loaded)


@finding_source("memory contention", 12, {"memory.contention": Better.LOWER})
def contention_findings(data: RunData) -> list[Finding]:
    found = []
    for c in contention_ratios(data):
        value, interval = ratio_of(c.ratio)
        contains_one = c.ratio.ci_lo <= 1.0 <= c.ratio.ci_hi
        found.append(
            Finding(
                kind="memory.contention",
                subject=f"{c.measure} at {format_size(c.bytes)}, other core {c.load}s",
                value=value,
                unit="ratio loaded / alone",
                method=RATIO_CI,
                sources=_contention_sources(c),
                verdict="no measurable contention" if contains_one else _how_much(c.slowdown),
                severity="info" if contains_one or c.slowdown <= 1 else "notice",
                **interval,
            )
        )
    return found


def _penalty_sources(matrix: NumaMatrix, p: Penalty) -> Sources:
    return from_results(
        matrix.cells[(p.cpu_node, p.mem_node)], matrix.cells[(p.cpu_node, p.reference)]
    )


@finding_source("numa", 13, {"memory.numa_penalty": Better.LOWER})
def numa_findings(data: RunData) -> list[Finding]:
    found = []
    for matrix in numa_matrices(data.measured("mem.numa_matrix")):
        for p in matrix.penalties():
            value, interval = ratio_of(p.factor)
            found.append(
                Finding(
                    kind="memory.numa_penalty",
                    subject=f"{METRICS[matrix.metric]}, cpu node {p.cpu_node} -> memory node "
                    f"{p.mem_node} (against node {p.reference})",
                    value=value,
                    unit="x worse than local",
                    method=RATIO_CI,
                    sources=_penalty_sources(matrix, p),
                    details={"cpu_node": p.cpu_node, "mem_node": p.mem_node},
                    **interval,
                )
            )
    return found


def _loaded_sources(c: LoadedCurve) -> Sources:
    peak = c.peak
    return from_results(peak.latency, peak.idle, peak.bandwidth)


@finding_source("loaded latency", 14, {"memory.loaded_latency": Better.LOWER})
def loaded_latency_findings(data: RunData) -> list[Finding]:
    found = []
    for c in loaded_curves(data):
        peak, saturated = c.peak, c.saturation
        value, interval = ratio_of(peak.slowdown)
        where = (
            f"latency doubled from {saturated.bandwidth.median / 1e9:.3g} GB/s injected"
            if saturated
            else f"latency never reached {SATURATION_RATIO:g}x idle"
        )
        found.append(
            Finding(
                kind="memory.loaded_latency",
                subject=c.label,
                value=value,
                unit="ratio loaded / idle",
                method=f"at the highest injected bandwidth measured; {RATIO_CI}",
                sources=_loaded_sources(c),
                verdict=where,
                severity="notice" if saturated else "info",
                details={
                    "idle_ns": c.idle.median,
                    "loaded_ns": peak.latency.median,
                    "injected_GBps": (peak.bandwidth.median or 0.0) / 1e9,
                    "saturation_GBps": saturated.bandwidth.median / 1e9 if saturated else None,
                },
                **interval,
            )
        )
    return found


# -- read back: each figure's finding, found by the results it comes from (the sources written
# above), for the report's sections and the terminal's tables ------------------------------------
def level_of(found: RunFindings, reference: Series, level: Level) -> Finding | None:
    """The memory.level finding of a detected level (not one of an undetected cache, which cites
    the whole curve)."""
    plateau = from_results(*_plateau(reference, level)).results
    return next(
        (
            f
            for f in of_kind(found.findings, "memory.level")
            if f.sources.results == plateau and f.value is not None
        ),
        None,
    )


def contention_of(found: RunFindings, c: ContentionRatio) -> Finding | None:
    """The memory.contention finding of a loaded / alone pair (None: the run has none)."""
    return found.of_sources("memory.contention").get(_contention_sources(c).results)


def penalty_of(found: RunFindings, matrix: NumaMatrix, p: Penalty) -> Finding | None:
    """The memory.numa_penalty finding of a remote cell against its local one."""
    return found.of_sources("memory.numa_penalty").get(_penalty_sources(matrix, p).results)


def worst_penalty(found: RunFindings, matrix: NumaMatrix) -> Finding | None:
    """The matrix's largest penalty as its findings state it (None: no remote cell found)."""
    penalties = [penalty_of(found, matrix, p) for p in matrix.penalties()]
    stated = [f for f in penalties if f is not None and f.value is not None]
    return max(stated, key=lambda f: f.value or 0.0, default=None)


def loaded_latency_of(found: RunFindings, c: LoadedCurve) -> Finding | None:
    """The memory.loaded_latency finding of a mix's curve."""
    return found.of_sources("memory.loaded_latency").get(_loaded_sources(c).results)


def worst_penalty_text(found: RunFindings, matrix: NumaMatrix) -> str | None:
    """'worst remote 1.50x [1.40x, 1.60x] (cpu node 0 -> memory node 1)', the terminal's NUMA
    line from the run's memory.numa_penalty findings."""
    worst = worst_penalty(found, matrix)
    if worst is None:
        return None
    d = worst.details
    where = (
        f"cpu node {d['cpu_node']} -> memory node {d['mem_node']}"
        if "cpu_node" in d  # stored before findings carried the nodes: the subject names them
        else worst.subject
    )
    return f"worst remote {figure_text(worst, lambda v: f'{v:.2f}x')} ({where})"


def ratio_text(finding: Finding | None, dim: bool = False) -> str:
    """A ratio finding's value and interval to 3 decimals: contention, NUMA penalty cells."""
    return figure_text(finding, lambda v: f"{v:.3f}", dim)


def saturation_text(found: RunFindings, c: LoadedCurve) -> str:
    """Where a mix's latency doubled, as its memory.loaded_latency finding says ('-': none)."""
    finding = loaded_latency_of(found, c)
    return "-" if finding is None else finding.verdict or "-"
