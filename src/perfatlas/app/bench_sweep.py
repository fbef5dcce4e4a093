"""app.sweep: a Sweep3D-style discrete-ordinates wavefront sweep, the application proxy of
deterministic transport codes (KBA pipelining over a 2-D process grid).

One-group transport with isotropic scattering, an isotropic source uniform in a box centred in
the domain (the whole domain by default) and vacuum boundaries, solved by source iteration with
diamond differencing and the equal-weight level-symmetric S_N set (native/app/sweep/). Each of
the px x py ranks holds it x jt x kt cells, so the global grid grows with np (weak scaling); each
sweep pipelines blocks of mk k-planes x mmi directions across the ranks. Samples, one per solve:
grind_time_ns (ns per cell, direction and iteration on each process), solve_s, and, given the
np = 1 grind time of the same subgrid (reference_grind_ns), parallel_efficiency. Every solve is
checked by particle balance (source = collision + leakage, exact for diamond difference).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import APP_SECONDS_PER_UNKNOWN, app_seconds
from perfatlas.comm.mpi import MpiBenchmark, np_param
from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine

# N(N+2)/8 directions per octant of the level-symmetric S_N set, N = 2 .. 16
ANGLES_PER_OCTANT = {n * (n + 2) // 8: n for n in range(2, 17, 2)}


@register
class AppSweep(MpiBenchmark):
    name = "app.sweep"
    summary = "Sweep3D-style S_N transport sweep: KBA wavefront over a px x py rank grid"
    executable = "pa-sweep"
    metrics = {"grind_time_ns": "ns", "solve_s": "s", "parallel_efficiency": "1"}
    min_np: ClassVar[int] = 1
    needs: ClassVar[str] = "it needs one rank"
    adds = (np_param(default=1),)

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params["flux_file"] is not None:  # the ranks may start elsewhere
            params["flux_file"] = str(Path(params["flux_file"]).expanduser().resolve())
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        mmo, mmi, kt, mk = params["mmo"], params["mmi"], params["kt"], params["mk"]
        if mmo not in ANGLES_PER_OCTANT:
            raise UserError(
                f"{self.name}: mmo={mmo} is not a level-symmetric angle count N(N+2)/8: give "
                "1, 3, 6, 10, 15, 21, 28 or 36 (S_2 .. S_16)"
            )
        if mmo % mmi:
            raise UserError(
                f"{self.name}: mmi={mmi} does not divide mmo={mmo}: the directions of an octant "
                "must split into whole blocks"
            )
        if kt % mk:
            raise UserError(
                f"{self.name}: mk={mk} does not divide kt={kt}: the k-planes must split into "
                "whole blocks"
            )
        np_, px, py = params["np"], params["px"], params["py"]
        if px and py and px * py != np_:
            raise UserError(
                f"{self.name}: px={px} x py={py} = {px * py} processes, but np={np_}: give px and "
                "py whose product is the number of ranks"
            )
        given = px or py
        if given and not (px and py) and np_ % given:
            raise UserError(
                f"{self.name}: {'px' if px else 'py'}={given} does not divide np={np_}: give px "
                "and py whose product is the number of ranks"
            )

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        return [
            f"{key}={value}" for key, value in params.items() if key != "np" and value is not None
        ]

    def label(self, params: dict[str, Any]) -> str:
        shown = [
            f"{params.get('it')}x{params.get('jt')}x{params.get('kt')} per rank",
            f"np={params.get('np')}",
        ]
        if params.get("px") or params.get("py"):
            shown.append(f"px={params.get('px')} py={params.get('py')}")
        order = ANGLES_PER_OCTANT.get(params.get("mmo"), "?")
        shown.append(f"S{order} mk={params.get('mk')} mmi={params.get('mmi')}")
        if params.get("fixup") not in (None, "none"):
            shown.append(f"fixup={params.get('fixup')}")
        return " ".join(shown)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Linear in the cells of the grid, per repetition."""
        cells = (
            int(params.get("it") or 20) * int(params.get("jt") or 20) * int(params.get("kt") or 20)
        )
        return app_seconds(params, cells * APP_SECONDS_PER_UNKNOWN)
