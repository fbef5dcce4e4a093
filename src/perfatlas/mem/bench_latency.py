"""mem.latency: dependent-load pointer chase (lmbench lat_mem_rd; LANL Lightning report, sec. 2).

`chain=page` visits the cache lines of each page in random order, pages in random order, so TLB
misses are amortized over a page and the curve shows cache and DRAM latency; `chain=random` is one
random cycle over all lines and adds the TLB miss cost once the working set exceeds TLB reach.
With `cpus=A,B` the two-thread method runs: A allocates and first-touches, then A and B each
measure the same memory while the other spins (local vs remote when A and B sit on different
NUMA nodes).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import CACHE_LOAD_S, DRAM_LOAD_S, sampled_seconds
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class MemLatency(Benchmark):
    name = "mem.latency"
    summary = "load-to-use latency vs working set (pointer chase), per CPU and memory node"
    executable = "pa-mem-latency"
    metrics = {"latency_ns": "ns"}

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["cpus"] is None:
            params["cpus"] = machine.cpus_for_threads(1)
        machine.check_cpus(params["cpus"])
        if len(params["cpus"]) > 2 or len(set(params["cpus"])) != len(params["cpus"]):
            raise UserError("mem.latency: cpus= takes one PU, or two different PUs A,B")
        return params

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """One dependent load per cache line and pass, at cache or DRAM latency, per CPU."""
        size = int(params.get("bytes") or 0)
        per_load = CACHE_LOAD_S if size <= machine.last_level_cache_bytes else DRAM_LOAD_S
        return sampled_seconds(params, size / 64 * per_load, points=len(params.get("cpus") or [0]))
