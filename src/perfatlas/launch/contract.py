"""Validate native result documents (docs/contract.md) and read what their placement says."""

from __future__ import annotations

from numbers import Real

from perfatlas.common.errors import UserError
from perfatlas.common.stats import summarize, warnings_for
from perfatlas.common.units import format_cpu_list, parse_cpu_list
from perfatlas.common.warning import Kind, WarningRecord

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


def rank_sharing_warnings(placement: dict) -> list[WarningRecord]:
    """Ranks of one machine (same kernel boot id) packed onto fewer PUs than there are ranks.

    Ranks bound to one core each but the same core (Open MPI binding every host's first rank to
    core 0 on test hosts that share a machine) get the fix --bind-to none; several ranks on a
    larger shared set mean an oversubscribed host. Only the ranks the document `involved` count:
    the others slept through its measurement (pa_comm_join), so sharing a core with them costs
    a wake-up a millisecond, not a turn on every message.
    """
    ranks = placement.get("ranks") or []
    if placement.get("involved") is not None:
        involved = set(placement["involved"])
        ranks = [r for r in ranks if r.get("rank") in involved]
    by_set: dict[tuple[str, str], list[dict]] = {}
    for rank in ranks:
        machine = rank.get("boot_id") or rank.get("host") or "?"
        by_set.setdefault((machine, str(rank.get("cpus_allowed", ""))), []).append(rank)
    found = []
    for (_, cpus), ranks in by_set.items():
        try:
            pus = parse_cpu_list(cpus) if cpus else []
        except Exception:
            continue
        if not pus or len(ranks) <= len(pus):
            continue
        numbers = format_cpu_list(sorted(int(r["rank"]) for r in ranks))
        hosts = sorted({str(r.get("host")) for r in ranks})
        where = f"host {hosts[0]}" if len(hosts) == 1 else f"hosts {', '.join(hosts)}"
        if len(pus) == 1:
            found.append(
                WarningRecord(
                    Kind.RANKS_SHARE_CORE,
                    f"ranks share a core: ranks {numbers} ({where}) are all bound to cpu {cpus} "
                    "of one machine, so they take turns on it, which inflates latency many "
                    "times over",
                    "pass --mpirun-args '--bind-to none' (or give each host its own cpu set)",
                )
            )
        else:
            found.append(
                WarningRecord(
                    Kind.OVERSUBSCRIBED,
                    f"oversubscribed: {len(ranks)} ranks ({numbers}, {where}) share {len(pus)} "
                    f"PUs ({cpus}) of one machine, so the figures include time-sharing",
                    "use at most one rank per PU per machine for clean figures",
                )
            )
    return found
