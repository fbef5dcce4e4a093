"""comm.distance: latency and bandwidth from rank 0 to every other rank, one pair at a time
(the rank-distance scan of the LANL Lightning report). One result per peer; a rank whose
figures stand apart from its peers' is flagged by perfatlas.comm.analysis_comm.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.machine.topology import Machine


@register
class CommDistance(MpiBenchmark):
    name = "comm.distance"
    anomaly_judged = True
    summary = "MPI latency and bandwidth from rank 0 to every other rank, one pair at a time"
    executable = "pa-comm-distance"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "rank 0 needs at least one other rank to measure"
    label_keys = ("np", "peer", "latency_bytes", "bandwidth_bytes")

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """A latency and a bandwidth measurement per peer of rank 0."""
        return comm_seconds(params, 2 * (int(params.get("np") or 2) - 1))
