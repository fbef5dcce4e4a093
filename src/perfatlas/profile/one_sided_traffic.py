"""A profile's one-sided communication as the join with the comm atlas (atlas_join) needs it,
made from the rank files where they are read and kept in the profile document (`one_sided`,
docs/profile.md).

An MPI-3 transfer call only starts the access: it may return before a byte moved, and the
access completes in a synchronization call (MPI-3.1 §11.5: a fence, the end of an access
epoch, a flush). So a region's one-sided time is that of both, per rank, from which the join
tells transfer from waiting as for point-to-point; its transfers are classed like comm.rma's
operations (get: the origin receives; put: the target does), each at its sender's and target's
link class."""

from __future__ import annotations

from collections import defaultdict

from perfatlas.machine.link_class import ACROSS_HOSTS, link_class
from perfatlas.profile.partial import region_paths
from perfatlas.profile.rank_placement import RankPlace

RMA_TRANSFERS = {  # a transfer call -> the comm.rma operation it is timed as
    "MPI_Put": "put", "MPI_Rput": "put", "MPI_Accumulate": "put", "MPI_Raccumulate": "put",
    "MPI_Get": "get", "MPI_Rget": "get", "MPI_Get_accumulate": "get",
    "MPI_Rget_accumulate": "get", "MPI_Fetch_and_op": "get", "MPI_Compare_and_swap": "get",
}  # fmt: skip
RMA_SYNCHRONIZATION = frozenset(  # where the accesses of an epoch complete (MPI-3.1 §11.5)
    f"MPI_Win_{name}"
    for name in ("fence", "start", "complete", "post", "wait", "test", "lock", "unlock",
                 "lock_all", "unlock_all", "flush", "flush_all", "flush_local",
                 "flush_local_all", "sync")
)  # fmt: skip
FENCE = "MPI_Win_fence"  # collective over the window's group: a barrier at the least


def one_sided(ranks: list[dict], document: dict, places: list[RankPlace]) -> list[dict]:
    """Rows {"region", "calls" (its transfer and synchronization calls), "rank_s" ([[rank,
    seconds in them]]), "floor_s" (each record's calls at its fastest call's time, summed),
    "fences" (MPI_Win_fence calls over the ranks), "transfers" ([{"op", "link", "hosts" (across
    hosts), "messages", "bytes"}], at the origin, the link to the target)}, for each region
    where one was called."""
    ids = {region["path"]: region["id"] for region in document["regions"]}
    by_rank = {place.rank: place for place in places}
    seconds: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    calls: dict[int, set[str]] = defaultdict(set)
    floor: dict[int, float] = defaultdict(float)
    fences: dict[int, int] = defaultdict(int)
    transfers: dict[int, dict[tuple, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    for rank in ranks:
        paths = region_paths(rank)
        here = by_rank.get(rank["rank"])
        for record in rank["records"]:
            call = record["call"]
            region = ids.get(paths.get(record["region"], ""))
            if region is None or (call not in RMA_TRANSFERS and call not in RMA_SYNCHRONIZATION):
                continue
            seconds[region][rank["rank"]] += record["total_s"]
            calls[region].add(call)
            floor[region] += record["count"] * (record.get("min_s") or 0.0)
            fences[region] += record["count"] if call == FENCE else 0
            if call in RMA_TRANSFERS and record["peer"] is not None:
                there = by_rank.get(record["peer"])
                link = link_class(here, there) if here and there else None
                hosts = tuple(sorted((here.host, there.host))) if link == ACROSS_HOSTS else ()  # type: ignore[union-attr]
                entry = transfers[region][(RMA_TRANSFERS[call], link, hosts)]
                entry[0] += record["count"]
                entry[1] += record["bytes"]
    return [
        {"region": r, "calls": sorted(calls[r]), "rank_s": sorted(map(list, by.items())),
         "floor_s": floor[r], "fences": fences[r],
         "transfers": [{"op": op, "link": link, **({"hosts": list(h)} if h else {}),
                        "messages": m, "bytes": n}
                       for (op, link, h), (m, n) in sorted(transfers[r].items(), key=_order)]}
        for r, by in sorted(seconds.items())
    ]  # fmt: skip


def _order(item: tuple) -> tuple:
    (op, link, hosts), _ = item
    return op, link or "", hosts
