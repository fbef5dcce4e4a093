"""comm.hotspot: k senders stream to one receiver (rank 0) at once, k = 1 .. max_senders; the
bandwidth each sender gets as k grows, and the aggregate the receiver takes in (one result per k).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class CommHotspot(MpiBenchmark):
    name = "comm.hotspot"
    anomaly_judged = True
    summary = "MPI bandwidth per sender when k = 1 .. max_senders ranks send to rank 0 at once"
    executable = "pa-comm-hotspot"
    metrics = {"bandwidth_per_sender_Bps": "byte/s", "aggregate_bandwidth_Bps": "byte/s"}
    needs = "a hotspot needs a receiver and at least one sender"
    label_keys = ("np", "senders", "max_senders", "bytes")

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        senders = params["max_senders"]
        if senders >= params["np"]:
            raise UserError(
                f"{self.name}: max_senders={senders} needs np of at least {senders + 1} (rank 0 "
                f"receives from ranks 1 .. {senders}), but np={params['np']}"
            )

    def label(self, params: dict[str, Any]) -> str:
        if "senders" in params:  # a document: k, not the maximum
            params = {k: v for k, v in params.items() if k != "max_senders"}
        return super().label(params)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """One measurement per number of senders."""
        senders = int(params.get("max_senders") or 0) or int(params.get("np") or 2) - 1
        return comm_seconds(params, senders)
