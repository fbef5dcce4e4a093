"""mem.contention: one task's latency or bandwidth while a task on another core streams memory.

Rounds are interleaved (alone, with a reading streamer, with a writing streamer) so that drift
cancels (Hoefler & Belli, SC15); the report shows each loaded figure relative to running alone.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class MemContention(Benchmark):
    name = "mem.contention"
    summary = "latency and bandwidth of one core while another streams reads or writes"
    executable = "pa-mem-contention"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    refines = {
        "load_bytes": {
            "default": 0,
            "minimum": 0,
            "help": "buffer the load thread streams over (default: 8x the last-level cache, the "
            "effective one where probed)",
        }
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        machine.check_cpus([params["cpu"], params["load_cpu"]])
        if params["cpu"] == params["load_cpu"]:
            raise UserError("mem.contention: cpu and load_cpu must be different PUs")
        if not params["load_bytes"]:
            params["load_bytes"] = 8 * machine.sizing_llc_bytes
        sizes = params["bytes"] if isinstance(params["bytes"], list) else [params["bytes"]]
        machine.check_bytes(max(sizes) + params["load_bytes"], "bytes + load_bytes")
        return params

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Three interleaved series (no load, a read load, a write load), each sample adding a
        pass over the load's buffer."""
        return sampled_seconds(params, points=3)
