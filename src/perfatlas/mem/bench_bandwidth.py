"""mem.bandwidth: cachebench operations and STREAM, 1..N threads, normal and non-temporal stores.

The kernels and their bytes and flops per element are declared once, in native/mem/kernels.def;
bandwidth counts the bytes the kernel names (loads + stores), not write-allocate traffic.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, int_param, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.launch.native import run_json
from perfatlas.machine.topology import Machine


def kernel_table() -> list[dict]:
    """The native kernel catalog (name, arrays, loads, stores, flops, nt) from kernels.def."""
    return run_json("pa-mem-bandwidth", ["--kernels"])


@register
class MemBandwidth(Benchmark):
    name = "mem.bandwidth"
    summary = "sustained bandwidth of the cachebench operations and STREAM vs working set"
    executable = "pa-mem-bandwidth"
    metrics = {"bandwidth_Bps": "byte/s"}
    adds = (
        replace(
            int_param("threads", 1, "threads, one per core first (ignored when cpus= is given)"),
            after="bytes",
        ),
    )

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["cpus"] is None:
            params["cpus"] = machine.cpus_for_threads(params["threads"])
        machine.check_cpus(params["cpus"])
        params["threads"] = len(params["cpus"])
        return params

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        native = {k: v for k, v in params.items() if k != "threads"}
        return super().native_args(native, machine)

    def details(self) -> list[str]:
        lines = ["kernels (bytes and flops per element, from native/mem/kernels.def):"]
        for k in kernel_table():
            lines.append(
                f"  {k['name']:15s} {k['bytes_per_element']:3d} B  {k['flops_per_element']} flop"
                f"  {'nt stores' if k['nt'] else ''}"
            )
        return lines

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of one streaming pass over the working set (or min_sample_time)."""
        return sampled_seconds(params)
