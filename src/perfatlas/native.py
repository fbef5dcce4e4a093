"""Locate and run the native measuring executables (docs/contract.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from perfatlas.errors import UserError


def bin_dir() -> Path:
    """Executables live in the installed package (pip install .); PERFATLAS_BIN_DIR overrides."""
    override = os.environ.get("PERFATLAS_BIN_DIR")
    return Path(override) if override else Path(__file__).parent / "bin"


def executable(name: str) -> Path:
    path = bin_dir() / name
    if not path.is_file():
        raise UserError(
            f"the native executable {name} is missing from {bin_dir()}; "
            "rebuild with 'pip install .' (or 'make install')"
        )
    return path


def run_json(name: str, args: list[str], env: dict[str, str] | None = None) -> dict | list:
    """Run one native executable with key=value args and return its parsed JSON document(s)."""
    proc = subprocess.run(
        [str(executable(name)), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode < 0:
        raise UserError(
            f"{name} was killed by {signal.Signals(-proc.returncode).name} "
            "(results stored before it are kept)"
        )
    if proc.returncode != 0:
        message = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        raise UserError(message or f"{name} exited with status {proc.returncode}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as error:
        raise UserError(
            f"{name} wrote malformed JSON ({error}); this is a perfatlas bug"
        ) from error
