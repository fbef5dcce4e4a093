"""comm.distance: latency and bandwidth from rank 0 to every other rank, one pair at a time
(the rank-distance scan of the LANL Lightning report). One result per peer; a rank whose
figures stand apart from its peers' is flagged by perfatlas.comm.analysis.
"""

from __future__ import annotations

from perfatlas.benchmarks.base import register
from perfatlas.comm.mpi import MpiBenchmark


@register
class CommDistance(MpiBenchmark):
    name = "comm.distance"
    summary = "MPI latency and bandwidth from rank 0 to every other rank, one pair at a time"
    executable = "pa-comm-distance"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "rank 0 needs at least one other rank to measure"
    label_keys = ("np", "peer", "latency_bytes", "bandwidth_bytes")
