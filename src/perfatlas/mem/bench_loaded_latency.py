"""mem.loaded_latency: dependent-load latency on one core while the others inject memory traffic
at a controlled rate, the latency-versus-bandwidth curve of a memory system (Intel MLC's
--loaded_latency, unprivileged; Sprunt's and McCalpin's loaded-latency curves).

One launch measures a whole `delay` series (ns of pause after each cache-line access of every
injector): per point, idle and loaded samples alternate, and each loaded sample also records the
bandwidth the injectors actually achieved over it, so the curve is latency against measured
bandwidth (docs/guide/loaded-latency.md).

Memory placement: `node` places the chased buffer, `inject_node` the injectors' buffers (default
`same`: as `node`), so that one can chase local memory while loading the remote node's memory
controller, or the reverse; `remote` is, for either, the node nearest the chasing thread's that
does not hold it (Machine.remote_node).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import NODE_WORDS, Benchmark, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine

NEEDS_TWO_CPUS = "not measurable here: loaded latency needs a second CPU to inject traffic"


@register
class MemLoadedLatency(Benchmark):
    name = "mem.loaded_latency"
    summary = "latency of dependent loads while the other cores inject memory traffic at set rates"
    executable = "pa-mem-loaded-latency"
    node_params = {"node": NODE_WORDS, "inject_node": ("same", *NODE_WORDS)}
    metrics = {"latency_ns": "ns", "idle_latency_ns": "ns", "injected_Bps": "byte/s"}
    refines = {
        "bytes": {
            "default": 0,
            "minimum": 0,
            "help": "working set of the chasing thread, one chain element per line (default: 8x "
            "the last-level cache, the effective one where probed)",
        },
        "inject_bytes": {
            "default": 0,
            "minimum": 0,
            "help": "buffer each injector streams over (default: 2x the last-level cache)",
        },
        "node": {
            "help": "memory of the chased buffer: local (first touch by the chasing thread), a "
            "NUMA node number (bind), interleave, or remote: the node nearest the chasing "
            "thread's that does not hold it (perfatlas chooses it)"
        },
        "inject_node": {
            "help": "memory of the injectors' buffers: same (as node), local (each injector's "
            "own first touch), a NUMA node number (bind), interleave, or remote (as for node)"
        },
        "injectors": {
            "help": "PUs of the injector threads, one thread each (default: every PU but cpu)"
        },
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        cpu = params["cpu"]
        machine.check_cpus([cpu])
        if params["injectors"] is None:
            params["injectors"] = [pu for pu in machine.pus if pu != cpu]
        injectors = params["injectors"]
        machine.check_cpus(injectors)
        if cpu in injectors:
            raise UserError(
                f"mem.loaded_latency: injectors lists PU {cpu}, the chasing thread's cpu: give "
                "other PUs"
            )
        if len(set(injectors)) != len(injectors):
            raise UserError("mem.loaded_latency: injectors lists a PU twice")
        if not params["bytes"]:
            params["bytes"] = 8 * machine.sizing_llc_bytes
        if not params["inject_bytes"]:
            params["inject_bytes"] = 2 * machine.sizing_llc_bytes
        machine.check_bytes(
            params["bytes"] + len(injectors) * params["inject_bytes"],
            "bytes + injectors x inject_bytes",
        )
        return params

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        if len(machine.pus) < 2 or not params.get("injectors"):
            return NEEDS_TWO_CPUS
        return super().unmeasurable(params, machine)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of one pass over the working set (or min_sample_time)."""
        return sampled_seconds(params)
