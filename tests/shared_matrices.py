"""The Matrix Market test matrices of ../shared (or $PERFATLAS_MATRICES)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MATRICES = Path(
    os.environ.get(
        "PERFATLAS_MATRICES", Path(__file__).resolve().parents[2] / "shared" / "data" / "matrices"
    )
)


def matrix(name: str) -> Path:
    """The file of that name; the test is skipped where the shared matrices are not here."""
    path = MATRICES / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared test matrices)")
    return path
