"""Load and check the documents perfatlas-ipm writes (docs/profile.md).

The fields the views read are declared once, as nested specs (a type, a Number with its range, a
dict of required keys, a one-element list for "list of", Nullable for "or null", Optional for "may
be absent"); one walker checks a document against its spec and names the first field that does
not fit, then what the structure cannot say is checked (regions form a tree, ids and peers exist).
Every problem is one UserError sentence naming the file (docs/safety/profiles.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from perfatlas.comm.comm_atlas import RMA_OPERATIONS, UNKNOWN_LINK
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import read_text_file
from perfatlas.machine.link_class import LINK_CLASSES

PROFILE_SCHEMA = "perfatlas.ipm/1"
RANK_SCHEMA = "perfatlas.ipm-rank/1"
PROFILE_FILE = "ipm-profile.json"
RANK_PATTERN = "ipm-rank-*.json"
CATEGORIES = ("calc_s", "mpi_s", "io_s", "lbst_s")  # every second of a rank's wallclock is one

MAX_BYTES = 256 * 2**20  # far above any document the library writes (a matrix of 1024 tasks)
MAX_TASKS = 2**31 - 1  # ranks are C ints
MAX_BUCKET = 64  # size buckets 0..64 (docs/profile.md)
MAX_FRAMES = 8  # of a call site (PA_IPM_MAX_FRAMES, native/ipm/ipm.h)
MAX_FIGURE = 1e20  # above any count, byte total or time the library writes, below float overflow


class Nullable:
    """A spec that also accepts null."""

    def __init__(self, spec: Any):
        self.spec = spec


class Optional(Nullable):
    """A field of an object that may be absent or null (the views read it with .get)."""


class Number:
    """A finite number (int or float, not true/false) within [low, high]; `integer`: an int."""

    def __init__(self, low: float, high: float, integer: bool = False):
        self.low, self.high, self.integer = low, high, integer

    def fits(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return None
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value!r} is not a finite number"
        if not self.low <= value <= self.high:
            return f"{value!r:.40} is out of range ({self.low:g} .. {self.high:g})"
        return ""


NUMBER = Number(-MAX_FIGURE, MAX_FIGURE)  # a time, a share, a sum over ranks
COUNT = Number(0, 2**64 - 1, integer=True)  # counts and bytes are uint64 in the library
ID = Number(0, 2**31 - 1, integer=True)  # region ids, ranks
BUCKET = Number(0, MAX_BUCKET, integer=True)
TASKS = Number(1, MAX_TASKS, integer=True)

TIMER = Optional({"source": Optional(str), "resolution_ns": Optional(NUMBER)})
SPREAD = {"sum": NUMBER, "min": NUMBER, "max": NUMBER, "avg": NUMBER}  # one quantity over ranks


FRAME = {  # one resolved frame of a call site (perfatlas.profile.symbols)
    "object": str,
    "offset": COUNT,
    "function": Nullable(str),
    "file": Nullable(str),
    "line": Nullable(COUNT),
    "reason": Nullable(str),
    "label": str,
    "inlined": Optional([list]),  # (function, file, line) of each enclosing inlined call
    "source": Optional(str),
}
CALL_SITE = {  # one (site, call) over the ranks (perfatlas.profile.call_sites)
    "site": str,
    "frames": [FRAME],
    "call": str,
    "category": str,
    "count": COUNT,
    "bytes": COUNT,
    "ranks": COUNT,
    "time_s": SPREAD,
    "slowest_rank": ID,
}
LINK_ROW = {  # messages of one region, call, size bucket and link class (link_traffic.py)
    "region": ID,
    "call": str,
    "bucket": BUCKET,
    "link": Nullable(str),
    "hosts": Optional([str]),  # across hosts: the two hosts
    "messages": COUNT,
    "bytes": COUNT,
    "time_s": Optional(NUMBER),
}
# The comm atlas a profile was joined with (perfatlas.comm.comm_atlas.CommAtlas.document): each
# point its x values, then its median and interval (ns); point lengths are checked by _atlas.
POINT = [Number(0, MAX_FIGURE)]
ATLAS = {
    "fingerprint": Optional(str),
    "mpi": Optional(str),
    "pingpong": Optional({link: Optional([POINT]) for link in (*LINK_CLASSES, UNKNOWN_LINK)}),
    "allreduce": Optional([POINT]),
    "barrier": Optional([POINT]),
    "sources": Optional([str]),
    "host_links": Optional(  # pairs of hosts measured alone (perfatlas.comm.host_links)
        [{"hosts": [str], "curve": [POINT], "source": str}]
    ),
    "rma": Optional(  # comm.rma's case "one": operation -> link class -> curve
        {
            op: Optional({link: Optional([POINT]) for link in (*LINK_CLASSES, UNKNOWN_LINK)})
            for op in RMA_OPERATIONS
        }  # fmt: skip
    ),
    "missing": Optional(str),
    "noise": Optional(  # the BSP model of the program's superstep (noise_cadence.py)
        {
            "missing": Optional(str),
            "source": Optional(str),
            "superstep_ns": Optional(Number(0, MAX_FIGURE)),
            "window_ns": Optional(Number(0, MAX_FIGURE)),
            "processes": Optional([COUNT]),
            "slowdown": Optional([Number(0, MAX_FIGURE)]),
            "independent_windows": Optional(COUNT),
        }
    ),
}
ATLAS_POINT_LENGTHS = {"pingpong": 4, "allreduce": 5, "barrier": 4, "host_links": 4, "rma": 4}


def _profile_spec(partial: bool) -> dict:
    """What the views read of a perfatlas.ipm/1 document. A partial profile (built from rank files)
    may lack the per-rank times a rank file of this library version does not carry; the matrix is
    null above the tasks the library keeps it for (PA_IPM_MATRIX_MAX_TASKS)."""
    spread = Nullable(SPREAD) if partial else SPREAD
    figure = Nullable(NUMBER) if partial else NUMBER
    return {
        "schema": str,
        "partial": bool,
        "partial_reason": Optional(str),
        "command": [str],
        "mpi_library": Optional(str),
        "tasks": TASKS,
        "hosts": Optional([str]),
        "started_unix": Optional(Number(0, 1e11)),  # a date Python's datetime can hold
        "timer": TIMER,
        "lbst_method": Optional(str),
        "wallclock_s": spread,
        "maxrss_bytes": Optional(SPREAD),
        "hardware_counters": Optional(
            {"available": Optional(bool), "source": Optional(str), "reason": Optional(str)}
        ),
        "regions": [
            {
                "id": ID,
                "name": str,
                "path": str,
                "parent": Nullable(ID),
                "entries": Optional(COUNT),
                "wall_s": spread,
                **{category: spread for category in CATEGORIES},
            }
        ],
        "calls": [
            {
                "region": ID,
                "call": str,
                "category": str,
                "count": COUNT,
                "bytes": COUNT,
                "ranks": COUNT,
                "time_s": SPREAD,
                "lbst_s": Optional(NUMBER),
            }
        ],
        "histogram": [
            {"call": str, "bucket": BUCKET, "count": COUNT, "bytes": COUNT, "time_s": NUMBER}
        ],
        "matrix": Nullable({"what": Optional(str), "bytes": [[NUMBER]], "messages": [[NUMBER]]}),
        "ranks": [
            {
                "rank": ID,
                "host": Optional(str),
                "cpus_allowed": Optional(Nullable(str)),  # placement (rank_placement.py)
                "cpu": Optional(Nullable(ID)),
                "wall_s": figure,
                **{category: figure for category in CATEGORIES},
            }
        ],
        "table": Optional({"capacity": Optional(COUNT), "used_max": Optional(NUMBER)}),
        "overflow": Optional({"count": Optional(COUNT), "ranks": Optional(COUNT)}),
        "region_errors": Optional({}),  # its values: checked by _region_errors
        "call_sites": Optional(
            {
                "callstack": Optional(Number(1, MAX_FRAMES, integer=True)),
                "unwinder": Optional(Nullable(str)),
                "missing": Optional(str),
                "sites": Optional([CALL_SITE]),
            }
        ),
        "link_traffic": Optional([LINK_ROW]),
        "point_to_point": Optional(
            [
                {
                    "region": ID,
                    "calls": [str],
                    "rank_s": [[Number(0, MAX_FIGURE)]],
                    "floor_s": Optional(Number(0, MAX_FIGURE)),
                }
            ]  # fmt: skip
        ),
        "pair_traffic": Optional(
            [
                {
                    "sender": ID,
                    "receiver": ID,
                    "link": Nullable(str),
                    "messages": COUNT,
                    "bytes": COUNT,
                    "time_s": NUMBER,
                    "best_Bps": Optional(Nullable(NUMBER)),
                }
            ]
        ),  # fmt: skip
        "one_sided": Optional(  # one-sided transfers and their time by region (one_sided_traffic.py)
            [
                {
                    "region": ID,
                    "calls": [str],
                    "rank_s": [[Number(0, MAX_FIGURE)]],
                    "floor_s": Number(0, MAX_FIGURE),
                    "fences": COUNT,
                    "transfers": [
                        {
                            "op": str,
                            "link": Nullable(str),
                            "hosts": Optional([str]),
                            "messages": COUNT,
                            "bytes": COUNT,
                        }
                    ],
                }
            ]
        ),  # fmt: skip
        "atlas": Optional(ATLAS),
    }


RANK_SPEC = {
    "schema": str,
    "partial": Optional(bool),
    "reason": Optional(str),
    "rank": ID,
    "size": TASKS,
    "host": Optional(str),
    "pid": Optional(ID),
    "timer": TIMER,
    "regions": [
        {
            "id": ID,
            "name": str,
            "parent": Nullable(ID),
            "entries": Optional(COUNT),
            **{
                figure: Optional(NUMBER) for figure in ("wall_s", *CATEGORIES, "user_s", "system_s")
            },
        }
    ],
    "region_errors": Optional({}),
    "records": [
        {
            "call": str,
            "kind": Optional(str),
            "region": ID,
            "bucket": BUCKET,
            "peer": Nullable(ID),
            "site": Optional([COUNT]),  # return addresses, the caller first (call sites)
            "count": COUNT,
            "bytes": COUNT,
            "total_s": NUMBER,
            "min_s": Optional(Number(0, MAX_FIGURE)),  # its fastest call (the join's floor)
        }
    ],
    "overflow": {"count": COUNT},
    "callstack": Optional(Number(0, MAX_FRAMES, integer=True)),
    "unwinder": Optional(Nullable(str)),  # what unwound stacks: libunwind, backtrace, or none
    "placement": Optional(
        {
            "cpus_allowed": Nullable(str),
            "cpu": Nullable(ID),
            "cpu_samples": [[COUNT]],
            "samples_beyond": COUNT,
        }
    ),
    "objects": Optional(
        [{"path": str, "base": COUNT, "build_id": Nullable(str), "segments": [[COUNT]]}]
    ),
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), "a value")


def _wanted(spec: Any) -> str:
    if isinstance(spec, Number):
        return "an integer" if spec.integer else "a number"
    return {str: "a string", bool: "true or false"}.get(spec, "a value")


def _text(value: str, where: str) -> str | None:
    """Text that cannot be written out again (a lone surrogate from a \\ud800 escape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{where} is not valid Unicode text"
    return None


def mismatch(value: Any, spec: Any, where: str = "") -> str | None:
    """The first way `value` does not fit `spec`, as a phrase naming the field; None if it fits."""
    if isinstance(spec, Nullable):
        return None if value is None else mismatch(value, spec.spec, where)
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"{where or 'the document'} is {_kind(value)}, not an object"
        for key, inner in spec.items():
            here = f"{where}.{key}" if where else key
            if key not in value:
                if isinstance(inner, Optional):
                    continue
                return f"the field {here} is missing"
            if problem := mismatch(value[key], inner, here):
                return problem
        return None
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{where} is {_kind(value)}, not a list"
        for i, item in enumerate(value):
            if problem := mismatch(item, spec[0], f"{where}[{i}]"):
                return problem
        return None
    if isinstance(spec, Number):
        problem = spec.fits(value)
        if problem is None:
            return f"{where} is {_kind(value)}, not {_wanted(spec)}"
        return f"{where} {problem}" if problem else None
    if spec is str and isinstance(value, str):
        return _text(value, where)
    fits = isinstance(value, spec) and (spec is bool or not isinstance(value, bool))
    return None if fits else f"{where} is {_kind(value)}, not {_wanted(spec)}"


def _region_errors(document: dict) -> str | None:
    """region_errors: counts by name (regions_full, mismatched_pops, too_deep, ...)."""
    errors = document.get("region_errors") or {}
    for name, value in errors.items():
        if problem := mismatch(value, COUNT, f"region_errors[{name!r:.40}]"):
            return problem
    return None


def region_tree(regions: list[dict], where: str = "regions") -> str | None:
    """Regions as a tree: unique ids, one root (parent null: the whole program), every parent an
    id of the list, no parent cycle."""
    parents, named = {}, set()
    for i, region in enumerate(regions):
        if region["id"] in parents:
            return f"{where}[{i}].id {region['id']} is the id of two regions"
        if (region["parent"], region["name"]) in named:
            return f"{where}[{i}] has the name and parent of an earlier region"
        parents[region["id"]] = region["parent"]
        named.add((region["parent"], region["name"]))
    roots = [id_ for id_, parent in parents.items() if parent is None]
    if len(roots) != 1:
        return f"{where} has {len(roots)} regions without a parent, not 1 (the whole program)"
    for i, region in enumerate(regions):
        if region["parent"] is not None and region["parent"] not in parents:
            return f"{where}[{i}].parent {region['parent']} is not the id of a region"
    for i, region in enumerate(regions):
        seen, at = set(), region["id"]
        while at is not None:
            if at in seen:
                return f"{where}[{i}] (id {region['id']}) is its own ancestor: the parents form a cycle"
            seen.add(at)
            at = parents[at]
    return None


def _consistency(document: dict) -> str | None:
    """What the structure cannot say: a tasks x tasks matrix, regions that form a tree, calls of
    regions that exist, ranks of the program."""
    tasks, matrix = document["tasks"], document["matrix"]
    for name in ("bytes", "messages"):
        rows = (matrix or {}).get(name, [])
        if matrix and (len(rows) != tasks or any(len(row) != tasks for row in rows)):
            shape = f"{len(rows)} x {len(rows[0]) if rows else 0}"
            return f"matrix.{name} is {shape}, not tasks x tasks ({tasks} x {tasks})"
    if problem := region_tree(document["regions"]) or _region_errors(document):
        return problem
    regions = {region["id"] for region in document["regions"]}
    for i, call in enumerate(document["calls"]):
        if call["region"] not in regions:
            return f"calls[{i}].region {call['region']} is not the id of a region"
    for i, rank in enumerate(document["ranks"]):
        if rank["rank"] >= tasks:
            return f"ranks[{i}].rank {rank['rank']} is not a rank of {tasks} tasks"
    for i, site in enumerate((document.get("call_sites") or {}).get("sites") or []):
        if site["slowest_rank"] >= tasks:
            return f"call_sites.sites[{i}].slowest_rank is not a rank of {tasks} tasks"
    for i, row in enumerate(document.get("link_traffic") or []):
        if row["region"] not in regions:
            return f"link_traffic[{i}].region {row['region']} is not the id of a region"
    for i, pair in enumerate(document.get("pair_traffic") or []):
        if max(pair["sender"], pair["receiver"]) >= tasks:
            return f"pair_traffic[{i}] is not a pair of ranks of {tasks} tasks"
    for part in ("point_to_point", "one_sided"):
        for i, row in enumerate(document.get(part) or []):
            if row["region"] not in regions:
                return f"{part}[{i}].region {row['region']} is not the id of a region"
            if any(len(pair) != 2 or pair[0] >= tasks for pair in row["rank_s"]):
                return f"{part}[{i}].rank_s is not [[rank, seconds], ...] of {tasks} tasks"
    for i, row in enumerate(document.get("one_sided") or []):
        for j, transfer in enumerate(row["transfers"]):
            if transfer["op"] not in RMA_OPERATIONS:
                return f"one_sided[{i}].transfers[{j}].op {transfer['op']!r} is not get or put"
    return _atlas(document.get("atlas") or {})


def _atlas(atlas: dict) -> str | None:
    """Each atlas point of its length, its times above 0 (they are interpolated in logs); a
    slowdown for each process count of the noise model."""
    noise = atlas.get("noise") or {}
    if len(noise.get("processes") or []) != len(noise.get("slowdown") or []):
        return "atlas.noise.processes and atlas.noise.slowdown are not of one length"
    curves = [(f"pingpong[{k!r}]", v) for k, v in (atlas.get("pingpong") or {}).items()]
    curves += [(part, atlas.get(part)) for part in ("allreduce", "barrier")]
    for op, by_link in (atlas.get("rma") or {}).items():
        curves += [(f"rma[{op!r}][{k!r}]", v) for k, v in (by_link or {}).items()]
    for i, link in enumerate(atlas.get("host_links") or []):
        if len(link["hosts"]) != 2 or not link["curve"]:
            return f"atlas.host_links[{i}] is not two hosts and a curve"
        curves.append((f"host_links[{i}].curve", link["curve"]))
    for where, points in curves:
        length = ATLAS_POINT_LENGTHS[where.split("[")[0]]
        for i, point in enumerate(points or []):
            if len(point) != length or min(point[length - 3 :]) <= 0:
                return f"atlas.{where}[{i}] is not {length} numbers ending in 3 times above 0"
    return None


def _rank_consistency(document: dict) -> str | None:
    """A rank of the program, regions that form a tree, records of its regions and of peers that
    are ranks of the program."""
    rank, size = document["rank"], document["size"]
    if rank >= size:
        return f"rank {rank} is not a rank of size {size}"
    if problem := region_tree(document["regions"]) or _region_errors(document):
        return problem
    regions = {region["id"] for region in document["regions"]}
    for i, record in enumerate(document["records"]):
        if record["region"] not in regions:
            return f"records[{i}].region {record['region']} is not the id of a region"
        if record["peer"] is not None and record["peer"] >= size:
            return f"records[{i}].peer {record['peer']} is not a rank of size {size}"
        if len(record.get("site") or []) > MAX_FRAMES:
            return f"records[{i}].site has more than {MAX_FRAMES} frames"
    for i, obj in enumerate(document.get("objects") or []):
        for j, segment in enumerate(obj["segments"]):
            if len(segment) != 2 or segment[0] > segment[1]:
                return f"objects[{i}].segments[{j}] is not [start, end]"
    return None


def read_json(path: Path) -> Any:
    """The JSON document in `path`, else one sentence: unreadable, not a regular file, larger
    than any profile, not UTF-8, not JSON, nested deeper than Python parses, or a number with more
    digits than Python converts."""
    text = read_text_file(path, "profile document", MAX_BYTES)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"{path} is not valid JSON ({error.msg} at line {error.lineno} column "
            f"{error.colno}): the file is truncated or corrupted"
        ) from None
    except RecursionError:
        raise UserError(f"{path} is nested too deeply to be a perfatlas-ipm document") from None
    except ValueError as error:  # an integer of more digits than int() converts
        raise UserError(f"{path} is not a usable JSON document: {error}") from None


def _checked(path: Path, document: Any, schema: str, spec: dict, what: str, consistency) -> dict:
    if isinstance(document, dict) and "schema" in document and document["schema"] != schema:
        raise UserError(
            f"{path} has schema {document['schema']!r:.80}, not {schema}: it is not a {what}"
        )
    problem = mismatch(document, spec) or consistency(document)
    if problem:
        raise UserError(f"{path} is not a usable {what}: {problem}")
    return document


def check_profile(document: Any, path: Path) -> dict:
    """A perfatlas.ipm/1 document (or a partial view) as the views read it, else UserError."""
    partial = isinstance(document, dict) and document.get("partial") is True
    return _checked(
        path,
        document,
        PROFILE_SCHEMA,
        _profile_spec(partial),
        "perfatlas-ipm profile",
        _consistency,
    )


def load_profile(path: Path) -> dict:
    return check_profile(read_json(path), path)


def load_rank(path: Path) -> dict:
    """One perfatlas.ipm-rank/1 document, else UserError."""
    return _checked(
        path, read_json(path), RANK_SCHEMA, RANK_SPEC, "perfatlas-ipm rank file", _rank_consistency
    )
