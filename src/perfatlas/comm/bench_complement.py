"""comm.complement: rank i paired with rank np-1-i, all pairs at once (the complement
permutation of the LANL Lightning report): latency and bandwidth per pair. A pair whose figures
stand apart from the others' is flagged by perfatlas.comm.analysis_comm.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class CommComplement(MpiBenchmark):
    name = "comm.complement"
    anomaly_judged = True
    summary = "MPI latency and bandwidth of every pair (i, np-1-i), all pairs at once"
    executable = "pa-comm-complement"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "the complement pattern needs at least one pair"
    label_keys = ("np", "pair", "latency_bytes", "bandwidth_bytes")

    def all_ranks(self, machine: Machine) -> int:
        """np=all: the even count at or below one rank per PU (at least 2)."""
        count = super().all_ranks(machine)
        return count - count % 2

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        if params["np"] % 2:
            raise UserError(
                f"{self.name}: np={params['np']} is odd: the complement pattern pairs rank i with "
                f"rank np-1-i, so it needs an even np (e.g. np={params['np'] + 1})"
            )

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """The pairs alone, then all pairs at once."""
        return comm_seconds(params, 2)
