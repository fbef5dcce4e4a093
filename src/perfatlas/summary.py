"""Terminal summaries: the compact result of a run (after `perfatlas run`) and the topology."""

from __future__ import annotations

from rich.table import Table

from perfatlas.comm_summary import comm_tables
from perfatlas.levels import compare_with_hwloc, hwloc_caches
from perfatlas.machine import Machine, cache_rows
from perfatlas.noise_analysis import GRANULARITIES_NS, PROCESSES
from perfatlas.numa_analysis import numa_matrices, summary_line
from perfatlas.report.common import number
from perfatlas.report.data import RunData, params_label, warning_tally
from perfatlas.report.memory import (
    bandwidth_peaks,
    bandwidth_series,
    contention_ratios,
    latency_series,
    levels_of,
    primary_latency,
)
from perfatlas.report.noise import noise_measurements
from perfatlas.store import Result, Store
from perfatlas.units import format_cpu_list, format_size
from perfatlas.views import console, titled_table

GB = 1e9


def _ci(result: Result | None, scale: float = 1.0) -> str:
    if result is None or result.median is None:
        return "-"
    m, lo, hi = (number(v * scale) for v in (result.median, result.ci_lo, result.ci_hi))
    return f"{m} [dim][{lo}, {hi}][/]"


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
    for row in compare_with_hwloc(levels_of(reference, data), data.caches):
        level, cache = row.level, row.cache
        hwloc = f"{cache.name} {format_size(cache.size_bytes)}" if cache else "-"
        if level is None:
            table.add_row(row.name, "[yellow]not detected[/]", "", "", hwloc)
            continue
        capacity = format_size(level.capacity_bytes) if level.capacity_bytes else "beyond caches"
        table.add_row(
            level.name,
            f"{level.latency_ns:.3g} ns",
            f"{format_size(level.first_bytes)} – {format_size(level.last_bytes)}",
            capacity,
            hwloc,
        )
    return table


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
    for row in rows:
        stores = (
            "nt" if row.variant.startswith("non-temporal") else row.variant.replace(" stores", "")
        )
        table.add_row(row.op, stores, *[_ci(row.peak.get(t), 1 / GB) for t in counts])
    return table


def contention_table(data: RunData) -> Table | None:
    ratios = contention_ratios(data)
    if not ratios:
        return None
    loads = sorted({c.load for c in ratios})
    table = titled_table(
        "contention: loaded / alone [95 % bootstrap CI]",
        "measure",
        "working set",
        *[f"other core {load}s" for load in loads],
        right=(1, 2, 3),
    )
    cells: dict[tuple, dict[str, str]] = {}
    for c in ratios:
        mark = "" if c.ratio.ci_lo <= 1.0 <= c.ratio.ci_hi else ("[red]" if c.slowdown > 1 else "")
        text = f"{mark}{c.ratio.median:.3f}{'[/]' if mark else ''} [dim][{c.ratio.ci_lo:.3f}, {c.ratio.ci_hi:.3f}][/]"
        cells.setdefault((c.measure, c.bytes), {})[c.load] = text
    for (measure, n_bytes), by_load in cells.items():
        table.add_row(measure, format_size(n_bytes), *[by_load.get(load, "-") for load in loads])
    return table


def noise_table(data: RunData) -> Table | None:
    measurements = noise_measurements(data)
    if not measurements:
        return None
    widest = max(PROCESSES)
    table = titled_table(
        f"OS noise (BSP: expected slowdown of supersteps of g on P={widest:.0e} processes)",
        "measurement",
        "PU",
        "slowdown [95 % CI]",
        "p99 lost",
        "largest",
        "top line (share)",
        *[f"BSP {g / 1e6:g} ms" for g in GRANULARITIES_NS],
        right=(2, 3, 4, 6, 7),
    )
    for m in measurements:
        bsp = {curve.granularity_ns: curve for curve in m.bsp}
        at_scale = []
        for g in GRANULARITIES_NS:
            curve = bsp.get(g)
            if curve is None:
                at_scale.append("-")
                continue
            bound = "≥ " if widest > curve.independent_windows else ""  # beyond the tail seen
            at_scale.append(f"{bound}{number(100 * curve.slowdown[-1])} %")
        for i, core in enumerate(m.cores):
            s, line = core.slowdown, core.top_line
            top = f"{line.frequency_hz:.0f} Hz ({100 * line.share:.0f} %)" if line else "-"
            table.add_row(
                m.label if i == 0 else "",
                str(core.cpu),
                f"{number(100 * s.median)} % [dim][{number(100 * s.ci_lo)}, {number(100 * s.ci_hi)}][/]",
                f"{number(core.detours.percentiles_ns[99.0] / 1e3)} us",
                f"{number(core.detours.largest_ns / 1e3)} us",
                top,
                *(at_scale if i == 0 else [""] * len(at_scale)),
            )
    return table


def print_summary(store: Store, run_id: int) -> None:
    """What the run found, in a screenful: levels, peaks, contention, warnings, unmeasurable."""
    data = RunData.load(store, run_id)
    run = data.run
    status = run["status"] if run["status"] == "complete" else f"[red]{run['status']}[/]"
    console.print(
        f"[bold]run {run_id}[/] on {run['host']}: {status}, "
        f"{sum(1 for r in data.results if r.samples)} results"
    )
    llc = (run.get("context") or {}).get("llc") or {}
    if llc.get("effective_bytes"):  # perfatlas.cache_probe
        chosen = "effective" if llc.get("used") == "probe" else "hwloc's"
        console.print(
            f"last-level cache: hwloc {format_size(llc['hwloc_bytes'])}, effective "
            f"{format_size(llc['effective_bytes'])}; sizes relative to the LLC follow {chosen}"
        )
    for table in (
        levels_table(data),
        bandwidth_table(data),
        contention_table(data),
        noise_table(data),
        *comm_tables(data),
    ):
        if table is not None:
            console.print(table)
    numa = summary_line(numa_matrices(data.measured("mem.numa_matrix")))
    if numa:
        console.print(numa)
    warned = [r for r in data.results if r.warnings]
    if warned:
        kinds = warning_tally(warned)
        tally = ", ".join(f"{n} {kind.value}" for kind, n in kinds.most_common())
        console.print(
            f"[yellow]{sum(kinds.values())} warning(s)[/] on {len(warned)} result(s): "
            f"{tally}; 'perfatlas show {run_id}' or the report lists each with its fix"
        )
    for r in data.unmeasurable:
        console.print(
            f"[yellow]not measurable here[/] {r.benchmark} {params_label(r)}: {r.not_measurable}"
        )


def print_topology(machine: Machine) -> None:
    """Packages, cores, PUs, NUMA nodes with memory, and caches, as hwloc sees them."""
    topo = machine.topology
    pus = machine.pus
    console.print(
        f"[bold]{topo.get('cpu_model', '?')}[/]: {topo.get('packages', '?')} package(s), "
        f"{topo.get('cores', '?')} cores, {len(pus)} PUs ({format_cpu_list(pus)}), "
        f"hwloc {topo.get('hwloc_version', '?')}"
    )
    if not machine.this_system:
        console.print("topology from HWLOC_XMLFILE, not this system: plans and reports only")
    nodes = titled_table(
        "NUMA nodes",
        "node",
        "memory",
        "PUs",
        "kind",
        "memory-side cache",
        "distances",
        right=(1,),
    )
    distances = topo.get("numa_distances") or []
    for i, node in enumerate(topo.get("numa_nodes") or []):
        row = distances[i] if i < len(distances) else []
        cache = node.get("memory_side_cache")
        kind = ", ".join(
            word
            for word in (node.get("subtype"), "memory only" if node.get("memory_only") else None)
            if word
        )
        nodes.add_row(
            str(node["os_index"]),
            format_size(node.get("memory_bytes") or 0),
            "-" if node.get("memory_only") else str(node.get("cpus", "?")),
            kind or "-",
            format_size(cache["size_bytes"]) if cache else "-",
            " ".join("-" if d is None else str(d) for d in row),
        )
    console.print(nodes)
    kinds = topo.get("cpu_kinds") or []
    if len(kinds) > 1:
        table = titled_table("CPU kinds (hybrid)", "efficiency", "core type", "PUs", "max MHz")
        for kind in kinds:
            table.add_row(
                str(kind["efficiency"]),
                str(kind.get("core_type") or "-"),
                kind["cpus"],
                str(kind.get("max_mhz") or "-"),
            )
        console.print(table)
    caches = titled_table(
        "caches", "level", "type", "size", "line", "instances", "PUs per instance", right=(2, 3, 4)
    )
    for row in cache_rows(topo):
        caches.add_row(*row)
    console.print(caches)
    cores = titled_table("PUs", "PU", "core", "package", "NUMA node", right=(0, 1, 2, 3))
    for pu in topo["pus"]:
        cores.add_row(
            str(pu["os_index"]),
            str(pu.get("core", "?")),
            str(pu.get("package", "?")),
            str(pu["numa_node"]) if pu.get("numa_node", 0) >= 0 else "none allowed",
        )
    console.print(cores)
    huge = ", ".join(format_size(s) for s in topo.get("huge_page_sizes") or []) or "none"
    console.print(
        f"huge page sizes: {huge}; data caches seen by one thread: "
        + ", ".join(f"{c.name} {format_size(c.size_bytes)}" for c in hwloc_caches(topo))
    )
