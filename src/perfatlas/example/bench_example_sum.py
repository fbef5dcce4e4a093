"""example.sum: the template benchmark (docs/adding-a-benchmark.md): one pinned thread sums an
array of `bytes` bytes, checked against the closed form; the bandwidth of the passes.

Everything about its parameters is in native/example/sum.c's table; this module adds only what
Python knows: that the PU must exist on this machine and the array must fit its memory.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.machine.topology import Machine


@register
class ExampleSum(Benchmark):
    name = "example.sum"
    summary = "a checked sum over an array (the template for adding a benchmark)"
    executable = "pa-example-sum"
    metrics = {"bandwidth_Bps": "byte/s"}

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)  # bytes that fit the machine's memory
        machine.check_cpus([params["cpu"]])

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of one pass over the array (or min_sample_time)."""
        return sampled_seconds(params)
