"""The parameter table of a native executable, read from the executable itself (`pa-x --params`,
docs/contract.md, The parameter table), once per executable and process.

The `pa_param` table of each native program (native/common/args.h) is the one declaration of its
parameters: names, kinds, defaults, bounds, choices and help. Python builds its Param objects from
it (perfatlas.benchmarks.benchmark) instead of repeating them.
"""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass

from perfatlas.common.errors import UserError
from perfatlas.common.signal_names import signal_name
from perfatlas.launch.isa import rebuild_hint
from perfatlas.launch.native import bin_dir

SCHEMA = "perfatlas.params/1"
KINDS = ("int", "size", "double", "choice", "cpus", "duration", "node", "string", "sizes", "ints")


@dataclass(frozen=True)
class NativeParam:
    """One row of a native `pa_param` table, as `--params` writes it."""

    name: str
    kind: str  # one of KINDS
    default: str  # as a user would write it
    help: str
    choices: tuple[str, ...] | None
    minimum: float | None  # inclusive; None: unbounded
    maximum: float | None


@dataclass(frozen=True)
class NativeTable:
    program: str
    summary: str
    params: tuple[NativeParam, ...]


def native_table(executable: str) -> NativeTable:
    """The table of `executable` in perfatlas' bin folder; a program that is missing or cannot
    run here (the ISA check refusing a build for another CPU) is one UserError sentence."""
    return _read(str(bin_dir() / executable))


@functools.cache
def _read(path: str) -> NativeTable:
    name = path.rsplit("/", 1)[-1]
    try:
        proc = subprocess.run([path, "--params"], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise UserError(
            f"the native executable {name} is missing from {bin_dir()}; "
            "rebuild with 'pip install .' (or 'make install')"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UserError(f"{name} cannot run here to tell its parameters: {error}") from None
    if proc.returncode < 0:  # a SIGILL: built for another CPU (rebuild_hint says what to do)
        number = -proc.returncode
        raise UserError(f"{name} was killed by {signal_name(number)}{rebuild_hint(number)}")
    if proc.returncode != 0:  # the program's own sentence (the ISA check's refusal), as it is
        said = proc.stderr.strip().splitlines()
        raise UserError(
            said[-1] if said else f"{name} --params failed with exit status {proc.returncode}"
        )
    try:
        document = json.loads(proc.stdout)
        if document.get("schema") != SCHEMA:
            raise ValueError(f"schema {document.get('schema')!r}, not {SCHEMA}")
        rows = tuple(_row(row) for row in document["params"])
        return NativeTable(document["program"], document["summary"], rows)
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{name} --params did not write a parameter table ({error}); rebuild with "
            "'make install'"
        ) from None


def _row(row: dict) -> NativeParam:
    if row["kind"] not in KINDS:
        raise ValueError(f"parameter {row['name']} has the unknown kind {row['kind']!r}")
    choices = row.get("choices")
    return NativeParam(
        name=row["name"],
        kind=row["kind"],
        default=row["default"],
        help=row["help"],
        choices=tuple(choices) if choices is not None else None,
        minimum=row.get("min"),
        maximum=row.get("max"),
    )
