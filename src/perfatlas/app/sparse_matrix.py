"""The matrix of the sparse application proxies (app.spsolve, app.spmv): a Matrix Market file
(`matrix=`) or a generated problem (`problem=` with `n=`), exactly one of them; and the threads
check and label both share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine

# problem= in Python: None when not given (the native table's sentinel is "none": a matrix file).
PROBLEM_REFINED = {"default": None}


def resolve_matrix(name: str, params: dict[str, Any], problems: tuple[str, ...]) -> None:
    """Exactly one of matrix= and problem=; a matrix file must exist and becomes absolute."""
    if (params["matrix"] is None) == (params["problem"] is None):
        raise UserError(
            f"{name}: give matrix=FILE (Matrix Market) or problem={'|'.join(problems)} with n=..., "
            + ("not both" if params["matrix"] else "one of them")
        )
    if params["matrix"] is not None:
        path = Path(params["matrix"]).expanduser()
        if not path.is_file():
            raise UserError(f"{name}: the matrix file {params['matrix']} does not exist")
        params["matrix"] = str(path.resolve())


def check_threads(name: str, threads: int, machine: Machine) -> None:
    if threads > len(machine.pus):
        raise UserError(
            f"{name}: threads={threads} exceeds the {len(machine.pus)} PUs of this machine"
        )


def matrix_label(params: dict[str, Any]) -> str:
    """The file's name, or 'laplace2d n=64'."""
    if params.get("matrix"):
        return Path(params["matrix"]).name
    return f"{params.get('problem')} n={params.get('n')}"
