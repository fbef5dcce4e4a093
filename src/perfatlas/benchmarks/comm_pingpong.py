"""comm.pingpong: MPI point-to-point latency and bandwidth vs message size (OSU osu_latency,
osu_bw, osu_bibw), between rank 0 and a peer, one result per message size.

Latency is half a round trip (direction=uni) or one simultaneous exchange (direction=bi);
bandwidth keeps a window of nonblocking sends in flight. Each sample is a batch of iterations
calibrated to last min_sample_time after a warm-up; every iteration's duration is kept in a
histogram. The link is labelled intra-node or inter-node from the host names the ranks report.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.base import choice_param, int_param, register
from perfatlas.benchmarks.mpi import MpiBenchmark, message_param, np_param, timing_params
from perfatlas.errors import UserError
from perfatlas.machine import Machine


@register
class CommPingPong(MpiBenchmark):
    name = "comm.pingpong"
    summary = "MPI latency and bandwidth between two ranks vs message size (0 B .. 4 MiB)"
    executable = "pa-comm-pingpong"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "a ping-pong needs two ranks"
    label_keys = ("np", "direction", "peer", "min_bytes", "max_bytes", "bytes")
    sweep_keys = ("min_bytes", "max_bytes")
    params = (
        np_param(),
        message_param("min_bytes", 0, "smallest message (0, then doubling sizes)"),
        message_param("max_bytes", 4 * 2**20, "largest message"),
        choice_param("direction", ("uni", "bi"), "uni: ping-pong; bi: both ranks send at once"),
        int_param("peer", 1, "the rank that exchanges messages with rank 0"),
        int_param("window", 64, "nonblocking sends in flight per bandwidth iteration"),
        message_param(
            "window_bytes",
            4 * 2**20,
            "at most this many bytes in flight (receive slots stay cache-sized: the transport, not DRAM)",
            1,
        ),
        *timing_params(time_limit=2.0),
    )

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        if params["peer"] >= params["np"]:
            raise UserError(
                f"{self.name}: peer={params['peer']} is not a rank of np={params['np']}; "
                f"choose a peer between 1 and {params['np'] - 1}"
            )
        if params["min_bytes"] > params["max_bytes"]:
            raise UserError(f"{self.name}: min_bytes exceeds max_bytes")
        if params["max_bytes"] > 2**30:
            raise UserError(f"{self.name}: max_bytes is above the largest message, 1 GiB")
