"""app.spsolve: the phases of a sparse direct solve stacked per configuration, and the facts of
each factorization as the solver and the assembled matrix give them (docs/contract.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from perfatlas.app.analysis_points import PhaseStack, Point, phase_stack
from perfatlas.store.result import Result

BENCHMARK = "app.spsolve"
# The four phases timed apart, in pipeline order (seconds per repetition).
PHASES = (
    ("reorder", "reorder_s"),
    ("symbolic", "symbolic_s"),
    ("numeric", "numeric_s"),
    ("solve", "solve_s"),
)
# A solver that orders inside its analysis gives analysis_s only (native/app/spsolve/solvers.h).
PHASES_WITHOUT_ORDERING = (
    ("analysis", "analysis_s"),
    ("numeric", "numeric_s"),
    ("solve", "solve_s"),
)


def matrix_name(params: dict) -> str:
    """The matrix a point solved: the file's name, or the generated problem and its n."""
    if params.get("matrix"):
        return Path(params["matrix"]).name
    return f"{params.get('problem')} n={params.get('n')}"


def configuration(params: dict) -> str:
    """Solver, ordering, ranks (MUMPS), threads, and a sweep's binding and memory policy."""
    shown = [str(params.get("solver")), str(params.get("ordering"))]
    if params.get("solver") == "mumps":
        shown.append(f"np={params.get('np')}")
    shown.append(f"threads={params.get('threads')}")
    for key in ("bind", "mempolicy"):
        if params.get(key):
            shown.append(f"{key}={params[key]}")
    return " ".join(shown)


def phases(point: Point) -> PhaseStack | None:
    """Reorder, symbolic, numeric and solve (analysis, numeric, solve where the solver does not
    time the ordering apart)."""
    timed_apart = "reorder_s" in point.metrics and "symbolic_s" in point.metrics
    return phase_stack(point, PHASES if timed_apart else PHASES_WITHOUT_ORDERING)


@dataclass(frozen=True)
class Facts:
    matrix: str
    configuration: str
    n: int
    nnz_A: int  # both triangles, the diagonal once
    nnz_L: float  # the solver's count (CHOLMOD Common->lnz; MUMPS INFOG(29))
    fill: float  # nnz_L / nnz_A_lower
    flops: float  # the solver's factorization flop count
    rate: Result | None  # factorization_flops_per_s (flop/s)
    memory_bytes: float | None  # the solver's own figure, None where it gives none
    memory_source: str
    residual: float  # the largest ||b - A x||_2 / ||b||_2 of the repetitions
    solver: str  # name and version, as the solver reports it
    ordering: str


def facts(point: Point) -> Facts:
    d = point.derived
    memory = d.get("memory_bytes")
    return Facts(
        matrix=matrix_name(point.params),
        configuration=configuration(point.params),
        n=int(d["n"]),
        nnz_A=int(d["nnz_A"]),
        nnz_L=float(d["nnz_L"]),
        fill=float(d["fill_ratio"]),
        flops=float(d["flops"]),
        rate=point.metrics.get("factorization_flops_per_s"),
        memory_bytes=None if memory is None or math.isnan(memory) else float(memory),
        memory_source=str(d.get("memory_source", "")),
        residual=float(d["residual"]),
        solver=str(d.get("solver", "")),
        ordering=str(d.get("ordering", "")),
    )
