"""app.hydro: the SAGE cycle-time model against measured weak scaling, and cell updates per
second per process with one process and with all processes of a node, from the stored results
of one run (docs/guide/hydro.md).

The model (after Kerbyson et al., SC2001: computation + boundary gather/scatter + global
reductions), per cycle on np processes of c cells each:

    T(np) = c t_cell
          + E max_rank sum_messages t_pp(cells x 40 B)
          + E_cg max_rank sum_messages t_pp(cells x 8 B)
          + R t_allreduce(np)

t_cell: the np = 1 point's median compute time per cell and cycle in the same run (same cells
per process, grid cross-section, problem and solver); E, E_cg: the gather/scatters per cycle of
the conserved state (one per swept axis) and, with solver=cg, of the CG vectors; R: the
reductions per cycle (the time step's, and 1 + 2 per CG iteration); the messages: each rank's
ghost receives from each neighbour, from the document (its exchange lists); t_pp(bytes): the
one-way ping-pong time and t_allreduce(P) the 8-byte allreduce latency of this machine's stored
comm atlas (perfatlas.comm.comm_atlas), which the document carries. A rank's messages are
counted one after another, its sends assumed to overlap its receives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from perfatlas.app.analysis_points import Point, points
from perfatlas.comm.comm_atlas import allreduce_ns, message_ns
from perfatlas.common.stats import Ratio, ratio
from perfatlas.store.result import Result

BENCHMARK = "app.hydro"
# Parameters that do not change the work of one process in a weak-scaling series.
NOT_WORK = ("np", "repeat", "warmup", "state_file")


def series_key(params: dict) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in NOT_WORK}, sort_keys=True)


def series_label(params: dict) -> str:
    """'13500 cells/pe, 30x30 planes, wave' (and the solver, Riemann solver, threads)."""
    label = (
        f"{params.get('cells_per_pe')} cells/pe, {params.get('nx')}x{params.get('ny')} planes, "
        f"{params.get('problem')}"
    )
    extras = [
        f"{key}={params[key]}"
        for key, default in (("solver", "none"), ("riemann", "hllc"), ("threads", 1))
        if key in params and params[key] != default
    ]
    return ", ".join([label, *extras])


@dataclass(frozen=True)
class Model:
    compute_s: float
    gather_scatter_s: float
    reduction_s: float

    @property
    def cycle_s(self) -> float:
        return self.compute_s + self.gather_scatter_s + self.reduction_s


@dataclass(frozen=True)
class HydroPoint:
    np: int
    hosts: int
    global_grid: list[int]
    neighbours_max: int
    cycle: Result
    phases: dict[str, Result]  # compute_s, gather_scatter_s, reduction_s: what it measured
    rate: Result | None  # cc_per_s_per_pe
    model: Model | None
    model_missing: str | None  # why there is no model
    rate_against_one: Ratio | None  # cc/s/pe here over cc/s/pe at np = 1
    efficiency: Ratio | None  # weak scaling: T(1) / T(np) of the cycle times

    @property
    def per_node(self) -> int:
        return self.np // max(self.hosts, 1)


@dataclass(frozen=True)
class WeakScaling:
    label: str
    reference: Point | None  # the np = 1 point
    points: list[HydroPoint]  # by np
    atlas_source: str


def exchange_seconds(exchange: dict, pingpong: list[list[float]]) -> float:
    """The busiest rank's gather/scatter time per cycle: E sum t_pp(40 B cells) + E_cg sum
    t_pp(8 B cells) over its receives."""
    per_cycle = float(exchange.get("exchanges_per_cycle") or 0)
    cg_per_cycle = float(exchange.get("cg_exchanges_per_cycle") or 0)
    width, cg_width = exchange.get("bytes_per_cell", 40), exchange.get("cg_bytes_per_cell", 8)
    busiest = 0.0
    for rank in exchange.get("per_rank") or []:
        messages = [m["cells"] for m in rank.get("receive") or []]
        total = per_cycle * sum(message_ns(pingpong, c * width) for c in messages)
        total += cg_per_cycle * sum(message_ns(pingpong, c * cg_width) for c in messages)
        busiest = max(busiest, total)
    return busiest * 1e-9


def model(point: Point, reference: Point) -> tuple[Model | None, str | None]:
    """The model's cycle time for a point, or why it has none."""
    d = point.derived
    exchange, atlas = d.get("exchange") or {}, d.get("comm_atlas")
    compute = reference.metrics.get("compute_s")
    if compute is None or not compute.samples:
        return None, "the np = 1 point has no compute_s"
    cells = int(point.params.get("cells_per_pe") or d.get("cells_per_process") or 0)
    t_cell = compute.median / int(reference.params.get("cells_per_pe") or cells)
    np_ = int(point.params.get("np") or 1)
    talks = any(rank.get("receive") for rank in exchange.get("per_rank") or [])
    if atlas is None:
        return None, "the document carries no comm atlas (measured outside perfatlas)"
    if talks and not atlas.get("pingpong"):
        return None, "no stored comm.pingpong of this machine (measure comm.pingpong first)"
    if np_ > 1 and not atlas.get("allreduce"):
        return None, "no stored comm.allreduce of this machine (measure comm.allreduce first)"
    reductions = float(exchange.get("reductions_per_cycle") or 0)
    reduce = reductions * allreduce_ns(atlas.get("allreduce") or [], np_) * 1e-9
    gather = exchange_seconds(exchange, atlas.get("pingpong") or []) if talks else 0.0
    return Model(t_cell * cells, gather, reduce), None


def _point(point: Point, reference: Point | None) -> HydroPoint:
    d = point.derived
    np_ = int(point.params.get("np") or 1)
    exchange = d.get("exchange") or {}
    if reference is None:
        found, missing = None, "no np = 1 point of this series in the run"
    else:
        found, missing = model(point, reference)
    rate = point.metrics.get("cc_per_s_per_pe")
    one = reference.metrics.get("cc_per_s_per_pe") if reference is not None else None
    against = efficiency = None
    if rate is not None and one is not None:
        against = Ratio(1.0, 1.0, 1.0) if reference is point else ratio(rate.samples, one.samples)
    if reference is not None:
        cycle = point.metrics["cycle_s"].samples
        efficiency = (
            Ratio(1.0, 1.0, 1.0)
            if reference is point
            else ratio(reference.metrics["cycle_s"].samples, cycle)
        )
    return HydroPoint(
        np=np_,
        hosts=int((point.document.get("placement") or {}).get("hosts") or 1),
        global_grid=list(d.get("global_grid") or []),
        neighbours_max=int(exchange.get("neighbours_max") or 0),
        cycle=point.metrics["cycle_s"],
        phases={
            m: point.metrics[m]
            for m in ("compute_s", "gather_scatter_s", "reduction_s")
            if m in point.metrics
        },
        rate=rate,
        model=found,
        model_missing=missing,
        rate_against_one=against,
        efficiency=efficiency,
    )


def weak_scaling(results: list[Result]) -> list[WeakScaling]:
    """The run's app.hydro points grouped into weak-scaling series (same work per process),
    each point with its model against the series' np = 1 point."""
    series: dict[str, list[Point]] = {}
    for point in points(results, BENCHMARK):
        if "cycle_s" in point.metrics:
            series.setdefault(series_key(point.params), []).append(point)
    found = []
    for members in series.values():
        reference = next((p for p in members if p.params.get("np") == 1), None)
        scaled = sorted((_point(p, reference) for p in members), key=lambda s: s.np)
        atlas = next((p.derived.get("comm_atlas") for p in members if p.derived), None) or {}
        found.append(
            WeakScaling(
                series_label(members[0].params),
                reference,
                scaled,
                str(atlas.get("source") or "no comm atlas in the documents"),
            )
        )
    return found
