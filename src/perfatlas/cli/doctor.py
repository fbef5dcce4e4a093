"""`perfatlas doctor`: what this machine lets perfatlas measure, and why not where it cannot."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import shutil
from dataclasses import dataclass

from rich.table import Table

from perfatlas.common.units import format_cpu_list, format_size
from perfatlas.launch.isa import (
    PORTABLE_LEVEL,
    WIDE_VECTOR_NAMES,
    WIDE_VECTORS,
    architecture,
    emulated,
)
from perfatlas.machine.topology import Machine, _command_version, _read, _selected
from perfatlas.terminal.run_views import console

OK, LIMITED, MISSING = "ok", "limited", "not available"

# perf_event_open(2) syscall numbers; hardware counters are probed by opening a cycle counter.
_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "riscv64": 241}


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str


def hardware_counters() -> Check:
    number = _PERF_EVENT_OPEN.get(platform.machine())
    paranoid = _read("/proc/sys/kernel/perf_event_paranoid")
    if number is None:
        return Check(
            "hardware counters", MISSING, f"perf_event_open probe unknown on {platform.machine()}"
        )
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    attr = (ctypes.c_uint8 * 128)()
    ctypes.c_uint32.from_buffer(attr, 0).value = 0  # PERF_TYPE_HARDWARE
    ctypes.c_uint32.from_buffer(attr, 4).value = 128  # attr size
    ctypes.c_uint64.from_buffer(attr, 8).value = 0  # PERF_COUNT_HW_CPU_CYCLES
    ctypes.c_uint64.from_buffer(attr, 40).value = 1 | 1 << 5 | 1 << 6  # disabled, no kernel/hv
    fd = libc.syscall(number, ctypes.byref(attr), 0, -1, -1, 0)
    if fd >= 0:
        os.close(fd)
        return Check(
            "hardware counters", OK, f"perf_event cycles counter opens (paranoid={paranoid})"
        )
    code = ctypes.get_errno()
    if code in (errno.EACCES, errno.EPERM):
        why = f"perf_event_paranoid={paranoid} forbids it; lower it or run as root"
    elif code in (errno.ENOENT, errno.EOPNOTSUPP, errno.ENODEV):
        why = "the CPU or hypervisor exposes no performance monitoring unit (a VM without vPMU?)"
    else:
        why = f"perf_event_open failed: {os.strerror(code)}"
    return Check("hardware counters", MISSING, why)


def numa(machine: Machine) -> Check:
    nodes = [n for n in machine.topology["numa_nodes"] if not n.get("memory_only")]
    listing = ", ".join(
        f"node {n['os_index']}: cpus {n.get('cpus', '?')}, "
        f"{format_size(n.get('memory_bytes') or 0)}"
        for n in nodes
    )
    homeless = [pu["os_index"] for pu in machine.topology["pus"] if pu["numa_node"] < 0]
    if homeless:  # a restricted cpuset can leave PUs whose node is not allowed
        listing += (
            f"; PUs {format_cpu_list(homeless)} have no allowed local node (every access "
            "from them is remote)"
        )
    if len(nodes) < 2:
        return Check(
            "NUMA",
            LIMITED,
            f"1 node with PUs ({listing}): remote NUMA latency and bandwidth are "
            "not measurable here; local policies are applied and verified",
        )
    return Check("NUMA", OK, f"{len(nodes)} nodes with PUs: {listing}")


def memory_only_nodes(machine: Machine) -> list[Check]:
    """CXL expanders, HBM in flat mode, GPU memory: measurable with node=K, never given
    threads, never the 'remote' node; memory-side caches in front of a node."""
    checks = []
    for node in machine.memory_only_nodes:
        kind = node.get("subtype") or "memory without PUs"
        checks.append(
            Check(
                f"memory-only node {node['os_index']}",
                OK,
                f"{kind}, {format_size(node.get('memory_bytes') or 0)}: no thread runs there; "
                f"measure it with node={node['os_index']} (mem.latency, mem.bandwidth)",
            )
        )
    for node in machine.topology["numa_nodes"]:
        cache = node.get("memory_side_cache")
        if cache:
            checks.append(
                Check(
                    f"memory-side cache of node {node['os_index']}",
                    LIMITED,
                    f"{format_size(cache['size_bytes'])} in front of the node: working sets "
                    "below it measure the cache, not the node's memory; size sweeps beyond it",
                )
            )
    return checks


def cpu_kinds(machine: Machine) -> Check | None:
    """Hybrid processors (hwloc CPU kinds): figures differ by kind of core."""
    kinds = machine.topology.get("cpu_kinds") or []
    if len(kinds) < 2:
        return None
    listing = ", ".join(
        f"{k.get('core_type') or 'kind'} (efficiency {k['efficiency']}): cpus {k['cpus']}"
        for k in kinds
    )
    return Check(
        "CPU kinds",
        LIMITED,
        f"hybrid processor, {len(kinds)} kinds: {listing}; pin with cpus= to compare one kind",
    )


def topology_source(machine: Machine) -> Check:
    if machine.this_system:
        return Check("topology", OK, "this machine, as hwloc reads it")
    return Check(
        "topology",
        LIMITED,
        f"from HWLOC_XMLFILE={os.environ.get('HWLOC_XMLFILE', '?')}, not this system: plans "
        "(--plan) and reports only; the checks below describe the machine running this",
    )


def huge_pages() -> list[Check]:
    thp = _selected(_read("/sys/kernel/mm/transparent_hugepage/enabled"))
    total = _read("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages") or "0"
    free = _read("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") or "0"
    thp_check = Check(
        "transparent huge pages",
        OK if thp in ("always", "madvise") else LIMITED,
        f"THP '{thp}': page=2MiB uses madvise(MADV_HUGEPAGE) and verifies the backing"
        if thp in ("always", "madvise")
        else f"THP '{thp}': 2 MiB pages only from hugetlbfs",
    )
    hugetlb = Check(
        "hugetlbfs 2 MiB pages",
        OK if int(free) > 0 else LIMITED,
        f"{free} of {total} free"
        + ("" if int(free) > 0 else "; reserve with 'echo N > /proc/sys/vm/nr_hugepages'"),
    )
    return [thp_check, hugetlb]


def frequency() -> Check:
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if governor is None:
        return Check(
            "frequency governor",
            LIMITED,
            "no cpufreq interface: the frequency is not "
            "visible (VM or firmware control); cycles cannot be derived from time",
        )
    status = OK if governor == "performance" else LIMITED
    hint = "" if status == OK else "; for stable figures: cpupower frequency-set -g performance"
    return Check("frequency governor", status, f"{governor}{hint}")


def timer(machine: Machine) -> Check:
    info = machine.topology.get("timer") or {}
    clocksource = _read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    if not info:
        return Check(
            "timer", LIMITED, f"kernel clocksource {clocksource}; native timer not reported"
        )
    return Check(
        "timer",
        OK,
        f"{info.get('source')}, resolution {info.get('resolution_ns', 0):.1f} ns "
        f"(kernel clocksource {clocksource})",
    )


def native_build(machine: Machine) -> Check:
    """What the native executables were compiled for (pa-topology's "build" block).

    That pa-topology ran at all says this CPU has every extension listed: each executable
    checks them at start (native/common/isa_guard.c) and refuses in one sentence otherwise."""
    build = machine.topology.get("build") or {}
    if not build.get("arch"):
        return Check(
            "native build",
            LIMITED,
            "the executables do not say what they were built for (built before perfatlas "
            "recorded it): rebuild with make install",
        )
    isa = build.get("isa") or []
    arch = architecture()
    prefixes = WIDE_VECTORS.get(arch, WIDE_VECTORS["x86_64"])
    wide = [name for name in isa if name.startswith(prefixes)]
    uses = (
        f"may use {', '.join(wide)}"
        if wide
        else f"no {WIDE_VECTOR_NAMES.get(arch, WIDE_VECTOR_NAMES['x86_64'])}"
    )
    detail = (
        f"built for {build['arch']} ({build.get('cflags', '?')}, {build.get('compiler', '?')}): "
        f"{uses}; this CPU has all {len(isa)} extensions of the build"
    )
    if build["arch"].startswith("native"):
        detail += (
            "; other CPUs may lack them (a cluster of several CPU types: make install "
            f"PERFATLAS_ARCH={PORTABLE_LEVEL.get(arch, PORTABLE_LEVEL['x86_64'])}, or one build "
            "per type, docs/portability.md)"
        )
    return Check("native build", OK, detail)


def build_part_checks() -> list[Check]:
    """The optional parts of this build (perfatlas.launch.build_parts), each with the benchmarks that
    need it: where one was not built, theirs are stored as "not built here"."""
    from perfatlas.benchmarks import all_benchmarks
    from perfatlas.launch.build_parts import build_parts

    parts = build_parts()
    if parts is None:
        return [
            Check(
                "build parts",
                LIMITED,
                "this build does not list its optional parts (built before perfatlas recorded "
                "them): rebuild with make install",
            )
        ]
    benchmarks = all_benchmarks()
    checks = []
    for part in parts.values():
        needing = [b.name for b in benchmarks if part.name in b.built_with]
        serves = f" ({', '.join(needing)})" if needing else ""
        if part.built:
            checks.append(Check(f"built with {part.name}", OK, f"{part.text}{serves}"))
        else:
            stored = f"; stored as not built here: {', '.join(needing)}" if needing else ""
            checks.append(Check(f"built with {part.name}", LIMITED, f"no: {part.text}{stored}"))
    return checks


def affinity(machine: Machine) -> Check:
    allowed = sorted(os.sched_getaffinity(0))
    if set(allowed) != set(machine.pus):
        return Check(
            "CPU affinity",
            LIMITED,
            f"this process may use PUs {format_cpu_list(allowed)} "
            f"of {format_cpu_list(machine.pus)} (cgroup/cpuset or taskset)",
        )
    return Check(
        "CPU affinity",
        OK,
        f"all PUs {format_cpu_list(allowed)} usable; pinning is "
        "applied with hwloc and read back per thread",
    )


def tools() -> list[Check]:
    mpi = _command_version(["mpirun", "--version"])
    checks = [
        Check(
            "MPI",
            OK if mpi else MISSING,
            mpi or "no mpirun: install openmpi-bin (or mpich) for the comm.* benchmarks",
        )
    ]
    for name, purpose in (
        ("likwid-bench", "peer for bench/likwid_compare.py"),
        ("chromium", "renders the HTML report in the tests"),
    ):
        path = shutil.which(name)
        checks.append(Check(name, OK if path else MISSING, path or f"missing ({purpose})"))
    return checks


def scheduler() -> Check:
    """Whether a Slurm controller answers (sinfo), with its partitions and node counts."""
    from perfatlas.cluster.slurm import partitions
    from perfatlas.common.errors import UserError

    if shutil.which("sinfo") is None:
        return Check(
            "Slurm scheduler",
            MISSING,
            "no sinfo on PATH: the Slurm client tools are not installed; --launcher slurm cannot "
            "submit (multi-host runs: --launcher mpirun with a hostfile)",
        )
    try:
        found = partitions()
    except UserError as error:
        return Check("Slurm scheduler", MISSING, f"{error}; --launcher slurm cannot submit")
    if not found:
        return Check("Slurm scheduler", LIMITED, "sinfo answers but lists no partition")
    listing = ", ".join(
        f"{p.name}{' (default)' if p.default else ''}: {p.nodes} node(s), {p.available}"
        for p in found
    )
    inside = os.environ.get("SLURM_JOB_ID")
    where = f"; inside allocation {inside}" if inside else ""
    return Check("Slurm scheduler", OK, f"reachable (sinfo): partition {listing}{where}")


def virtualization() -> Check:
    cpuinfo = _read("/proc/cpuinfo") or ""
    why = emulated(cpuinfo)
    if why:
        return Check(
            "virtualization",
            LIMITED,
            f"{why}; NUMA policy and hardware counters are the emulator's, reported not "
            "measurable (docs/arm64.md)",
        )
    if " hypervisor" in cpuinfo:
        return Check(
            "virtualization",
            LIMITED,
            "running under a hypervisor: expect steal time and noise from co-located guests",
        )
    return Check("virtualization", OK, "bare metal")


def last_level_cache(machine: Machine) -> Check:
    """hwloc's LLC against the effective one the latency probe finds (perfatlas.mem.cache_probe):
    suites size their sweeps from the effective one."""
    from perfatlas.mem.cache_probe import not_probed, probe

    if not machine.this_system:  # the probe would measure this machine, not the file's
        return Check(
            "last-level cache",
            LIMITED,
            not_probed(machine, "not probed: the topology is read from a file").sentence(),
        )
    sizing = probe(machine)
    if sizing.used != "probe" or sizing.effective_bytes is None:
        return Check("last-level cache", LIMITED, sizing.sentence())
    status = OK if sizing.effective_bytes >= sizing.hwloc_bytes / 2 else LIMITED
    return Check("last-level cache", status, f"{sizing.sentence()}; probe {sizing.seconds:g} s")


def checks(machine: Machine) -> list[Check]:
    return [
        topology_source(machine),
        numa(machine),
        last_level_cache(machine),
        *memory_only_nodes(machine),
        *filter(None, [cpu_kinds(machine)]),
        hardware_counters(),
        *huge_pages(),
        frequency(),
        timer(machine),
        native_build(machine),
        *build_part_checks(),
        affinity(machine),
        virtualization(),
        *tools(),
        scheduler(),
    ]


def print_doctor() -> None:
    machine = Machine.detect()
    table = Table(
        title=f"perfatlas doctor: {machine.topology.get('cpu_model')}", title_justify="left"
    )
    for column in ("check", "status", "detail"):
        table.add_column(column)
    colour = {OK: "green", LIMITED: "yellow", MISSING: "red"}
    for check in checks(machine):
        table.add_row(check.name, f"[{colour[check.status]}]{check.status}[/]", check.detail)
    console.print(table)
