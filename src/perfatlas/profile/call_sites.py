"""The program's call sites, over all ranks (docs/profile.md, Call sites): each rank file's records
grouped by where the call was made, the sites resolved to `function (file:line)` by
perfatlas.profile.symbols.

A record's site is return addresses of that rank's process. Address-space randomization loads
every rank's objects elsewhere, so an address is first made (object, offset) with the objects
its rank file lists; one site of the program is then the same (object, offset) frames in every
rank, and each object's offsets are resolved once, whichever rank made the calls."""

from __future__ import annotations

import linecache
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict

from perfatlas.profile.partial import category, spread
from perfatlas.profile.symbols import Frame, Resolver

UNKNOWN = "(no call site)"  # records without one: the table's overflow, a library without sites
SOURCE_CHARS = 160  # of a source line kept with its frame


def _located(objects: list[dict], address: int) -> tuple[str, int, dict] | None:
    """(path, offset, object) of the object whose code holds the call before the return address
    `address`, or None."""
    for obj in objects:
        if any(start < address <= end for start, end in obj["segments"]):
            return obj["path"], address - obj["base"], obj
    return None


def _source(frame: Frame) -> str | None:
    """The line a frame names, as its file reads now; None when the file cannot be read."""
    if not frame.file or not frame.line:
        return None
    text = linecache.getline(frame.file, frame.line).strip()
    return text[:SOURCE_CHARS] or None


def _frame_document(frame: Frame) -> dict:
    return {
        **asdict(frame),
        "inlined": [list(step) for step in frame.inlined],
        "label": frame.label(),
        "source": _source(frame),
    }


def _site_of(record: dict, objects: list[dict], shapes: dict[str, dict]) -> tuple:
    """A record's site as (object, offset) frames; an address in no listed object keeps itself,
    as ("", address). Each object met is noted in `shapes` (path -> the object as listed)."""
    site = []
    for address in record.get("site") or []:
        found = _located(objects, address)
        if found is None:
            site.append(("", address))
            continue
        path, offset, obj = found
        shapes.setdefault(path, obj)
        site.append((path, offset))
    return tuple(site)


def _resolved(sites: Iterable[tuple], shapes: dict[str, dict]) -> dict[tuple[str, int], dict]:
    """(object, offset) -> its frame document, for every frame of `sites`, each object's offsets
    resolved at once."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for site in sites:
        for path, offset in site:
            if path:
                wanted[path].add(offset)
    frames: dict[tuple[str, int], dict] = {}
    with Resolver() as resolver:
        for path, offsets in wanted.items():
            obj = shapes[path]
            relative = {  # the object at base 0: its addresses are its offsets
                "path": path,
                "base": 0,
                "build_id": obj.get("build_id"),
                "segments": [
                    [start - obj["base"], end - obj["base"]] for start, end in obj["segments"]
                ],
            }
            for offset, frame in resolver.resolve([relative], sorted(offsets)).items():
                frames[(path, offset)] = _frame_document(frame)
    return frames


def _unlocated(address: int) -> dict:
    return {
        "object": "",
        "offset": address,
        "function": None,
        "file": None,
        "line": None,
        "inlined": [],
        "reason": "not in any loaded object",
        "label": f"{address:#x} (not in any loaded object)",
        "source": None,
    }


def call_sites(ranks: list[dict]) -> dict | None:
    """The call-site table of a run from its rank files: every (site, call) with its count and
    bytes summed over the ranks and its time's spread over the ranks that made it, the most
    time first. None when no rank file has sites (PERFATLAS_IPM_CALLSTACK=0, or a library
    older than call sites)."""
    depths = [rank.get("callstack") for rank in ranks if rank.get("callstack")]
    if not depths:
        return None
    per_rank: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    totals: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    shapes: dict[str, dict] = {}
    for rank in ranks:
        objects = rank.get("objects") or []
        for record in rank["records"]:
            key = (_site_of(record, objects, shapes), record["call"])
            per_rank[key][rank["rank"]] += record["total_s"]
            totals[key][0] += record["count"]
            totals[key][1] += record["bytes"]
    frames = _resolved((site for site, _ in per_rank), shapes)
    rows = []
    for (site, call), times in per_rank.items():
        chain = [frames.get(frame) or _unlocated(frame[1]) for frame in site]
        slowest = max(times, key=lambda rank: (times[rank], -rank))
        rows.append(
            {
                "site": chain[0]["label"] if chain else UNKNOWN,
                "frames": chain,
                "call": call,
                "category": category(call),
                "count": totals[(site, call)][0],
                "bytes": totals[(site, call)][1],
                "ranks": len(times),
                "time_s": spread(list(times.values())),
                "slowest_rank": slowest,
            }
        )
    rows.sort(key=lambda row: (-row["time_s"]["sum"], row["site"], row["call"]))
    unwinders = sorted({rank["unwinder"] for rank in ranks if rank.get("unwinder")})
    return {"callstack": max(depths), "unwinder": ", ".join(unwinders) or None, "sites": rows}
