"""cpu.peakflops: the empirical peak floating-point rate per precision and instruction set, on
1..N threads pinned one per core first (docs/guide/compute.md).

The kernels, their lanes and their flops per lane-iteration are declared once, in
native/cpu/flops_kernels.h; `pa-cpu-peakflops --kernels` says which this CPU runs. This module
adds `threads` (turned into a CPU list), resolves `isa=widest` to the ISA it names here, and
stores an ISA the CPU lacks as "not measurable here" so that a suite goes on (the native program
asked directly refuses it in one sentence, exit status 2).
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import cache
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, int_param, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.launch.native import bin_dir, run_json
from perfatlas.machine.topology import Machine

LACKS_ENV = "PERFATLAS_PEAKFLOPS_LACKS"  # ISAs to treat as missing (tests)
# Every ISA of every architecture, so that one suite serves them all: those of another
# architecture than this build's are stored as "not measurable here".
ARCHITECTURE_OF = {
    "scalar": "any",
    "sse": "x86-64",
    "avx2": "x86-64",
    "avx512": "x86-64",
    "neon": "aarch64",
    "sve": "aarch64",
}


@cache
def _catalog(folder: str, hidden: str) -> dict:
    return run_json("pa-cpu-peakflops", ["--kernels"])  # type: ignore[return-value]


def kernel_catalog() -> dict:
    """{widest, accumulators, iterations_per_block, flops_per_lane_iteration, kernels: [{isa,
    precision, operations, lanes, not_measurable}]} for this CPU, from the native program."""
    return _catalog(str(bin_dir()), os.environ.get(LACKS_ENV, ""))


def kernel_of(isa: str, precision: str) -> dict | None:
    return next(
        (k for k in kernel_catalog()["kernels"] if k["isa"] == isa and k["precision"] == precision),
        None,
    )


@register
class PeakFlops(Benchmark):
    name = "cpu.peakflops"
    summary = "peak floating-point rate per precision and ISA (FMA or mul+add), 1..N threads"
    executable = "pa-cpu-peakflops"
    metrics = {"flop_rate": "flop/s"}
    refines = {"isa": {"choices": (*ARCHITECTURE_OF, "widest")}}
    adds = (
        replace(
            int_param("threads", 1, "threads, one per core first (ignored when cpus= is given)"),
            after="isa",
        ),
    )

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["isa"] == "widest":
            params["isa"] = kernel_catalog()["widest"]
        if params["cpus"] is None:
            params["cpus"] = machine.cpus_for_threads(params["threads"])
        machine.check_cpus(params["cpus"])
        params["threads"] = len(params["cpus"])
        return params

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        kernel = kernel_of(params["isa"], params["precision"])
        if kernel is None:
            return (
                f"{params['isa']} is an {ARCHITECTURE_OF[params['isa']]} instruction set; this "
                f"build's kernels are {', '.join(sorted({k['isa'] for k in kernel_catalog()['kernels']}))}"
            )
        if kernel["not_measurable"] is None:
            return None
        return kernel["not_measurable"]  # "this CPU lacks AVX-512F"

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        native = {k: v for k, v in params.items() if k != "threads"}
        return super().native_args(native, machine)

    def label(self, params: dict[str, Any]) -> str:
        threads = params.get("threads", 1)
        return (
            f"{params.get('precision')} {params.get('isa')} {threads} thread{'s' * (threads != 1)}"
        )

    def details(self) -> list[str]:
        catalog = kernel_catalog()
        lines = [
            f"kernels ({catalog['accumulators']} accumulators x {catalog['iterations_per_block']}"
            f" iterations per block, {catalog['flops_per_lane_iteration']} flop per lane and "
            "iteration; native/cpu/flops_kernels.h):"
        ]
        for k in catalog["kernels"]:
            here = k["not_measurable"] or f"{k['lanes']} lanes"
            lines.append(f"  {k['isa']:7s} {k['precision']:7s} {k['operations']:8s} {here}")
        return lines

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of min_sample_time each (no buffer)."""
        return sampled_seconds(params)
