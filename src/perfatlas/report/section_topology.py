"""Topology from hwloc: packages, cores, PUs, NUMA nodes, caches, and an lstopo-like drawing."""

from __future__ import annotations

from markupsafe import Markup

from perfatlas.common.units import format_cpu_list, format_size, parse_cpu_list
from perfatlas.machine.topology import cache_rows
from perfatlas.report.blocks import Block, Facts, Html, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


def _pu_order(topology: dict) -> list[dict]:
    return sorted(
        topology.get("pus") or [],
        key=lambda p: (p.get("package", 0), p.get("core", 0), p["os_index"]),
    )


def _box(css: str, row: int, first: int, width: int, text: str) -> Markup:
    return Markup(
        '<div class="box {}" style="grid-row:{};grid-column:{} / span {}">{}</div>'
    ).format(css, row, first + 1, width, text)


def _runs(pus: list[dict], key) -> list[tuple[int, int, object]]:
    """(first column, width, key value) for each run of consecutive PUs sharing key."""
    runs: list[tuple[int, int, object]] = []
    for column, pu in enumerate(pus):
        value = key(pu)
        if runs and runs[-1][2] == value:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, value)
        else:
            runs.append((column, 1, value))
    return runs


def drawing(topology: dict) -> Markup | None:
    """Nested boxes as a CSS grid: one column per PU, every object spanning the PUs it serves.

    Cache instances are taken to cover consecutive PUs in hwloc order (as hwloc numbers them),
    sized by the PUs of one instance; a layout that does not tile the PUs is not drawn.
    """
    pus = _pu_order(topology)
    if not pus or len(pus) > 64:
        return None
    total = len(pus)
    memory = sum(n.get("memory_bytes") or 0 for n in topology.get("numa_nodes") or [])
    boxes = [_box("machine", 1, 0, total, f"Machine ({format_size(memory)})")]
    row = 2
    for first, width, package in _runs(pus, lambda p: p.get("package", 0)):
        boxes.append(_box("package", row, first, width, f"Package {package}"))
    row += 1
    node_memory = {n["os_index"]: n.get("memory_bytes") for n in topology.get("numa_nodes") or []}
    for first, width, node in _runs(pus, lambda p: p.get("numa_node", 0)):
        size = format_size(node_memory.get(node) or 0)
        text = f"NUMA node {node} ({size})" if node >= 0 else "no allowed local node"
        boxes.append(_box("numa", row, first, width, text))
    for cache in sorted(topology.get("caches") or [], key=lambda c: (-c["level"], c["type"])):
        per_instance = len(parse_cpu_list(str(cache.get("cpus", "0"))))
        count = cache.get("count") or max(1, total // per_instance)
        if per_instance * count != total:
            return None
        row += 1
        kind = {"data": "d", "instruction": "i"}.get(cache["type"], "")
        for i in range(count):
            boxes.append(
                _box(
                    "cache",
                    row,
                    i * per_instance,
                    per_instance,
                    f"L{cache['level']}{kind} {format_size(cache['size_bytes'])}",
                )
            )
    row += 1
    for first, width, core in _runs(pus, lambda p: (p.get("package", 0), p.get("core", 0))):
        boxes.append(_box("core", row, first, width, f"Core {core[1]}"))
    row += 1
    for column, pu in enumerate(pus):
        boxes.append(_box("pu", row, column, 1, f"PU {pu['os_index']}"))
    grid = f"grid-template-columns: repeat({total}, minmax(78px, 1fr))"
    return Markup('<div class="topo" style="{}">{}</div>').format(grid, Markup("").join(boxes))


def _numa_rows(topology: dict) -> list[list[str]]:
    distances = topology.get("numa_distances") or []
    rows = []
    for i, node in enumerate(topology.get("numa_nodes") or []):
        row = distances[i] if i < len(distances) else []
        kind = node.get("subtype") or ("memory only" if node.get("memory_only") else "")
        if node.get("memory_only") and node.get("subtype"):
            kind += ", memory only"
        cache = node.get("memory_side_cache")
        rows.append(
            [
                str(node["os_index"]),
                format_size(node.get("memory_bytes") or 0),
                "-" if node.get("memory_only") else str(node.get("cpus", "?")),
                kind or "-",
                format_size(cache["size_bytes"]) if cache else "-",
                " ".join("-" if d is None else str(d) for d in row) or "-",
            ]
        )
    return rows


def _kind_rows(topology: dict) -> list[list[str]]:
    return [
        [
            str(kind.get("efficiency", "?")),
            str(kind.get("core_type") or "-"),
            str(kind.get("cpus", "?")),
            f"{kind['max_mhz']} MHz" if kind.get("max_mhz") else "-",
        ]
        for kind in topology.get("cpu_kinds") or []
    ]


@section("topology", "Topology (hwloc)", order=20)
def topology_section(data: RunData) -> list[Block]:
    topology = data.run["topology"]
    pus = topology.get("pus") or []
    huge = ", ".join(format_size(s) for s in topology.get("huge_page_sizes") or []) or "none"
    blocks: list[Block] = [
        Facts(
            [
                ("CPU model", topology.get("cpu_model", "?")),
                ("packages", str(topology.get("packages", "?"))),
                ("cores", str(topology.get("cores", "?"))),
                (
                    "PUs (hardware threads)",
                    f"{len(pus)}: {format_cpu_list([p['os_index'] for p in pus])}",
                ),
                ("NUMA nodes", str(len(topology.get("numa_nodes") or []))),
                ("huge page sizes", huge),
                ("hwloc", str(topology.get("hwloc_version", "?"))),
                (
                    "source",
                    "this machine"
                    if topology.get("this_system", True)
                    else "an hwloc XML file (HWLOC_XMLFILE), not the machine that ran this",
                ),
            ]
        ),
    ]
    picture = drawing(topology)
    if picture is not None:
        blocks.append(
            Html(
                picture,
                "Drawn from the hwloc document: each box spans the PUs it "
                "serves (cache sizes are per instance).",
            )
        )
    blocks.append(
        Table(
            [
                "level",
                "type",
                "size per instance",
                "line",
                "instances",
                "PUs of the first instance",
            ],
            cache_rows(topology),
            caption="Caches",
            numeric=(2, 3, 4),
        )
    )
    blocks.append(
        Table(
            [
                "node",
                "memory",
                "PUs",
                "kind",
                "memory-side cache",
                "distances (hwloc, 10 = local)",
            ],
            _numa_rows(topology),
            caption="NUMA nodes (memory-only nodes, such as CXL, HBM or GPU memory, run no "
            "thread; '-' is a distance the OS does not report)",
            numeric=(1, 4),
        )
    )
    if len(topology.get("cpu_kinds") or []) > 1:
        blocks.append(
            Table(
                ["efficiency (hwloc)", "core type", "PUs", "max frequency"],
                _kind_rows(topology),
                caption="CPU kinds of a hybrid processor (higher efficiency: faster cores)",
            )
        )
    return blocks
