"""Validate native result documents (docs/contract.md) and read what their placement says."""

from __future__ import annotations

from numbers import Real

from perfatlas.errors import UserError
from perfatlas.stats import summarize, warnings_for
from perfatlas.units import parse_cpu_list
from perfatlas.warning import Kind, WarningRecord

RESULT_SCHEMA = "perfatlas.result/1"


def validate(document: dict, benchmark: str) -> None:
    """Raise UserError naming the first way the document breaks the contract."""

    def fail(why: str) -> None:
        raise UserError(f"{benchmark} produced an invalid result document: {why} (a perfatlas bug)")

    if not isinstance(document, dict):
        fail("not a JSON object")
    if document.get("schema") != RESULT_SCHEMA:
        fail(f"schema is {document.get('schema')!r}, expected {RESULT_SCHEMA!r}")
    if document.get("benchmark") != benchmark:
        fail(f"benchmark is {document.get('benchmark')!r}")
    if not isinstance(document.get("params"), dict):
        fail("params missing")
    if document.get("not_measurable"):
        if not isinstance(document["not_measurable"], str):
            fail("not_measurable is not a sentence")
        return
    samples = document.get("samples")
    if not isinstance(samples, dict) or not samples:
        fail("samples missing")
    units = document.get("units", {})
    for metric, values in samples.items():
        if not isinstance(values, list) or not values:
            fail(f"samples of {metric} are empty")
        if not all(isinstance(v, Real) for v in values):
            fail(f"samples of {metric} are not all numbers")
        if metric not in units:
            fail(f"metric {metric} has no unit")


def placement_warnings(document: dict) -> list[WarningRecord]:
    """Binding or memory placement that differs from what was asked (read back, never assumed)."""
    placement = document.get("placement") or {}
    found = []
    for thread in placement.get("threads", []):
        requested, applied = thread.get("cpu_requested"), thread.get("cpus_allowed")
        if requested is None or applied is None:
            continue
        if parse_cpu_list(str(applied)) != [requested]:
            found.append(
                WarningRecord(
                    Kind.BINDING_NOT_APPLIED,
                    f"binding not applied: thread {thread.get('thread')} asked for cpu "
                    f"{requested} but may run on {applied}",
                    "check cgroup/cpuset limits (Cpus_allowed_list)",
                )
            )
    node = str(document.get("params", {}).get("node", "local"))
    misplaced = misplaced_memory(node, placement)
    if misplaced:
        found.append(misplaced)
    page = document.get("params", {}).get("page")
    huge = placement.get("huge_page_fraction")
    if page and page > 4096 and huge is not None and huge < 0.99:
        found.append(
            WarningRecord(
                Kind.HUGE_PAGES_PARTIAL,
                f"only {huge:.0%} of the buffer is on {page // 2**20} MiB pages",
                "reserve more huge pages (vm.nr_hugepages) or free memory for them",
            )
        )
    if placement.get("ranks"):  # MPI documents: ranks packed onto shared cores
        from perfatlas.comm.analysis import rank_sharing_warnings

        found += rank_sharing_warnings(placement)
    return found


def misplaced_memory(node: str, placement: dict) -> WarningRecord | None:
    """Memory bound to NUMA node `node` of which under 99 % of the pages landed there."""
    on_node = placement.get("pages_on_node") or {}
    if not (node.isdigit() and on_node and on_node.get(node, 0.0) < 0.99):
        return None
    shares = ", ".join(f"node {k}: {v:.0%}" for k, v in sorted(on_node.items()))
    return WarningRecord(
        Kind.MEMORY_MISPLACED,
        f"memory not where asked: bound to node {node} but pages landed {shares}",
        MEMORY_FIX,
    )


MEMORY_FIX = "free memory on that node (numastat -m) or check the cgroup's cpuset.mems"


def result_warnings(document: dict) -> list[WarningRecord]:
    """Every warning a stored result carries: statistics per metric, then placement."""
    if document.get("not_measurable"):
        return []
    resolution = (document.get("timer") or {}).get("resolution_ns")
    found = []
    for metric, values in document["samples"].items():
        found += warnings_for(summarize(values), document.get("sample_seconds"), resolution, metric)
    return found + placement_warnings(document)
