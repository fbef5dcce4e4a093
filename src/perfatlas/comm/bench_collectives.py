"""comm.allreduce and comm.barrier: collective latency vs process count, in one launch.

Process counts: every P from min_processes to np when np <= 16, else the powers of two and np;
for each P the first P ranks form a sub-communicator (MPI_Comm_split), so every count is measured
with the same placement (the other ranks sleep). Each rank times its own calls; every rank's
samples are kept, so results give min, median and max across ranks and samples. The report fits
latency against log2 P and against P (perfatlas.comm.analysis_comm.growth).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds, doublings, process_counts
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


class _Collective(MpiBenchmark):
    executable = "pa-comm-collectives"
    metrics = {"latency_ns": "ns"}
    needs = "a collective vs process count needs two ranks"

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        if params["min_processes"] > params["np"]:
            raise UserError(
                f"{self.name}: min_processes={params['min_processes']} exceeds np={params['np']}"
            )


@register
class CommAllreduce(_Collective):
    name = "comm.allreduce"
    summary = "MPI_Allreduce (doubles, sum) latency vs process count 2..np and vector size"
    fixed_args = ("op=allreduce",)
    label_keys = ("np", "processes", "min_bytes", "max_bytes", "bytes")
    sweep_keys = ("min_bytes", "max_bytes")
    withheld = ("op",)  # fixed_args

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        if params["min_bytes"] % 8 or params["min_bytes"] > params["max_bytes"]:
            raise UserError(
                f"{self.name}: min_bytes={params['min_bytes']} must be a multiple of 8 (doubles) "
                "and at most max_bytes"
            )

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """One measurement per process count and message size."""
        low, high = int(params.get("min_bytes") or 8), int(params.get("max_bytes") or 8)
        ranks = int(params.get("np") or 2)
        return comm_seconds(params, process_counts(ranks) * doublings(low, high))


@register
class CommBarrier(_Collective):
    name = "comm.barrier"
    summary = "MPI_Barrier latency vs process count 2..np"
    fixed_args = ("op=barrier",)
    label_keys = ("np", "processes")
    withheld = ("op", "min_bytes", "max_bytes")  # a barrier moves no data

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """One measurement per process count."""
        return comm_seconds(params, process_counts(int(params.get("np") or 2)))
