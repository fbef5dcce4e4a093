"""Run inside a numa-vm guest by tests/test_numa_vm.py: every NUMA path of perfatlas, in one
Python process (the guest is slow to start one), each result written to numa-vm.json in the
current folder for the host to check. Sizes and samples are tiny: placement and read-back are the
point, never timings (the guest's nodes are one host memory under emulation).

    python numa_vm_guest.py       (in the folder that receives numa-vm.json and numa.db)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from perfatlas.benchmarks import get
from perfatlas.cli.entry import main
from perfatlas.experiments.analysis_param_sweep import sweep_points
from perfatlas.machine.placement import parse_bind, parse_mempolicy
from perfatlas.machine.topology import Machine
from perfatlas.plan.sweep_grid import plan, planned_launches, schedule
from perfatlas.run.runner import Runner
from perfatlas.store.database import Store

TINY = ["samples=3", "min_sample_time=1ms"]
found: dict = {}


def measure(name: str, benchmark: str, *words: str) -> None:
    started = time.monotonic()
    path = Path(f"{name}.json")
    rc = main(["--db", "numa.db", "measure", benchmark, *words, *TINY, "--json", str(path)])
    docs = json.loads(path.read_text()) if rc == 0 and path.exists() else None
    found[name] = {"rc": rc, "documents": docs if isinstance(docs, list) else [docs]}
    found[name]["run"] = Store("numa.db").runs()[-1]["id"]
    found[name]["seconds"] = time.monotonic() - started


def sweep(
    name: str,
    benchmark: str,
    raw: dict[str, str],
    mempolicies: list[str],
    threads: list[int],
    bind: str,
) -> None:
    """`perfatlas sweep` without its HTML report (matplotlib is slow under emulation; the host
    writes the report from numa.db)."""
    store = Store("numa.db")
    machine = Machine.detect()
    points = plan(threads, [parse_bind(bind)], [parse_mempolicy(m, machine) for m in mempolicies])
    chosen = get(benchmark)
    runner = Runner(store, machine)
    with runner.run(f"sweep {benchmark}", ["numa_vm_guest.py", name]):
        runner.measure_all(planned_launches(chosen, raw, schedule(points, 1), machine))
    results = store.results(runner.run_id)
    found[name] = {
        "run": runner.run_id,
        "launches": [
            {
                "params": r.params,
                "metric": r.metric,
                "sweep": r.document.get("sweep"),
                "launch": r.document.get("launch"),
            }
            for r in results
        ],
        "points": [
            {"mempolicy": p.mempolicy, "threads": p.threads, "remote_fraction": p.remote_fraction}
            for p in sweep_points(results)
        ],
    }


machine = Machine.detect()
found["topology"] = machine.topology
nodes = machine.numa_nodes
first_pu = {
    n: min(p["os_index"] for p in machine.topology["pus"] if p["numa_node"] == n) for n in nodes
}
last = nodes[-1]

measure("matrix", "mem.numa_matrix", "latency_bytes=256KiB", "bandwidth_bytes=512KiB")
for cpu_node in (nodes[0], last):  # node=remote from either end of the machine
    measure(
        f"remote_from_{cpu_node}",
        "mem.latency",
        "node=remote",
        "bytes=1MiB",
        f"cpus={first_pu[cpu_node]}",
    )
for node in (nodes[0], last):
    measure(f"bind_{node}", "mem.bandwidth", "op=read", "bytes=8MiB", f"node={node}", "cpus=0")
measure("interleave", "mem.bandwidth", "op=read", "bytes=8MiB", "node=interleave", "cpus=0")
# remote to every thread of a team that spans two nodes (none on two nodes: not measurable)
measure(
    "remote_team",
    "mem.bandwidth",
    "op=read",
    "bytes=8MiB",
    "node=remote",
    f"cpus={first_pu[nodes[0]]},{first_pu[nodes[1]]}",
)
# loaded latency with both the chase and the injectors' buffers bound to node 1, chased from CPU 0
measure(
    "loaded_node_1",
    "mem.loaded_latency",
    "cpu=0",
    f"injectors={first_pu[last]}",
    "node=1",
    "inject_node=1",
    "delay=0,2000",
    "bytes=1MiB",
    "inject_bytes=1MiB",
)
measure("two_thread", "mem.latency", "bytes=1MiB", f"cpus={first_pu[nodes[0]]},{first_pu[last]}")
# a benchmark that places its memory itself (node=), and one placed by numactl (no node=)
tiny = {"samples": "3", "min_sample_time": "1ms"}
sweep(
    "sweep_bandwidth",
    "mem.bandwidth",
    {"op": "read", "bytes": "8MiB", **tiny},
    ["local", "interleave", f"node:{last}"],
    [1, 2],
    "spread",
)
sweep(
    "sweep_numactl",
    "parbench.kernel",
    {"kernel": "triad", "bytes": "8MB", **tiny},
    [f"node:{last}"],
    [1],
    "close",
)
Path("numa-vm.json").write_text(json.dumps(found, indent=1))
sys.exit(0)
