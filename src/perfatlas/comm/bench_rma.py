"""comm.rma: MPI-3 one-sided latency: MPI_Get and MPI_Put (each followed by MPI_Win_flush) of
k = 1, 2, 4 .. max_count elements of char, int and double (max_count up to 131072: 1 MiB of
doubles, a transfer's bandwidth too), with one accessor, two concurrent accessors from one host,
one accessor on each side; and load/store through a shared-memory window
(MPI_Win_allocate_shared) between rank 0 and a rank on its host. Every access is verified.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import comm_seconds, doublings
from perfatlas.comm.mpi import MpiBenchmark
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine


@register
class CommRma(MpiBenchmark):
    name = "comm.rma"
    summary = "MPI-3 RMA get/put latency of k chars, ints, doubles; shared-memory load/store"
    executable = "pa-comm-rma"
    metrics = {"latency_ns": "ns"}
    needs = "one-sided access needs an origin and a target rank"
    label_keys = ("np", "cases", "case", "op", "type", "count")

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        if params["cases"] == "two_same_node" and params["np"] < 3:
            raise UserError(
                f"{self.name}: cases=two_same_node needs np of at least 3 (two accessors and "
                f"the target), but np={params['np']}"
            )

    def label(self, params: dict[str, Any]) -> str:
        if "case" in params:  # a document: its own case, not the selection
            params = {k: v for k, v in params.items() if k != "cases"}
        return super().label(params)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """The cases (all: 4) x get/put x 3 types x counts 1, 2, 4 .. max_count."""
        cases = 4 if params.get("cases", "all") == "all" else 1
        return comm_seconds(
            params, cases * 2 * 3 * doublings(1, int(params.get("max_count") or 64))
        )
