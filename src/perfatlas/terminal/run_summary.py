"""Terminal summaries: the compact result of a run (after `perfatlas run`: the tables registered
by the summary_*.py modules of the domain packages) and the topology."""

from __future__ import annotations

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.units import format_cpu_list, format_size
from perfatlas.findings.compute import run_findings
from perfatlas.machine.caches import hwloc_caches
from perfatlas.machine.topology import Machine, cache_rows
from perfatlas.store.run_data import RunData, warning_tally
from perfatlas.terminal.run_views import console, titled_table
from perfatlas.terminal.summary_registry import all_tables


def print_summary(data: RunData) -> None:
    """What the run found, in a screenful: levels, peaks, contention, warnings, unmeasurable,
    and how many findings (perfatlas.findings) it stored."""
    run, run_id = data.run, data.run["id"]
    status = run["status"] if run["status"] == "complete" else f"[red]{run['status']}[/]"
    console.print(
        f"[bold]run {run_id}[/] on {run['host']}: {status}, "
        f"{sum(1 for r in data.results if r.samples)} results"
    )
    llc = (run.get("context") or {}).get("llc") or {}
    if llc.get("effective_bytes"):  # perfatlas.mem.cache_probe
        chosen = "effective" if llc.get("used") == "probe" else "hwloc's"
        console.print(
            f"last-level cache: hwloc {format_size(llc['hwloc_bytes'])}, effective "
            f"{format_size(llc['effective_bytes'])}; sizes relative to the LLC follow {chosen}"
        )
    measured = {r.benchmark for r in data.results}
    for table in all_tables():  # registered with their benchmarks (summary_*.py)
        if measured.intersection(table.benchmarks):
            shown = table.build(data)
            if shown is not None:
                console.print(shown)
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
    print_findings_count(data)


def print_findings_count(data: RunData) -> None:
    """'N finding(s), M worth a look: ...', where the run has findings: the last line of the
    summary after `perfatlas run`, and what sweep, scenario and parbench base say after storing
    a run."""
    found = run_findings(data).findings
    if found:
        run_id = data.run["id"]
        attention = sum(1 for f in found if f.severity != "info")
        console.print(
            f"{len(found)} finding(s), {attention} worth a look: 'perfatlas show {run_id}' lists "
            f"them, 'perfatlas export {run_id} --format findings-csv' writes them"
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
