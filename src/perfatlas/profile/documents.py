"""Load and check the documents perfatlas-ipm writes (docs/profile.md).

The fields the views read are declared once, as nested specs (a type, a dict of required keys, a
one-element list for "list of", Nullable for "or null"); one walker checks a document against its
spec and names the first field that does not fit. Every problem is one UserError sentence naming
the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfatlas.errors import UserError

PROFILE_SCHEMA = "perfatlas.ipm/1"
RANK_SCHEMA = "perfatlas.ipm-rank/1"
PROFILE_FILE = "ipm-profile.json"
RANK_PATTERN = "ipm-rank-*.json"
CATEGORIES = ("calc_s", "mpi_s", "io_s", "lbst_s")  # every second of a rank's wallclock is one

NUMBER = (int, float)


class Nullable:
    """A spec that also accepts null."""

    def __init__(self, spec: Any):
        self.spec = spec


SPREAD = {"sum": NUMBER, "min": NUMBER, "max": NUMBER, "avg": NUMBER}  # one quantity over ranks


def _profile_spec(partial: bool) -> dict:
    """What the views read of a perfatlas.ipm/1 document. A partial profile (built from rank files)
    may lack the per-rank times a rank file of this library version does not carry."""
    spread = Nullable(SPREAD) if partial else SPREAD
    figure = Nullable(NUMBER) if partial else NUMBER
    matrix = {"bytes": [[NUMBER]], "messages": [[NUMBER]]}
    return {
        "schema": str,
        "partial": bool,
        "command": [str],
        "tasks": int,
        "wallclock_s": spread,
        "regions": [
            {
                "id": int,
                "name": str,
                "path": str,
                "parent": Nullable(int),
                "wall_s": spread,
                **{category: spread for category in CATEGORIES},
            }
        ],
        "calls": [
            {
                "region": int,
                "call": str,
                "category": str,
                "count": int,
                "bytes": int,
                "ranks": int,
                "time_s": SPREAD,
            }
        ],
        "histogram": [{"call": str, "bucket": int, "count": int, "bytes": int, "time_s": NUMBER}],
        "matrix": Nullable(matrix) if partial else matrix,
        "ranks": [{"rank": int, "wall_s": figure, **{category: figure for category in CATEGORIES}}],
    }


RANK_SPEC = {
    "schema": str,
    "rank": int,
    "size": int,
    "regions": [{"id": int, "name": str, "parent": Nullable(int)}],
    "records": [
        {
            "call": str,
            "region": int,
            "bucket": int,
            "peer": Nullable(int),
            "count": int,
            "bytes": int,
            "total_s": NUMBER,
        }
    ],
    "overflow": {"count": int},
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, NUMBER):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), "a value")


def _wanted(spec: Any) -> str:
    names = {int: "an integer", str: "a string", bool: "true or false", NUMBER: "a number"}
    return names.get(spec, "a value")


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
    fits = isinstance(value, spec) and (spec is bool or not isinstance(value, bool))
    return None if fits else f"{where} is {_kind(value)}, not {_wanted(spec)}"


def _consistency(document: dict) -> str | None:
    """What the structure cannot say: a tasks x tasks matrix, calls of regions that exist."""
    tasks, matrix = document["tasks"], document["matrix"]
    for name in ("bytes", "messages"):
        rows = (matrix or {}).get(name, [])
        if matrix and (len(rows) != tasks or any(len(row) != tasks for row in rows)):
            shape = f"{len(rows)} x {len(rows[0]) if rows else 0}"
            return f"matrix.{name} is {shape}, not tasks x tasks ({tasks} x {tasks})"
    regions = {region["id"] for region in document["regions"]}
    for i, call in enumerate(document["calls"]):
        if call["region"] not in regions:
            return f"calls[{i}].region {call['region']} is not the id of a region"
    return None


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not a text file: the file is corrupted") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"{path} is not valid JSON ({error.msg} at line {error.lineno} column "
            f"{error.colno}): the file is truncated or corrupted"
        ) from None


def _checked(path: Path, document: Any, schema: str, spec: dict, what: str) -> dict:
    if isinstance(document, dict) and "schema" in document and document["schema"] != schema:
        raise UserError(
            f"{path} has schema '{document['schema']}', not {schema}: it is not a {what}"
        )
    problem = mismatch(document, spec)
    if problem is None and schema == PROFILE_SCHEMA:
        problem = _consistency(document)
    if problem:
        raise UserError(f"{path} is not a usable {what}: {problem}")
    return document


def check_profile(document: Any, path: Path) -> dict:
    """A perfatlas.ipm/1 document (or a partial view) as the views read it, else UserError."""
    partial = isinstance(document, dict) and document.get("partial") is True
    return _checked(path, document, PROFILE_SCHEMA, _profile_spec(partial), "perfatlas-ipm profile")


def load_profile(path: Path) -> dict:
    return check_profile(read_json(path), path)


def load_rank(path: Path) -> dict:
    """One perfatlas.ipm-rank/1 document, else UserError."""
    return _checked(path, read_json(path), RANK_SCHEMA, RANK_SPEC, "perfatlas-ipm rank file")
