"""The profile of a folder: ipm-profile.json when rank 0 wrote it, else a partial view built from
the rank files (a program that aborted or never reached MPI_Finalize), flagged as such.

The partial view has the shape of perfatlas.ipm/1 (docs/profile.md) so that one set of views
draws both. From raw rank tables it can sum calls, the message-size histogram and the overflow;
it leaves out what needs the library's own knowledge: the communication matrix (a rank table does
not say which calls send), load imbalance (which calls are collective), and region times a rank
file does not carry. `partial_reason` says why the view is partial.
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


def _regions(ranks: list[dict], paths: list[dict[int, str]]) -> list[dict]:
    """Regions merged by path over the ranks (a parent is interned before its children)."""
    order, parent, name = {}, {}, {}
    figures = defaultdict(lambda: defaultdict(list))  # path -> figure -> values over ranks
    for rank, mine in zip(ranks, paths):
        for region in sorted(rank["regions"], key=lambda region: region["id"]):
            path = mine[region["id"]]
            order.setdefault(path, len(order))
            parent[path] = None if region["parent"] is None else mine[region["parent"]]
            name[path] = region["name"]
            for figure in ("wall_s", *CATEGORIES, "entries"):
                if region.get(figure) is not None:
                    figures[path][figure].append(region[figure])
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


def _calls(ranks: list[dict], paths: list[dict[int, str]], ids: dict[str, int]) -> list[dict]:
    totals = defaultdict(lambda: defaultdict(lambda: [0, 0, 0.0]))  # (path, call) -> rank -> sums
    for rank, mine in zip(ranks, paths):
        for record in rank["records"]:
            sums = totals[(mine[record["region"]], record["call"])][rank["rank"]]
            sums[0] += record["count"]
            sums[1] += record["bytes"]
            sums[2] += record["total_s"]
    return [
        {
            "region": ids[path],
            "call": call,
            "category": category(call),
            "collective": None,
            "count": sum(s[0] for s in per_rank.values()),
            "bytes": sum(s[1] for s in per_rank.values()),
            "ranks": len(per_rank),
            "time_s": spread([s[2] for s in per_rank.values()]),
            "lbst_s": None,
        }
        for (path, call), per_rank in totals.items()
    ]


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


def _rank_entry(rank: dict) -> dict:
    whole = next(region for region in rank["regions"] if region["parent"] is None)
    return {
        "rank": rank["rank"],
        "host": rank.get("host"),
        "pid": rank.get("pid"),
        "partial": bool(rank.get("partial")),
        **{name: whole.get(name) for name in ("wall_s", *CATEGORIES, "user_s", "system_s")},
        "overflow_events": rank["overflow"]["count"],
    }


def partial_profile(ranks: list[dict], command: list[str]) -> dict:
    """A perfatlas.ipm/1-shaped view of the rank files (docs/profile.md), flagged partial."""
    ranks = sorted(ranks, key=lambda rank: rank["rank"])
    size = max(rank["size"] for rank in ranks)
    paths = [region_paths(rank) for rank in ranks]
    regions = _regions(ranks, paths)
    entries = [_rank_entry(rank) for rank in ranks]
    walls = [entry["wall_s"] for entry in entries if entry["wall_s"] is not None]
    return {
        "schema": PROFILE_SCHEMA,
        "partial": True,
        "partial_reason": _reason(ranks, size),
        "command": list(command),
        "tasks": size,
        "hosts": sorted({rank["host"] for rank in ranks if rank.get("host")}),
        "timer": ranks[0].get("timer"),
        "lbst_method": "not estimated in a partial profile: waiting in collectives is in mpi_s",
        "wallclock_s": spread(walls) if len(walls) == len(entries) else None,
        "regions": regions,
        "calls": _calls(ranks, paths, {region["path"]: region["id"] for region in regions}),
        "histogram": _histogram(ranks),
        "matrix": None,
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
