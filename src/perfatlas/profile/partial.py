"""The profile of a folder: ipm-profile.json when rank 0 wrote it, else a partial view built from
the rank files (a program that aborted or never reached MPI_Finalize), flagged as such.

The partial view has the shape of perfatlas.ipm/1 (docs/profile.md) so that one set of views
draws both: calls, the message-size histogram, the overflow, the communication matrix (records of
kind send and put, by destination) and load imbalance by the library's own method, among the ranks
that left a file (for each region path and collective call, a rank's time in it minus the least
time of any rank that left a file and made it). A rank file without record kinds (written by an
older library) gives no matrix and no LBST. `partial_reason` says why the view is partial.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from perfatlas.errors import UserError
from perfatlas.profile.documents import (
    CATEGORIES,
    PROFILE_FILE,
    PROFILE_SCHEMA,
    RANK_PATTERN,
    load_profile,
    load_rank,
)


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


def region_paths(rank: dict) -> dict[int, str]:
    """Region id -> "outer/inner" ("" for region 0). Ids differ between ranks, paths do not."""
    regions = {region["id"]: region for region in rank["regions"]}

    def path(id_: int) -> str:
        region = regions[id_]
        if region["parent"] is None:
            return ""
        parent = path(region["parent"])
        return f"{parent}/{region['name']}" if parent else region["name"]

    return {id_: path(id_) for id_ in regions}


def category(call: str) -> str:
    """docs/profile.md: MPI-IO is MPI_File_*, POSIX I/O the plain libc names."""
    if call.startswith("MPI_File_"):
        return "mpi-io"
    return "mpi" if call.startswith(("MPI_", "PMPI_")) else "posix-io"


def _reason(ranks: list[dict], size: int) -> str:
    by_reason = defaultdict(list)
    for rank in ranks:
        if rank.get("partial"):
            by_reason[rank.get("reason") or "no reason given"].append(rank["rank"])
    parts = [
        f"{reason} on rank{'s' * (len(numbers) > 1)} {', '.join(map(str, numbers))}"
        for reason, numbers in by_reason.items()
    ]
    missing = sorted(set(range(size)) - {rank["rank"] for rank in ranks})
    if missing:
        parts.append(
            f"no rank file from rank{'s' * (len(missing) > 1)} "
            f"{', '.join(map(str, missing))} of {size}"
        )
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


def _has_kinds(ranks: list[dict]) -> bool:
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
        for rank, seconds in _waited(per_rank).items():
            parts = path.split("/") if path else []
            for depth in range(len(parts) + 1):  # the region and every region enclosing it
                found["/".join(parts[:depth])][rank] += seconds
    return found


def _matrix(ranks: list[dict], size: int) -> dict:
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
    return {
        "rank": rank["rank"],
        "host": rank.get("host"),
        "pid": rank.get("pid"),
        "partial": bool(rank.get("partial")),
        **figures,
        "overflow_events": rank["overflow"]["count"],
    }


def partial_profile(ranks: list[dict], command: list[str]) -> dict:
    """A perfatlas.ipm/1-shaped view of the rank files (docs/profile.md), flagged partial."""
    ranks = sorted(ranks, key=lambda rank: rank["rank"])
    size = max(rank["size"] for rank in ranks)
    paths = [region_paths(rank) for rank in ranks]
    kinds = _has_kinds(ranks)
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
    }


def read_folder(folder: Path, command: list[str]) -> dict | None:
    """The profile perfatlas-ipm left in `folder`; None when it wrote nothing there."""
    if (folder / PROFILE_FILE).exists():
        return load_profile(folder / PROFILE_FILE)
    files = sorted(folder.glob(RANK_PATTERN))
    if not files:
        return None
    return partial_profile([load_rank(path) for path in files], command)


def read_path(path: Path) -> dict:
    """A profile file (ipm-profile.json or a --json copy), or the profile of a folder."""
    if not path.is_dir():
        return load_profile(path)
    document = read_folder(path, [])
    if document is None:
        raise UserError(f"{path} holds no perfatlas-ipm profile (no {PROFILE_FILE}, no rank files)")
    return document
