"""parbench.kernel: one variant of the PARbench kernel catalog -- kernel, working set, stride,
threads -- measured alone: runtime of one pass, transfer rate of the bytes it names, flop rate,
and cycles and instructions where the machine has hardware counters.

Each thread runs the kernel on its own 1/threads share of `bytes` (native/parbench/variant.h).
The counts per iteration come from native/parbench/kernels.def through the catalog.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list
from perfatlas.machine.topology import Machine
from perfatlas.parbench.catalog import STRIDES, catalog, kernel


def _stride(text: str) -> int:
    if text not in {str(s) for s in STRIDES}:
        raise UserError(f"stride={text} is not one of {', '.join(map(str, STRIDES))}")
    return int(text)


@register
class ParbenchKernel(Benchmark):
    name = "parbench.kernel"
    summary = "one PARbench kernel variant alone: runtime, transfer rate, flop rate"
    executable = "pa-parbench"
    metrics = {
        "runtime_s": "s",
        "bandwidth_Bps": "byte/s",
        "flops_per_s": "flop/s",
        "cycles_per_iteration": "cycle",
        "instructions_per_cycle": "instruction/cycle",
    }
    withheld = ("mode", "bind", "file")  # native_args: mode=kernel, pinned to cpus=
    refines = {
        # the catalog's own sentence names a kernel that does not exist (parbench.catalog)
        "kernel": {"choices": None, "help": "kernel of the catalog (below)"},
        "bytes": {"format": lambda n: f"{n / 1e6:.4g} MB"},
        "stride": {"parse": _stride},
        "threads": {"help": "threads, one per core first, or the first of cpus="},
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        entry = kernel(params["kernel"])
        if params["stride"] > 1 and not entry.strided:
            raise UserError(
                f"{self.name}: stride={params['stride']} does not apply to kernel "
                f"{entry.name}, which has no stride (give stride=1)"
            )
        if params["cpus"] is None:
            params["cpus"] = machine.cpus_for_threads(params["threads"])
        machine.check_cpus(params["cpus"])
        if params["threads"] > len(params["cpus"]):
            raise UserError(
                f"{self.name}: threads={params['threads']} needs that many PUs but cpus="
                f"{format_cpu_list(params['cpus'])} names {len(params['cpus'])}"
            )
        return params

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        cpus = ",".join(str(cpu) for cpu in params["cpus"])  # in order: thread t on the t-th
        words = [f"{k}={v}" for k, v in params.items() if k != "cpus"]
        return ["mode=kernel", *words, f"cpus={cpus}"]

    def label(self, params: dict[str, Any]) -> str:
        stride = f" stride={params['stride']}" if params.get("stride", 1) != 1 else ""
        return (
            f"{params.get('kernel')} {params.get('bytes', 0) / 1e6:.4g}MB{stride} "
            f"threads={params.get('threads')}"
        )

    def details(self) -> list[str]:
        lines = ["kernels (bytes and flops per iteration, from native/parbench/kernels.def):"]
        for k in catalog():
            lines.append(
                f"  {k.name:18s} {k.class_name:9s} {k.load_bytes:2d}+{k.store_bytes:2d} B "
                f"{k.flops:2d} flop per {k.iteration}{'  (strided)' if k.strided else ''}"
            )
        return lines

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of one pass over the working set (or min_sample_time)."""
        return sampled_seconds(params)
