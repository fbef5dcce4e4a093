"""app.sweep: weak scaling of the KBA wavefront sweep from the stored results of one run, against
the pipeline model, with the particle balance of every solve (docs/contract.md).

Grind time (native/app/sweep): g(np) = T(np) np / (C D I) = T(np) / (c D I), T the solve time
(common barrier to the slowest rank), C = c np the global cells (c per process), D the directions,
I the source iterations. Weak scaling keeps c fixed, so the ideal solve time does not change with
np and the measured parallel efficiency is

    E(np) = T(1) / T(np) = g(1) / g(np)

with g(1) the np = 1 grind time of the same subgrid, directions, blocking and physics (the same
parameters but np, px, py, and what does not change the work per solve: repeat, warmup,
reference_grind_ns, flux_file), taken from the same run. Since g is per iteration, E compares
iterations even where a tolerance stops the solves after different counts. It is a ratio of
medians with a percentile-bootstrap 95 % interval (stats.ratio); E(1) = 1 by definition. Where the
run has no np = 1 result of that subgrid, the document's parallel_efficiency (given
reference_grind_ns, the user's g(1)) is shown instead, and said so; without either, none.

The model: 8 Nb / (8 Nb + 2 (px - 1) + 3 (py - 1)) pipeline steps of unit time per block, Nb =
(kt/mk)(mmo/mmi) blocks per octant, messages free (derived.model_efficiency).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from perfatlas.app.analysis_points import Point, points
from perfatlas.common.stats import Ratio, ratio
from perfatlas.store.result import Result

BENCHMARK = "app.sweep"
# Parameters that do not define the per-process work of a weak-scaling series.
NOT_WORK = ("np", "px", "py", "repeat", "warmup", "reference_grind_ns", "flux_file")
S_N_ORDER = {n * (n + 2) // 8: n for n in range(2, 17, 2)}  # directions per octant -> N


def series_key(params: dict) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in NOT_WORK}, sort_keys=True)


def subgrid_label(params: dict) -> str:
    """'20x20x20/rank S6 mk=10 mmi=3' (and the physics where it is not the default)."""
    order = S_N_ORDER.get(params.get("mmo"), "?")
    label = (
        f"{params.get('it')}x{params.get('jt')}x{params.get('kt')}/rank S{order} "
        f"mk={params.get('mk')} mmi={params.get('mmi')}"
    )
    extras = [
        f"{key}={params[key]}"
        for key, default in (("c", 0.5), ("sigma_t", 1), ("fixup", "none"), ("tolerance", 0))
        if key in params and params[key] != default
    ]
    return " ".join([label, *extras])


@dataclass(frozen=True)
class ScalingPoint:
    np: int
    px: int
    py: int
    global_grid: list[int]
    grind: Result  # grind_time_ns
    solve: Result | None  # solve_s
    model_efficiency: float
    model_without_overlap: float | None  # Hoisie et al.'s single octant, Nb / (Nb + px + py - 2)
    pipeline_steps: int | None
    measured: Ratio | None  # E(np) = g(1) / g(np), from this run's np = 1 result
    document_efficiency: Result | None  # parallel_efficiency (given reference_grind_ns)
    reference_grind_ns: float  # the document's reference (0: none given)
    derived: dict = field(repr=False, default_factory=dict)

    @property
    def balance(self) -> dict:
        return self.derived.get("balance") or {}

    @property
    def physical_balance(self) -> dict:
        return self.derived.get("physical_balance") or {}


@dataclass(frozen=True)
class WeakScaling:
    label: str
    reference: Point | None  # the np = 1 point of the series, when the run has one
    points: list[ScalingPoint]  # by np


def _scaling_point(point: Point, reference: Point | None) -> ScalingPoint:
    d = point.derived
    grind = point.metrics["grind_time_ns"]
    np_ = int(point.params.get("np", d.get("px", 1) * d.get("py", 1)))
    if reference is None:
        measured = None
    elif reference is point:
        measured = Ratio(1.0, 1.0, 1.0)
    else:
        measured = ratio(reference.metrics["grind_time_ns"].samples, grind.samples)
    pipeline = d.get("pipeline") or {}
    return ScalingPoint(
        np=np_,
        px=int(d.get("px", 1)),
        py=int(d.get("py", 1)),
        global_grid=list(d.get("global_grid") or []),
        grind=grind,
        solve=point.metrics.get("solve_s"),
        model_efficiency=float(d.get("model_efficiency", 1.0)),
        model_without_overlap=pipeline.get("model_efficiency_without_overlap"),
        pipeline_steps=pipeline.get("steps"),
        measured=measured,
        document_efficiency=point.metrics.get("parallel_efficiency"),
        reference_grind_ns=float(point.params.get("reference_grind_ns") or 0.0),
        derived=d,
    )


def weak_scaling(results: list[Result]) -> list[WeakScaling]:
    """The run's app.sweep points grouped into weak-scaling series (same work per process),
    each point with its measured efficiency against the series' np = 1 point."""
    series: dict[str, list[Point]] = {}
    for point in points(results, BENCHMARK):
        if "grind_time_ns" in point.metrics:
            series.setdefault(series_key(point.params), []).append(point)
    found = []
    for members in series.values():
        reference = next((p for p in members if p.params.get("np") == 1), None)
        scaled = [_scaling_point(p, reference) for p in members]
        scaled.sort(key=lambda s: (s.np, s.px))
        found.append(WeakScaling(subgrid_label(members[0].params), reference, scaled))
    return found
