"""mem.contention: one task's latency or bandwidth while a task on another core streams memory.

Rounds are interleaved (alone, with a reading streamer, with a writing streamer) so that drift
cancels (Hoefler & Belli, SC15); the report shows each loaded figure relative to running alone.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.base import (
    Benchmark,
    choice_param,
    int_param,
    register,
    repetition_params,
    size_param,
)
from perfatlas.errors import UserError
from perfatlas.machine import Machine


@register
class MemContention(Benchmark):
    name = "mem.contention"
    summary = "latency and bandwidth of one core while another streams reads or writes"
    executable = "pa-mem-contention"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    params = (
        choice_param("measure", ("latency", "bandwidth"), "what the measured task does"),
        size_param(
            "bytes",
            64 * 2**20,
            "working set of the measured task; a list or a series (4KiB..64MiB/2) is measured in "
            "one launch",
            minimum=4096,
            series=True,
        ),
        int_param("cpu", 0, "PU of the measured task", minimum=0),
        int_param("load_cpu", 1, "PU of the streaming task", minimum=0),
        size_param(
            "load_bytes",
            0,
            "streamer buffer (default: 8x the last-level cache, the effective one where probed)",
            minimum=0,
        ),
        *repetition_params(samples=7),
    )

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
