"""comm.pingpong: MPI point-to-point latency and bandwidth vs message size (OSU osu_latency,
osu_bw, osu_bibw), between rank 0 and a peer, one result per message size.

Latency is half a round trip (direction=uni) or one simultaneous exchange (direction=bi);
bandwidth keeps a window of nonblocking sends in flight. Each sample is a batch of iterations
calibrated to last min_sample_time after a warm-up; every iteration's duration is kept in a
histogram. The link is labelled intra-node or inter-node from the host names the ranks report.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds, doublings
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class CommPingPong(MpiBenchmark):
    name = "comm.pingpong"
    summary = "MPI latency and bandwidth between two ranks vs message size (0 B .. 4 MiB)"
    executable = "pa-comm-pingpong"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    needs = "a ping-pong needs two ranks"
    label_keys = ("np", "direction", "peer", "min_bytes", "max_bytes", "bytes")
    sweep_keys = ("min_bytes", "max_bytes")

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

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """One measurement per message size: 0 if asked, then doublings up to max_bytes."""
        low, high = int(params.get("min_bytes") or 0), int(params.get("max_bytes") or 4 << 20)
        return comm_seconds(params, (1 if low == 0 else 0) + doublings(max(low, 1), high))
