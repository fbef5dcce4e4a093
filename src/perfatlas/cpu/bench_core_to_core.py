"""cpu.core_to_core: the one-way cache-line transfer latency between every pair of CPUs.

One launch measures the whole matrix (the "ping-pong" of Molka et al., PACT 2009; the matrix of
nviennot/core-to-core-latency): two threads pinned to a pair bounce one cache line, each CPU of
the pair initiating in turn; one result per (initiator, responder). By default every PU the
process may use, so n PUs give n(n-1)/2 pairs; `pairs=first` measures the first CPU against each
other one (n-1 pairs: the quick suite's form for big machines).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import samples
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list
from perfatlas.machine.cpu_order import cores
from perfatlas.machine.topology import Machine

CALIBRATION = 6  # a pair's calibration, in samples (Benchmark.estimate)

NEEDS_TWO = "not measurable here: core-to-core latency needs two CPUs"


def default_cpus(topology: dict) -> list[int]:
    """Every core's PUs, cores in hwloc order and a core's SMT siblings together."""
    return [pu["os_index"] for core in cores(topology) for pu in core]


@register
class CoreToCore(Benchmark):
    name = "cpu.core_to_core"
    summary = "one-way cache-line transfer latency between every pair of CPUs"
    executable = "pa-cpu-core-to-core"
    metrics = {"latency_ns": "ns"}
    refines = {
        "cpus": {
            "help": "the CPUs whose pairs are measured, at least two (default: every PU, each "
            "core's first PU and its SMT siblings)"
        }
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["cpus"] is None and len(machine.pus) >= 2:
            params["cpus"] = default_cpus(machine.topology)
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        cpus = params.get("cpus")
        if cpus is None:
            return
        machine.check_cpus(cpus)
        if len(set(cpus)) != len(cpus):
            raise UserError(f"{self.name}: cpus={format_cpu_list(cpus)} names a CPU twice")
        if len(cpus) < 2:
            raise UserError(
                f"{self.name}: cpus={format_cpu_list(cpus)} names one CPU; core-to-core latency "
                "needs two"
            )

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        if len(machine.pus) < 2:
            return f"{NEEDS_TWO}; this machine has {len(machine.pus)}"
        return super().unmeasurable(params, machine)

    def label(self, params: dict[str, Any]) -> str:
        """A pair's result by its direction; the launch by its CPUs and pairs."""
        if "initiator" in params:
            return f"cpu {params['initiator']} -> cpu {params['responder']}"
        return super().label(params)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Per pair (n(n-1)/2 of n CPUs, n-1 with pairs=first) and direction the samples, and
        the calibration (three sessions per growth step: about CALIBRATION samples), each of
        min_sample_time."""
        n = len(params.get("cpus") or machine.pus)
        pairs = n - 1 if params.get("pairs") == "first" else n * (n - 1) // 2
        directions = 1 if params.get("directions") == "one" else 2
        sample = float(params.get("min_sample_time") or 2e-4)
        return pairs * (directions * samples(params, 15) + CALIBRATION) * sample
