"""comm.distance: latency and bandwidth from rank 0 to every other rank, one pair at a time
(the rank-distance scan of the LANL Lightning report). One result per peer; a rank whose
figures stand apart from its peers' is flagged by perfatlas.comm_analysis.
"""

from __future__ import annotations

from perfatlas.benchmarks.base import int_param, register
from perfatlas.benchmarks.mpi import MpiBenchmark, message_param, np_param, timing_params


@register
class CommDistance(MpiBenchmark):
    name = "comm.distance"
    summary = "MPI latency and bandwidth from rank 0 to every other rank, one pair at a time"
    executable = "pa-comm-distance"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "rank 0 needs at least one other rank to measure"
    label_keys = ("np", "peer", "latency_bytes", "bandwidth_bytes")
    params = (
        np_param(),
        message_param("latency_bytes", 8, "message size of the latency ping-pong"),
        message_param("bandwidth_bytes", 2**20, "message size of the bandwidth windows", 1),
        int_param("window", 64, "nonblocking sends in flight per bandwidth iteration"),
        message_param(
            "window_bytes", 4 * 2**20, "at most this many bytes in flight (cache-sized)", 1
        ),
        *timing_params(time_limit=1.0),
    )
