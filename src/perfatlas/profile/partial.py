"""The partial view of a profile, built from the rank files of a program that aborted or never
reached MPI_Finalize (no ipm-profile.json), flagged as such (profile_files reads a folder).

The partial view has the shape of perfatlas.ipm/1 (docs/profile.md) so that one set of views
draws both: calls, the message-size histogram, the overflow, the communication matrix (records of
kind send and put, by destination) and load imbalance by the library's own method, among the ranks
that left a file (for each region path and collective call, a rank's time in it minus the least
time of any rank that left a file and made it). A rank file without record kinds (written by an
older library) gives no matrix and no LBST. `partial_reason` says why the view is partial.
"""

from __future__ import annotations

import re
from collections import defaultdict

from perfatlas.profile.documents import (
    CATEGORIES,
    PROFILE_FILE,
    PROFILE_SCHEMA,
)

MATRIX_MAX_TASKS = 1024  # PA_IPM_MATRIX_MAX_TASKS (native/ipm/aggregate.h)


def spread(values: list[float]) -> dict[str, float] | None:
    """{sum, min, max, avg} of one quantity over ranks; None when no rank has it."""
    if not values:
        return None
    return {
        "sum": sum(values),
        "min": min(values),
        "max": max(values),
        "avg": sum(values) / len(values),
    }


def path_join(parent: str, name: str) -> str:
    """A region's path: its parent's and its name, joined by "/", with "/" and "\\" in the name
    escaped by "\\" and an empty name written "\\e", as the library writes paths (names.h), so
    that "a/b" at the top level is not "a" > "b"."""
    escaped = name.replace("\\", "\\\\").replace("/", "\\/") if name else "\\e"
    return f"{parent}/{escaped}" if parent else escaped


_NAME = re.compile(r"(?:\\.|[^/\\])+")  # one escaped name of a path


def region_paths(rank: dict) -> dict[int, str]:
    """Region id -> path ("" for region 0). Ids differ between ranks, paths do not. The regions
    are a tree (documents.region_tree checked it when the file was loaded)."""
    regions = {region["id"]: region for region in rank["regions"]}
    paths: dict[int, str] = {}

    def path(id_: int) -> str:
        chain = []  # id_ and its ancestors whose paths are not known yet, innermost first
        while id_ not in paths and regions[id_]["parent"] is not None:
            chain.append(id_)
            id_ = regions[id_]["parent"]
        paths.setdefault(id_, "")
        for inner in reversed(chain):
            paths[inner] = path_join(paths[regions[inner]["parent"]], regions[inner]["name"])
        return paths[chain[0]] if chain else paths[id_]

    return {id_: path(id_) for id_ in regions}


def category(call: str) -> str:
    """docs/profile.md: MPI-IO is MPI_File_*, POSIX I/O the plain libc names."""
    if call.startswith("MPI_File_"):
        return "mpi-io"
    return "mpi" if call.startswith(("MPI_", "PMPI_")) else "posix-io"


def _runs(numbers: list[int]) -> list[list[int]]:
    """Sorted rank numbers as runs of consecutive ones, [first, last] each."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number - 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return runs


def _gaps(present: list[int], size: int) -> list[list[int]]:
    """The runs of 0 .. size-1 missing from the sorted `present`: a million missing ranks are one
    run, never a million numbers."""
    gaps, expected = [], 0
    for number in [*present, size]:
        if number > expected:
            gaps.append([expected, number - 1])
        expected = number + 1
    return gaps


def _listed(runs: list[list[int]], limit: int = 10) -> str:
    """Runs as "1, 3-5, 9" (two consecutive ranks as "3, 4"), the first `limit` of them."""
    words = [
        ", ".join(map(str, range(a, b + 1))) if b - a < 2 else f"{a}-{b}" for a, b in runs[:limit]
    ]
    return ", ".join(words) + (f" and {len(runs) - limit} more" if len(runs) > limit else "")


def _ranks(runs: list[list[int]]) -> str:
    count = sum(b - a + 1 for a, b in runs)
    return f"rank{'s' * (count > 1)} {_listed(runs)}"


def _reason(ranks: list[dict], size: int) -> str:
    by_reason = defaultdict(list)
    for rank in ranks:
        if rank.get("partial"):
            by_reason[rank.get("reason") or "no reason given"].append(rank["rank"])
    parts = [f"{reason} on {_ranks(_runs(numbers))}" for reason, numbers in by_reason.items()]
    if missing := _gaps([rank["rank"] for rank in ranks], size):
        parts.append(f"no rank file from {_ranks(missing)} of {size}")
    return "; ".join(parts) or f"rank 0 wrote no {PROFILE_FILE}"


def _regions(ranks: list[dict], paths: list[dict[int, str]], lbst: dict | None) -> list[dict]:
    """Regions merged by path over the ranks (a parent is interned before its children); with
    `lbst` (path -> rank -> seconds) MPI time waited in collectives moves to lbst_s."""
    order, parent, name = {}, {}, {}
    figures = defaultdict(lambda: defaultdict(list))  # path -> figure -> values over ranks
    for rank, mine in zip(ranks, paths):
        for region in sorted(rank["regions"], key=lambda region: region["id"]):
            path = mine[region["id"]]
            order.setdefault(path, len(order))
            parent[path] = None if region["parent"] is None else mine[region["parent"]]
            name[path] = region["name"]
            values = {figure: region.get(figure) for figure in ("wall_s", *CATEGORIES, "entries")}
            if lbst is not None and values["mpi_s"] is not None:
                waited = lbst.get(path, {}).get(rank["rank"], 0.0)
                values["mpi_s"] -= waited
                values["lbst_s"] = waited
            for figure, value in values.items():
                if value is not None:
                    figures[path][figure].append(value)
            figures[path]["ranks"].append(1)
    return [
        {
            "id": id_,
            "name": name[path],
            "path": path,
            "parent": None if parent[path] is None else order[parent[path]],
            "ranks": len(figures[path]["ranks"]),
            "entries": sum(figures[path]["entries"]) if figures[path]["entries"] else None,
            **{figure: spread(figures[path][figure]) for figure in ("wall_s", *CATEGORIES)},
        }
        for path, id_ in order.items()
    ]


def has_kinds(ranks: list[dict]) -> bool:
    return all("kind" in record for rank in ranks for record in rank["records"])


def _call_times(ranks: list[dict], paths: list[dict[int, str]]) -> dict:
    """(path, call) -> rank -> [count, bytes, seconds, collective]."""
    totals = defaultdict(lambda: defaultdict(lambda: [0, 0, 0.0, False]))
    for rank, mine in zip(ranks, paths):
        for record in rank["records"]:
            sums = totals[(mine[record["region"]], record["call"])][rank["rank"]]
            sums[0] += record["count"]
            sums[1] += record["bytes"]
            sums[2] += record["total_s"]
            sums[3] = record.get("kind") == "coll"
    return totals


def _waited(per_rank: dict) -> dict[int, float]:
    """LBST of one collective (path, call): each rank's time less the least over the ranks."""
    least = min(s[2] for s in per_rank.values())
    return {rank: s[2] - least for rank, s in per_rank.items()}


def _calls(totals: dict, ids: dict[str, int], kinds: bool) -> list[dict]:
    calls = []
    for (path, call), per_rank in totals.items():
        collective = any(s[3] for s in per_rank.values()) if kinds else None
        calls.append(
            {
                "region": ids[path],
                "call": call,
                "category": category(call),
                "collective": collective,
                "count": sum(s[0] for s in per_rank.values()),
                "bytes": sum(s[1] for s in per_rank.values()),
                "ranks": len(per_rank),
                "time_s": spread([s[2] for s in per_rank.values()]),
                "lbst_s": sum(_waited(per_rank).values()) if collective else None,
            }
        )
    return calls


def _lbst_by_path(totals: dict) -> dict[str, dict[int, float]]:
    """path -> rank -> LBST seconds of its collectives in that region and the regions inside it."""
    found = defaultdict(lambda: defaultdict(float))
    for (path, _), per_rank in totals.items():
        if not any(s[3] for s in per_rank.values()):
            continue
        parts = _NAME.findall(path)  # escaped names: "/".join gives the paths back
        for rank, seconds in _waited(per_rank).items():
            for depth in range(len(parts) + 1):  # the region and every region enclosing it
                found["/".join(parts[:depth])][rank] += seconds
    return found


def _matrix(ranks: list[dict], size: int) -> dict | None:
    """Sender row, receiver column; None above MATRIX_MAX_TASKS, as the library does."""
    if size > MATRIX_MAX_TASKS:
        return None
    bytes_ = [[0] * size for _ in range(size)]
    messages = [[0] * size for _ in range(size)]
    for rank in ranks:
        for record in rank["records"]:
            if record.get("kind") in ("send", "put") and record["peer"] is not None:
                bytes_[rank["rank"]][record["peer"]] += record["bytes"]
                messages[rank["rank"]][record["peer"]] += record["count"]
    return {
        "what": "point-to-point and one-sided bytes and messages, sender row, receiver column "
        "(collectives excluded; rows of ranks that left no file are zero)",
        "bytes": bytes_,
        "messages": messages,
    }


def _histogram(ranks: list[dict]) -> list[dict]:
    sums = defaultdict(lambda: [0, 0, 0.0])
    for rank in ranks:
        for record in rank["records"]:
            entry = sums[(record["call"], record["bucket"])]
            entry[0] += record["count"]
            entry[1] += record["bytes"]
            entry[2] += record["total_s"]
    return [
        {"call": call, "bucket": bucket, "count": c, "bytes": b, "time_s": t}
        for (call, bucket), (c, b, t) in sorted(sums.items())
    ]


def _rank_entry(rank: dict, lbst: dict | None) -> dict:
    whole = next(region for region in rank["regions"] if region["parent"] is None)
    figures = {name: whole.get(name) for name in ("wall_s", *CATEGORIES, "user_s", "system_s")}
    if lbst is not None and figures["mpi_s"] is not None:
        figures["lbst_s"] = lbst.get("", {}).get(rank["rank"], 0.0)
        figures["mpi_s"] -= figures["lbst_s"]
    placement = rank.get("placement") or {}
    return {
        "rank": rank["rank"],
        "host": rank.get("host"),
        "pid": rank.get("pid"),
        "cpus_allowed": placement.get("cpus_allowed"),
        "cpu": placement.get("cpu"),
        "partial": bool(rank.get("partial")),
        **figures,
        "overflow_events": rank["overflow"]["count"],
    }


def partial_profile(ranks: list[dict], command: list[str]) -> dict:
    """A perfatlas.ipm/1-shaped view of the rank files (docs/profile.md), flagged partial."""
    ranks = sorted(ranks, key=lambda rank: rank["rank"])
    size = max(rank["size"] for rank in ranks)
    paths = [region_paths(rank) for rank in ranks]
    kinds = has_kinds(ranks)
    totals = _call_times(ranks, paths)
    lbst = _lbst_by_path(totals) if kinds else None
    regions = _regions(ranks, paths, lbst)
    entries = [_rank_entry(rank, lbst) for rank in ranks]
    walls = [entry["wall_s"] for entry in entries if entry["wall_s"] is not None]
    return {
        "schema": PROFILE_SCHEMA,
        "partial": True,
        "partial_reason": _reason(ranks, size),
        "command": list(command),
        "tasks": size,
        "hosts": sorted({rank["host"] for rank in ranks if rank.get("host")}),
        "timer": ranks[0].get("timer"),
        "lbst_method": (
            "per region and collective call: a rank's time in the call minus the least time any "
            "rank that left a file spent in it"
            if kinds
            else "not estimated: these rank files do not say which calls are collective"
        ),
        "wallclock_s": spread(walls) if len(walls) == len(entries) else None,
        "regions": regions,
        "calls": _calls(totals, {region["path"]: region["id"] for region in regions}, kinds),
        "histogram": _histogram(ranks),
        "matrix": _matrix(ranks, size) if kinds else None,
        "ranks": entries,
        "overflow": {
            "count": sum(rank["overflow"]["count"] for rank in ranks),
            "ranks": sum(1 for rank in ranks if rank["overflow"]["count"]),
        },
        "region_errors": _region_errors(ranks),
    }


def _region_errors(ranks: list[dict]) -> dict[str, int]:
    """Each MPI_Pcontrol error count (docs/profile.md) summed over the ranks."""
    sums: dict[str, int] = defaultdict(int)
    for rank in ranks:
        for name, count in (rank.get("region_errors") or {}).items():
            sums[name] += count
    return dict(sums)
