"""The machine under test: hwloc topology (via pa-topology), run context and fingerprint."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from perfatlas import __version__
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list, format_size
from perfatlas.launch.native import run_json
from perfatlas.machine.cpu_order import close_order

# Environment variables that change what a benchmark measures
# (docs/architecture.md, The context of a run).
_RELEVANT_ENV_PREFIXES = (
    "OMP_",
    "GOMP_",
    "KMP_",
    "OPENBLAS_",
    "MKL_",
    "OMPI_",
    "MPICH_",
    "PERFATLAS_",
)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _selected(mode_line: str | None) -> str | None:
    """'always [madvise] never' -> 'madvise'."""
    if not mode_line:
        return None
    for word in mode_line.split():
        if word.startswith("["):
            return word.strip("[]")
    return mode_line


def _command_version(argv: list[str]) -> str | None:
    if not shutil.which(argv[0]):
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else None


@dataclass
class Machine:
    topology: dict
    # perfatlas.mem.cache_probe's record (LlcSizing.record()) once the effective LLC was probed
    llc_sizing: dict | None = None

    @classmethod
    def detect(cls) -> Machine:
        return cls(topology=run_json("pa-topology", []))

    # -- shape -------------------------------------------------------------------------------
    @property
    def pus(self) -> list[int]:
        return [pu["os_index"] for pu in self.topology["pus"]]

    @property
    def numa_nodes(self) -> list[int]:
        return [node["os_index"] for node in self.topology["numa_nodes"]]

    @property
    def this_system(self) -> bool:
        """False where the topology came from HWLOC_XMLFILE: plans only, nothing is bound."""
        return self.topology.get("this_system", True)

    @property
    def cpu_nodes(self) -> list[int]:
        """The NUMA nodes that are some PU's local node (threads run there)."""
        local = {pu["numa_node"] for pu in self.topology["pus"]}
        return [n for n in self.numa_nodes if n in local]

    @property
    def memory_only_nodes(self) -> list[dict]:
        """NUMA nodes no PU is local to: CXL expanders, HBM in flat mode, GPU memory."""
        return [n for n in self.topology["numa_nodes"] if n.get("memory_only")]

    @property
    def memory_bytes(self) -> int:
        """Host memory: the NUMA nodes' sum (GPU memory aside), or the OS total where nodes
        report less (VMs) on this system; a topology from HWLOC_XMLFILE is taken at its word."""
        on_nodes = sum(
            node.get("memory_bytes") or 0
            for node in self.topology["numa_nodes"]
            if node.get("subtype") != "GPUMemory"
        )
        if not self.this_system and on_nodes:
            return on_nodes
        return max(on_nodes, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))

    def cache_bytes(self, level: int) -> int | None:
        for cache in self.topology["caches"]:
            if cache["level"] == level and cache["type"] in ("data", "unified"):
                return cache["size_bytes"]
        return None

    @property
    def last_level_cache_bytes(self) -> int:
        sizes = [c["size_bytes"] for c in self.topology["caches"] if c["type"] != "instruction"]
        return max(sizes, default=32 * 2**20)

    @property
    def sizing_llc_bytes(self) -> int:
        """The LLC that sizes are derived from ('4xLLC', contention's streamer): the effective one
        where perfatlas.mem.cache_probe measured it, else hwloc's."""
        if self.llc_sizing and self.llc_sizing.get("used") == "probe":
            return int(self.llc_sizing["effective_bytes"])
        return self.last_level_cache_bytes

    def cpus_for_threads(self, threads: int) -> list[int]:
        """One PU per core first (cores in hwloc order), then the cores' further PUs (SMT)."""
        if threads < 1:
            raise UserError(f"threads={threads} must be at least 1")
        if threads > len(self.pus):
            raise UserError(
                f"threads={threads} exceeds the {len(self.pus)} PUs of this machine "
                f"({format_cpu_list(self.pus)})"
            )
        return close_order(self.topology)[:threads]

    def remote_node(self, cpus: int | list[int]) -> int | None:
        """The nearest NUMA node with PUs that holds none of `cpus` (remote to every thread, not
        only to the first): by the distance matrix from the first cpu's node where the OS reports
        one (hwloc distances, ACPI SLIT), else the next in hwloc order. Memory-only nodes (CXL,
        HBM, GPU memory) are measured by node=K, never as 'remote'. None where there is none."""
        cpus = [cpus] if isinstance(cpus, int) else cpus
        node_of = {pu["os_index"]: pu["numa_node"] for pu in self.topology["pus"]}
        local = node_of.get(cpus[0])
        nodes = self.numa_nodes
        held = {node_of.get(cpu) for cpu in cpus}
        others = [n for n in self.cpu_nodes if n not in held]
        if not others:
            return None
        distances = self.topology.get("numa_distances") or []
        if local in nodes and len(distances) == len(nodes):
            row = distances[nodes.index(local)]
            known = [n for n in others if row[nodes.index(n)] is not None]
            if known:
                return min(known, key=lambda n: (row[nodes.index(n)], others.index(n)))
        return others[0]

    def check_cpus(self, cpus: list[int]) -> None:
        missing = sorted(set(cpus) - set(self.pus))
        if missing:
            raise UserError(
                f"cpu {missing[0]} does not exist: this machine has PUs {format_cpu_list(self.pus)}"
            )

    def check_bytes(self, n_bytes: int, what: str = "bytes") -> None:
        if n_bytes > self.memory_bytes * 0.8:
            raise UserError(
                f"{what}={format_size(n_bytes)} does not fit: this machine has "
                f"{format_size(self.memory_bytes)} of memory (at most 80 % may be used)"
            )

    # -- identity and context ----------------------------------------------------------------
    @cached_property
    def fingerprint(self) -> str:
        """Same host, CPU and topology shape -> same fingerprint, so runs group together."""
        topo = self.topology
        shape = {
            "host": socket.gethostname(),
            "cpu": topo.get("cpu_model"),
            "packages": topo.get("packages"),
            "cores": topo.get("cores"),
            "pus": len(topo["pus"]),
            # NUMA nodes' memory as hwloc reports it moves with what the OS holds back (seen:
            # 6.4 to 7.1 GB on one VM), so the shape is the node count and the installed total
            "numa_nodes": len(topo["numa_nodes"]),
            "memory_gib": round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30),
            "caches": sorted((c["level"], c["type"], c["size_bytes"]) for c in topo["caches"]),
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]

    def hwloc_xml(self) -> str | None:
        """This machine's topology as hwloc XML (pa-hwloc-export), stored with every run so that
        `perfatlas export --format hwloc` can calibrate the topology the run was measured on.
        None where it cannot be had (a build without pa-hwloc-export): measuring does not depend
        on it, and the export says the run has none."""
        with tempfile.TemporaryDirectory(prefix="perfatlas-hwloc-") as folder:
            path = Path(folder) / "topology.xml"
            try:
                run_json("pa-hwloc-export", [f"xml={path}"])
                return path.read_text()
            except (UserError, OSError):
                return None

    def context(self) -> dict:
        """Everything a reader needs to trust or reproduce a run (docs/architecture.md, context)."""
        uname = platform.uname()
        return {
            "hostname": socket.gethostname(),
            "cpu_model": self.topology.get("cpu_model"),
            "kernel": f"{uname.system} {uname.release} {uname.version}",
            "cpu_max_hz": _cpu_max_hz(),
            "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
            or "no cpufreq interface (frequency not controlled by the OS here)",
            "thp": _selected(_read("/sys/kernel/mm/transparent_hugepage/enabled")),
            "clocksource": _read(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource"
            ),
            "hugepages_2MiB": _read("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
            "cpus_allowed": _cpus_allowed(),
            # what the native executables were built for: compiler, flags, -march, extensions
            "native_build": self.topology.get("build"),
            "mpi": _command_version(["mpirun", "--version"]),
            "environment": {
                k: v for k, v in sorted(os.environ.items()) if k.startswith(_RELEVANT_ENV_PREFIXES)
            },
            "llc": self.llc_sizing
            or {
                "hwloc_bytes": self.last_level_cache_bytes,
                "effective_bytes": None,
                "used": "hwloc",
                "why": "not probed (no size of this run is relative to the LLC)",
            },
        }


def cache_rows(topology: dict) -> list[list[str]]:
    """The caches of a topology document as table rows: level, type, size, line, count, PUs."""
    return [
        [
            f"L{cache['level']}",
            cache["type"],
            format_size(cache["size_bytes"]),
            f"{cache.get('line_bytes', '?')} B",
            str(cache.get("count", "?")),
            str(cache.get("cpus", "?")),
        ]
        for cache in sorted(topology.get("caches") or [], key=lambda c: (c["level"], c["type"]))
    ]


def _cpu_max_hz() -> float | None:
    """The highest core frequency cpufreq reports (Hz), or None where it is not visible (VMs)."""
    khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    return float(khz) * 1e3 if khz and khz.isdigit() else None


def _cpus_allowed() -> str:
    return format_cpu_list(sorted(os.sched_getaffinity(0)))


def software_versions() -> dict:
    import numpy

    return {
        "perfatlas": __version__,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
    }
