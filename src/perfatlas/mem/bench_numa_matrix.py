"""mem.numa_matrix: latency and read bandwidth from every CPU node to every memory node.

One launch measures the whole matrix (Intel Memory Latency Checker's --latency_matrix and
--bandwidth_matrix; McCalpin's STREAM under numactl --cpunodebind --membind): per (cpu node,
memory node) a pointer chase by one thread on the row's first PU, and a read of a buffer by the
row's threads (one per core), the buffer bound to the column's node and its pages read back with
move_pages. Memory-only nodes (CXL, HBM in flat mode) are columns without a row.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, register
from perfatlas.benchmarks.time_model import sampled_seconds
from perfatlas.common.errors import UserError
from perfatlas.common.warning import WarningRecord
from perfatlas.launch.contract import misplaced_memory, result_warnings
from perfatlas.machine.topology import Machine


@register
class MemNumaMatrix(Benchmark):
    name = "mem.numa_matrix"
    summary = "latency and read bandwidth from every CPU node to every memory node"
    executable = "pa-mem-numa-matrix"
    metrics = {"latency_ns": "ns", "bandwidth_Bps": "byte/s"}
    refines = {
        key: {"default": 0, "minimum": 0, "help": f"{what} (default: 4x the last-level cache)"}
        for key, what in (
            ("latency_bytes", "working set of the pointer chase"),
            ("bandwidth_bytes", "buffer read by the threads of one CPU node"),
        )
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        for key in ("latency_bytes", "bandwidth_bytes"):
            if not params[key]:
                params[key] = 4 * machine.last_level_cache_bytes
            if params[key] < 4096:
                raise UserError(f"mem.numa_matrix: {key}={params[key]} is below the minimum 4KiB")
        machine.check_bytes(max(params["latency_bytes"], params["bandwidth_bytes"]))
        per_node: dict[int, int] = {}
        for pu in machine.topology["pus"]:
            per_node[pu["numa_node"]] = per_node.get(pu["numa_node"], 0) + 1
        fewest = min(per_node.values(), default=0)
        if params["threads"] > fewest:
            raise UserError(
                f"mem.numa_matrix: threads={params['threads']} exceeds the {fewest} PUs of the "
                "smallest NUMA node with PUs"
            )
        return params

    def warnings(self, document: dict) -> list[WarningRecord]:
        """Memory that did not land on the column's node, besides the usual ones."""
        found = result_warnings(document)
        node = str(document.get("params", {}).get("mem_node"))
        misplaced = misplaced_memory(node, document.get("placement") or {})
        if not document.get("not_measurable") and misplaced:
            found.append(misplaced)
        return found

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Samples of one streaming pass over the working set (or min_sample_time)."""
        return sampled_seconds(params)
