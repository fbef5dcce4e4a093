"""The memory part of the terminal summary: cache levels, peak bandwidth, contention (the levels'
latencies, the peaks, the ratios and their mark as the run's findings state them)."""

from __future__ import annotations

from rich.table import Table

from perfatlas.common.units import format_number, format_size
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import Finding
from perfatlas.findings.render import figure_text
from perfatlas.mem.analysis_levels import compare_with_hwloc
from perfatlas.mem.findings_memory import (
    contention_of,
    level_of,
    ratio_text,
)
from perfatlas.mem.series_memory import (
    bandwidth_peaks,
    bandwidth_series,
    contention_ratios,
    latency_series,
    levels_of,
    primary_latency,
)
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table


def _latency(level: Finding | None) -> str:
    """A level's latency as its memory.level finding states it ('-': none)."""
    return "-" if level is None or level.value is None else f"{level.value:.3g} ns"


def _capacity(level: Finding | None) -> str:
    """A level's estimated capacity as its memory.level finding states it ('-': none)."""
    if level is None:
        return "-"
    capacity = level.details.get("capacity_bytes")
    return format_size(capacity) if capacity else "beyond caches"


@summary_table("levels", 10, ("mem.latency",))
def levels_table(data: RunData) -> Table | None:
    reference = primary_latency(latency_series(data))
    if reference is None:
        return None
    table = titled_table(
        f"memory levels ({reference.label})",
        "level",
        "latency",
        "on the plateau",
        "capacity est.",
        "hwloc",
        right=(1, 3, 4),
    )
    found = run_findings(data)
    for row in compare_with_hwloc(levels_of(reference, data), data.caches):
        level, cache = row.level, row.cache
        hwloc = f"{cache.name} {format_size(cache.size_bytes)}" if cache else "-"
        if level is None:
            table.add_row(row.name, "[yellow]not detected[/]", "", "", hwloc)
            continue
        stated = level_of(found, reference, level)
        table.add_row(
            level.name,
            _latency(stated),
            f"{format_size(level.first_bytes)} – {format_size(level.last_bytes)}",
            _capacity(stated),
            hwloc,
        )
    return table


@summary_table("bandwidth", 20, ("mem.bandwidth",))
def bandwidth_table(data: RunData) -> Table | None:
    series = bandwidth_series(data)
    if not series:
        return None
    threads, rows = bandwidth_peaks(series)
    counts = [threads[0], threads[-1]] if len(threads) > 1 else threads
    table = titled_table(
        "peak bandwidth, GB/s (10^9 byte/s) [95 % CI]",
        "op",
        "stores",
        *[f"{t} thread{'s' * (t > 1)}" for t in counts],
        right=(2, 3),
    )
    found = run_findings(data)
    for row in rows:
        stores = (
            "nt" if row.variant.startswith("non-temporal") else row.variant.replace(" stores", "")
        )
        peaks = [found.of_result("memory.peak_bandwidth", row.peak.get(t)) for t in counts]
        table.add_row(row.op, stores, *[figure_text(f, format_number, dim=True) for f in peaks])
    return table


@summary_table("contention", 30, ("mem.contention",))
def contention_table(data: RunData) -> Table | None:
    ratios = contention_ratios(data)
    if not ratios:
        return None
    loads = sorted({c.load for c in ratios})
    table = titled_table(
        "contention: loaded / alone [95 % bootstrap CI]; red: slower with the load",
        "measure",
        "working set",
        *[f"other core {load}s" for load in loads],
        right=(1, 2, 3),
    )
    found = run_findings(data)
    cells: dict[tuple, dict[str, str]] = {}
    for c in ratios:
        finding = contention_of(found, c)  # the ratio and its mark as the run's findings say
        text = ratio_text(finding, dim=True)
        slower = finding is not None and finding.severity != "info"
        cells.setdefault((c.measure, c.bytes), {})[c.load] = f"[red]{text}[/]" if slower else text
    for (measure, n_bytes), by_load in cells.items():
        table.add_row(measure, format_size(n_bytes), *[by_load.get(load, "-") for load in loads])
    return table
