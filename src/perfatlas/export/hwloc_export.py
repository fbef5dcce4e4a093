"""A calibrated topology (perfatlas export RUN --format hwloc): the run's hwloc topology with the
memory latency and bandwidth it measured as hwloc memory attributes (memattrs, hwloc >= 2.3).

hwloc's own memattrs come from firmware (ACPI HMAT) where it has any; these are measured. Each
figure is one stored result's median, in hwloc's units (hwloc/memattrs.h): Latency in ns,
Bandwidth, ReadBandwidth and WriteBandwidth in MiB/s, rounded to the integers hwloc stores. The
initiator is the cpuset of the PUs the figure was measured from (the document's placement), the
target the NUMA node holding the memory (move_pages' read-back where there is one). Which
results (docs/guide/calibrated-topology.md):
- mem.latency (one thread, or each PU of the two-thread method): Latency, at the largest working
  set that is memory's: at least MEMORY_FACTOR times the last-level cache (analysis_levels' test
  for the memory plateau), the larger of hwloc's and the probed effective LLC;
- mem.bandwidth at such a working set: op=triad as Bandwidth (STREAM's headline figure, reads and
  writes 2:1), op=read as ReadBandwidth, op=write as WriteBandwidth; normal stores before
  non-temporal ones, 4 KiB pages before huge pages;
- mem.numa_matrix, every CPU node to every memory node: Latency and (a read kernel) ReadBandwidth,
  where mem.latency or mem.bandwidth gave none for the same initiator and target.
Where each value came from is written beside it: a PerfatlasMeasured info on the target NUMA node,
and PerfatlasRun (and friends) on the root object.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from perfatlas import __version__
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list, format_size
from perfatlas.launch.native import run_json
from perfatlas.machine.caches import hwloc_caches
from perfatlas.mem.analysis_levels import MEMORY_FACTOR
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

MIB = 2**20
INFO_CHARS = 1000  # an info value's length at most
HELD = 0.9  # a node holding this fraction of the pages is the memory's node
BANDWIDTH_OPS = {"triad": "Bandwidth", "read": "ReadBandwidth", "write": "WriteBandwidth"}
MATRIX_ATTRIBUTES = {"latency_ns": "Latency", "bandwidth_Bps": "ReadBandwidth"}
UNITS = {"Latency": "ns", "Bandwidth": "MiB/s", "ReadBandwidth": "MiB/s", "WriteBandwidth": "MiB/s"}


@dataclass(frozen=True)
class Figure:
    """One memory attribute value: from the PUs `initiator` to NUMA node `target`."""

    attribute: str  # hwloc memattr name
    initiator: tuple[int, ...]  # OS indices of the PUs that measured it
    target: int  # OS index of the NUMA node
    value: int  # in hwloc's unit (UNITS)
    result: Result

    @property
    def key(self) -> tuple:
        return (self.attribute, self.initiator, self.target)

    def provenance(self, run_id: int) -> str:
        r = self.result
        shown = ", ".join(
            f"{k}={format_size(v) if k.endswith('bytes') and isinstance(v, int) else v}"
            for k, v in sorted(r.params.items())
            if k not in ("samples", "min_sample_time", "seed")
        )
        return (
            f"{self.attribute}={self.value} {UNITS[self.attribute]} from cpus "
            f"{format_cpu_list(list(self.initiator))}: median of {len(r.samples)} samples of "
            f"{r.benchmark} {r.metric} (run {run_id}, result {r.id}; {shown})"
        )


def to_hwloc_unit(attribute: str, median: float) -> int:
    """ns stay ns; byte/s become MiB/s (hwloc's bandwidth unit); rounded to hwloc's integers."""
    return round(median if attribute == "Latency" else median / MIB)


def measured_cpus(result: Result) -> tuple[int, ...]:
    """The PUs that measured: mem.latency's measuring PU (`cpu`: the two-thread method writes
    one document per PU), else the threads' PUs as the executable placed them, else `cpus`."""
    if isinstance(result.params.get("cpu"), int):
        return (result.params["cpu"],)
    threads = (result.document.get("placement") or {}).get("threads") or []
    cpus = [t.get("cpu_requested") for t in threads]
    if cpus and all(isinstance(c, int) for c in cpus):
        return tuple(sorted(set(cpus)))
    asked = result.params.get("cpus") or []
    return tuple(sorted(set(asked))) if all(isinstance(c, int) for c in asked) else ()


def memory_node(result: Result, cpus: tuple[int, ...], node_of: dict[int, int]) -> int | None:
    """The NUMA node holding the memory: where move_pages found at least HELD of its pages, else
    (no read-back) node=K, or under first touch the local node of the PU that touched it (the
    owner of the two-thread method, else the threads' common node); None where it is unclear."""
    placement = result.document.get("placement") or {}
    pages = placement.get("pages_on_node")
    if isinstance(pages, dict) and pages:
        node, fraction = max(pages.items(), key=lambda item: item[1])
        held = isinstance(fraction, int | float) and fraction >= HELD and str(node).isdigit()
        return int(node) if held else None
    node = str(result.params.get("node", "local"))
    if node.isdigit():
        return int(node)
    owner = result.params.get("owner")
    touched = {node_of.get(owner)} if isinstance(owner, int) else {node_of.get(c) for c in cpus}
    return touched.pop() if node == "local" and len(touched) == 1 and None not in touched else None


def _memory_level(result: Result, largest_cache: int) -> bool:
    return int(result.params.get("bytes") or 0) >= MEMORY_FACTOR * largest_cache


def _preference(result: Result) -> tuple:
    """Among results for one (attribute, initiator, target): one thread alone before the
    two-thread method, the page chain, normal stores and 4 KiB pages first, then the largest
    working set."""
    p = result.params
    return (
        len(p.get("cpus") or []) == 2,
        p.get("chain", "page") != "page",
        p.get("store", "normal") != "normal",
        int(p.get("page") or 4096) != 4096,
        -int(p.get("bytes") or 0),
    )


def last_level_cache(run: dict) -> int:
    """The larger of hwloc's largest cache and the effective LLC the run probed: a working set
    twice it is memory's under either view (a VM's probe can find far less than hwloc's L3 while
    much of it still serves, and the reverse)."""
    llc = (run.get("context") or {}).get("llc") or {}
    hwloc = max((c.size_bytes for c in hwloc_caches(run["topology"])), default=0)
    return max(hwloc, int(llc.get("effective_bytes") or 0))


def memory_figures(run: dict, results: list[Result]) -> list[Figure]:
    """Every memory attribute value the results give (module docstring: which and why)."""
    node_of = {pu["os_index"]: pu["numa_node"] for pu in run["topology"].get("pus") or []}
    largest = last_level_cache(run)
    chosen: dict[tuple, tuple[tuple, Figure]] = {}
    for r in results:
        if not r.samples or r.median is None or r.not_measurable:
            continue
        attribute = None
        if r.benchmark == "mem.latency" and r.metric == "latency_ns":
            attribute = "Latency" if _memory_level(r, largest) else None
        elif r.benchmark == "mem.bandwidth" and r.metric == "bandwidth_Bps":
            attribute = BANDWIDTH_OPS.get(r.params.get("op")) if _memory_level(r, largest) else None
        if attribute is None:
            continue
        cpus = measured_cpus(r)
        target = memory_node(r, cpus, node_of)
        if not cpus or target is None:
            continue
        figure = Figure(attribute, cpus, target, to_hwloc_unit(attribute, r.median), r)
        if figure.key not in chosen or _preference(r) < chosen[figure.key][0]:
            chosen[figure.key] = (_preference(r), figure)
    for r in results:  # the matrix fills what the dedicated benchmarks left open
        if r.benchmark != "mem.numa_matrix" or r.metric not in MATRIX_ATTRIBUTES:
            continue
        if not r.samples or r.median is None or r.not_measurable:
            continue
        attribute, node = MATRIX_ATTRIBUTES[r.metric], r.params.get("mem_node")
        if not isinstance(node, int):
            continue
        figure = Figure(attribute, measured_cpus(r), node, to_hwloc_unit(attribute, r.median), r)
        if figure.initiator and figure.key not in chosen:
            chosen[figure.key] = ((), figure)
    return sorted((f for _, f in chosen.values()), key=lambda f: f.key)


def values_lines(figures: list[Figure], run: dict) -> list[str]:
    """pa-hwloc-export's values file (native/topology/hwloc_export.c): the values, then where
    each came from."""
    lines = [
        "\t".join(
            ("value", f.attribute, format_cpu_list(list(f.initiator)), str(f.target), str(f.value))
        )
        for f in figures
    ]
    root = {
        "PerfatlasRun": str(run["id"]),
        "PerfatlasRunStarted": str(run["started"]),
        "PerfatlasFingerprint": str(run["fingerprint"]),
        "PerfatlasVersion": __version__,
        "PerfatlasMemattrs": "Latency in ns, Bandwidth/ReadBandwidth/WriteBandwidth in MiB/s: "
        "medians measured by perfatlas (each node's PerfatlasMeasured infos say which)",
    }
    lines += [f"info\troot\t{name}\t{_one_line(value)}" for name, value in root.items()]
    lines += [
        f"info\t{f.target}\tPerfatlasMeasured\t{_one_line(f.provenance(run['id']))}"
        for f in figures
    ]
    return lines


def _one_line(text: str) -> str:
    """An info value on one line, and bounded (pa-hwloc-export reads lines of up to 4 KiB)."""
    return " ".join(text.split())[:INFO_CHARS]


def _run_topology_xml(store: Store, run: dict) -> str:
    """The hwloc XML stored with the run; for a run stored before perfatlas kept it, this
    machine's, if it is the machine the run measured (same fingerprint), else a refusal."""
    from perfatlas.machine.topology import Machine

    xml = store.topology_xml(run["id"])
    if xml:
        return xml
    machine = Machine.detect()
    if machine.fingerprint != run["fingerprint"]:
        raise UserError(
            f"run {run['id']} was stored without its hwloc topology (before perfatlas kept it) "
            "and this is not the machine it measured: export it there, or measure again"
        )
    xml = machine.hwloc_xml()
    if xml is None:
        raise UserError(
            f"run {run['id']} was stored without its hwloc topology and pa-hwloc-export cannot "
            "export this machine's: rebuild perfatlas ('make install')"
        )
    print(
        f"perfatlas: note: run {run['id']} was stored without its hwloc topology; using this "
        "machine's, which has the run's fingerprint",
        file=sys.stderr,
    )
    return xml


def write_calibrated_topology(store: Store, data: RunData, output: Path) -> list[Figure]:
    """Write the run's topology with its measured memory attributes to `output` (hwloc XML);
    `store` holds its hwloc XML."""
    run, run_id = data.run, data.run["id"]
    figures = memory_figures(run, data.results)
    if not figures:
        raise UserError(
            f"run {run_id} has no memory latency or bandwidth to write: measure mem.latency and "
            f"mem.bandwidth (op=triad, read or write) at a working set of at least {MEMORY_FACTOR}x "
            "the last-level cache, or mem.numa_matrix, first"
        )
    xml = _run_topology_xml(store, run)
    with tempfile.TemporaryDirectory(prefix="perfatlas-hwloc-") as folder:
        topology, values = Path(folder) / "topology.xml", Path(folder) / "values.tsv"
        topology.write_text(xml)
        values.write_text("\n".join(values_lines(figures, run)) + "\n")
        run_json(
            "pa-hwloc-export",
            [f"values={values}", f"xml={output}"],
            env={"HWLOC_XMLFILE": str(topology)},
        )
    return figures
