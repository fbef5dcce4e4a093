"""What this build of the native code has: its optional parts (MPI, CHOLMOD, MUMPS, ScaLAPACK,
PAPI, MPI Fortran) and, for each one not built, why (docs/install.md).

CMake writes them to build-parts.json beside the executables (cmake/PerfatlasParts.cmake). A
benchmark names the parts it needs (`Benchmark.built_with`); where one is missing its result is
stored as "not built here: <why>", so that a suite goes on, and `perfatlas doctor` lists them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.common.text_file import read_text_file
from perfatlas.launch.native import bin_dir

SCHEMA = "perfatlas.build/1"
FILE = "build-parts.json"


@dataclass(frozen=True)
class Part:
    name: str
    built: bool
    text: str  # what was found (built), or why not and what to install


@dataclass(frozen=True)
class Build:
    parts: dict[str, Part]
    mpi_family: str | None  # the build's MPI: "openmpi", "mpich", "other"; None without MPI


def build_parts() -> dict[str, Part] | None:
    """This build's parts by name; None for a build older than build-parts.json (then only a
    missing executable tells)."""
    build = _read(bin_dir() / FILE)
    return None if build is None else build.parts


def mpi_family() -> str | None:
    """The family of the MPI this build's profiler and MPI programs are for (None: unknown)."""
    build = _read(bin_dir() / FILE)
    return None if build is None else build.mpi_family


@cache
def _read(path: Path) -> Build | None:
    if not path.exists():
        return None
    try:
        document = json.loads(read_text_file(path, "the build's list of parts"))
        if document.get("schema") != SCHEMA:
            raise ValueError(f"schema {document.get('schema')!r} is not {SCHEMA}")
        parts = {
            name: Part(name, entry["built"] is True, str(entry.get("detail") or entry["why"]))
            for name, entry in document["parts"].items()
        }
        return Build(parts, document.get("mpi_family"))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise UserError(
            f"{path} is damaged ({error}); rebuild with 'make install' (or pip install .)"
        ) from None


def not_built(names: tuple[str, ...]) -> str | None:
    """The sentence "not built here: <why>" for the first of `names` this build lacks, else None."""
    parts = build_parts()
    if parts is None:
        return None
    for name in names:
        part = parts.get(name)
        if part is None:
            return f"not built here: this build does not list {name} among its parts"
        if not part.built:
            return f"not built here: {name}: {part.text}"
    return None
