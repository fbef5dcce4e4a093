"""app.spsolve: a sparse symmetric positive definite direct solve, the application proxy of
sparse implicit codes (finite elements, circuits, power networks).

The matrix comes from a Matrix Market file (`matrix=`) or is generated (`problem=` laplace2d,
laplace3d: finite-difference Laplacians; elasticity3d: a trilinear-hexahedron stiffness matrix of
the unit cube, 3 dofs per node, one face clamped). The whole solve is repeated `repeat` times and
every phase keeps one sample per repetition: the fill-reducing ordering (AMD or METIS nested
dissection, computed once for both solvers), the symbolic analysis, the numeric factorization and
the triangular solves. CHOLMOD (supernodal) runs in one process with `threads` OpenBLAS threads;
MUMPS (multifrontal) on `np` MPI ranks, the matrix centralized on rank 0. The residual
||b - A x|| / ||b|| is computed from the assembled matrix, independently of the solver.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from typing import Any

from perfatlas.app.sparse_matrix import (
    PROBLEM_REFINED,
    check_threads,
    matrix_label,
    resolve_matrix,
)
from perfatlas.benchmarks.benchmark import Benchmark, DocumentSink, register
from perfatlas.benchmarks.time_model import APP_SECONDS_PER_UNKNOWN, app_seconds
from perfatlas.comm.mpi import np_param
from perfatlas.common.errors import UserError
from perfatlas.launch.build_parts import not_built
from perfatlas.launch.launchers import MPI_MISSING, LaunchOptions
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine

PROBLEMS = ("laplace2d", "laplace3d", "elasticity3d")


@register
class AppSpsolve(Benchmark):
    name = "app.spsolve"
    summary = "sparse SPD direct solve (CHOLMOD or MUMPS): ordering, analysis, factorization, solve"
    executable = "pa-spsolve"
    built_with = ("CHOLMOD",)
    metrics = {
        "reorder_s": "s",
        "symbolic_s": "s",
        "analysis_s": "s",
        "numeric_s": "s",
        "solve_s": "s",
        "factorization_flops_per_s": "flop/s",
    }
    adds = (replace(np_param(default=1), after="threads"),)
    refines = {"problem": {**PROBLEM_REFINED, "choices": PROBLEMS}}

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        raw = dict(raw)
        if raw.get("np") == "all":
            raw["np"] = str(len(machine.pus))
        params = super().resolve(raw, machine)
        resolve_matrix(self.name, params, PROBLEMS)
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        check_threads(self.name, params["threads"], machine)
        if params["solver"] == "cholmod" and params["np"] != 1:
            raise UserError(
                f"{self.name}: np={params['np']} applies to solver=mumps; CHOLMOD runs in one "
                "process (give threads= instead)"
            )

    def launcher_for(self, params: dict[str, Any]) -> str:
        return "mpirun" if params["solver"] == "mumps" else "local"

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        return [
            f"{key}={value}" for key, value in params.items() if key != "np" and value is not None
        ]

    def run(
        self,
        params: dict[str, Any],
        machine: Machine,
        options: LaunchOptions | None = None,
        placement: Placement | None = None,
        on_document: DocumentSink | None = None,
    ) -> list[dict]:
        measurable = self.unmeasurable(params, machine) is None  # else stored as such
        if measurable and params["solver"] == "mumps" and shutil.which("mpirun") is None:
            raise UserError(f"{MPI_MISSING}: no mpirun on PATH")
        return super().run(params, machine, options, placement, on_document)

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        """A build without CHOLMOD has no pa-spsolve; one without MUMPS (no libmumps-dev, or an
        MPICH build) has no solver=mumps."""
        why = super().unmeasurable(params, machine)
        if why is None and params.get("solver") == "mumps":
            return not_built(("MUMPS",))
        return why

    def label(self, params: dict[str, Any]) -> str:
        shown = [
            matrix_label(params),
            f"solver={params.get('solver')}",
            f"ordering={params.get('ordering')}",
        ]
        if params.get("solver") == "mumps":
            shown.append(f"np={params.get('np')}")
        shown.append(f"threads={params.get('threads')}")
        return " ".join(shown)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Linear in the problem's unknowns, per repetition."""
        n = int(params.get("n") or 32)
        unknowns = {"laplace2d": n**2, "laplace3d": n**3, "elasticity3d": 3 * (n + 1) ** 3}
        work = unknowns.get(str(params.get("problem")), n**3) * APP_SECONDS_PER_UNKNOWN
        return app_seconds(params, work)
