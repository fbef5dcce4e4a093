"""app.hydro: a SAGE-style Eulerian hydrodynamics proxy (Kerbyson et al., "Predictive performance
and scalability modeling of a large-scale application", SC2001).

The compressible Euler equations of an ideal gas on a 3-D grid, MUSCL-Hancock with an HLLC (or
HLL) Riemann solver, directionally split (native/app/hydro/). As in SAGE, the cells are ordered
in one dimension and cut into equal slabs of `cells_per_pe` cells, one per process, so the grid
grows with np (weak scaling) and a slab shorter than its stencil's reach exchanges ghosts with
several processes on each side; each cycle reduces the time step over all processes, and
`solver=cg` adds implicit heat conduction by conjugate gradients (SAGE's input "with the solver
turned on"). Samples, one per run of `cycles` cycles: cycle_s, its compute_s / gather_scatter_s
/ reduction_s split, and cc_per_s_per_pe (cell updates per second per process). Before the
document is stored, perfatlas adds this machine's stored comm atlas (ping-pong and allreduce,
perfatlas.comm.comm_atlas) for the cycle-time model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from perfatlas.app.sparse_matrix import check_threads
from perfatlas.benchmarks.benchmark import DocumentSink, register
from perfatlas.benchmarks.time_model import app_seconds
from perfatlas.comm.comm_atlas import stored_atlas
from perfatlas.comm.mpi import MpiBenchmark, np_param
from perfatlas.common.errors import UserError
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store

SECONDS_PER_CELL_CYCLE = 1e-6  # measured 0.6 us on the development VM (Benchmark.estimate)

GHOST_WIDTH = 2  # cells on each side that a cell's update reads (native/app/hydro/slab.h)
AXES = ("x", "y", "z")


def global_grid(params: dict[str, Any]) -> tuple[int, int, int] | None:
    """(nx, ny, nz) of the global grid, or None when the cells do not fill whole planes."""
    total, plane = params["np"] * params["cells_per_pe"], params["nx"] * params["ny"]
    return None if total % plane else (params["nx"], params["ny"], total // plane)


@register
class AppHydro(MpiBenchmark):
    name = "app.hydro"
    summary = "SAGE-style Eulerian hydro: MUSCL-Hancock + HLLC on 1-D ordered slabs, optional CG"
    executable = "pa-hydro"
    metrics = {
        "cycle_s": "s",
        "compute_s": "s",
        "gather_scatter_s": "s",
        "reduction_s": "s",
        "cc_per_s_per_pe": "1/s",
    }
    min_np: ClassVar[int] = 1
    needs: ClassVar[str] = "it needs one rank"
    adds = (np_param(default=1),)

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["state_file"] is not None:  # the ranks may start elsewhere
            params["state_file"] = str(Path(params["state_file"]).expanduser().resolve())
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        check_threads(self.name, params["threads"], machine)
        cells = params["cells_per_pe"]
        if cells < GHOST_WIDTH:
            raise UserError(
                f"{self.name}: cells_per_pe={cells} is fewer than the ghost width of "
                f"{GHOST_WIDTH} cells: give at least {GHOST_WIDTH}"
            )
        grid = global_grid(params)
        if grid is None:
            raise UserError(
                f"{self.name}: np={params['np']} x cells_per_pe={cells} = "
                f"{params['np'] * cells} cells is not a whole number of nx x ny = "
                f"{params['nx']} x {params['ny']} planes: give cells_per_pe, nx and ny such that "
                "nx ny divides np cells_per_pe"
            )
        for axis, n in zip(AXES, grid, strict=True):
            if 1 < n < 2 * GHOST_WIDTH:
                raise UserError(
                    f"{self.name}: the global grid has {n} cells along {axis}, fewer than the "
                    f"{2 * GHOST_WIDTH} that a ghost width of {GHOST_WIDTH} on each side needs "
                    "(1 makes the axis flat): change nx, ny or cells_per_pe"
                )
        if params["problem"] != "wave" and grid[AXES.index(params["axis"])] == 1:
            raise UserError(
                f"{self.name}: the shock tube runs along {params['axis']}, which is one cell "
                "long: give more cells along it"
            )

    def with_stored(self, params: dict[str, Any], store: Store, machine: Machine) -> dict[str, Any]:
        """The comm atlas the model needs, from this machine's stored results."""
        return {**params, "comm_atlas": stored_atlas(store, machine.fingerprint)}

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        skip = ("np", "comm_atlas")
        return [f"{k}={v}" for k, v in params.items() if k not in skip and v is not None]

    def run(
        self,
        params: dict[str, Any],
        machine: Machine,
        options: LaunchOptions | None = None,
        placement: Placement | None = None,
        on_document: DocumentSink | None = None,
    ) -> list[dict]:
        atlas = params.get("comm_atlas")

        def with_atlas(document: dict) -> None:  # before the document is stored
            derived = document.get("derived")
            if derived is not None and atlas is not None:
                derived["comm_atlas"] = atlas
            if on_document is not None:
                on_document(document)

        return super().run(params, machine, options, placement, with_atlas)

    def label(self, params: dict[str, Any]) -> str:
        shown = [
            f"{params.get('cells_per_pe')} cells/pe",
            f"{params.get('nx')}x{params.get('ny')} planes",
            f"np={params.get('np')}",
            f"{params.get('problem')}",
        ]
        if params.get("solver") not in (None, "none"):
            shown.append(f"solver={params.get('solver')}")
        if params.get("riemann") not in (None, "hllc"):
            shown.append(f"riemann={params.get('riemann')}")
        if params.get("threads") not in (None, 1):
            shown.append(f"threads={params.get('threads')}")
        return " ".join(shown)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Cells x cycles per repetition; the implicit solver about three times more."""
        per_cell = SECONDS_PER_CELL_CYCLE * (3 if params.get("solver") == "cg" else 1)
        cycles = int(params.get("cycles") or 10)
        return app_seconds(params, int(params.get("cells_per_pe") or 13500) * cycles * per_cell)
