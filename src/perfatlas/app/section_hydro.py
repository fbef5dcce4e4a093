"""app.hydro: predicted against measured weak scaling of the cycle time (the SAGE model of
perfatlas.app.analysis_hydro), the measured split into computation, gather/scatter and
reductions, and cell updates per second per process with one and with all processes per node."""

from __future__ import annotations

import numpy as np

from perfatlas.app import analysis_hydro
from perfatlas.app.proxy_figures import ratio_text, scaled_with_ci, seconds, seconds_with_ci
from perfatlas.common.units import format_number
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData

FORMULA = (
    "Model (Kerbyson et al., SC2001): T(np) = c t_cell + E max_rank sum t_pp(cells x 40 B) + "
    "E_cg max_rank sum t_pp(cells x 8 B) + R t_allreduce(np), with c cells per process, t_cell "
    "the np = 1 compute time per cell and cycle of the same series in this run, E and E_cg the "
    "gather/scatters per cycle of the state and of the CG vectors, R the reductions per cycle, "
    "each rank's ghost messages from its document, t_pp the one-way ping-pong time and "
    "t_allreduce the 8-byte allreduce latency of this machine's stored comm atlas."
)
PHASES = ("compute_s", "gather_scatter_s", "reduction_s")


def _curve(label: str, x: list[int], values: list[tuple[float, float, float]], color) -> Curve:
    array = np.array(values, dtype=float)
    return Curve(
        label, np.array(x, dtype=float), array[:, 0], array[:, 1], array[:, 2], color=color
    )


def _figure(series: list[analysis_hydro.WeakScaling]) -> str:
    with plots.figure("app-hydro", 1, 2, width=10.0, height=3.8) as (fig, axes):
        cycle, rate = axes[0]
        counts = sorted({p.np for s in series for p in s.points})
        for i, s in enumerate(series):
            color = plots.COLORS[i % len(plots.COLORS)]
            x = [p.np for p in s.points]
            measured = [(p.cycle.median, p.cycle.ci_lo, p.cycle.ci_hi) for p in s.points]
            scaled = [tuple(v * 1e3 for v in m) for m in measured]
            plots.draw_error_bars(cycle, [_curve(f"measured, {s.label}", x, scaled, color)])
            modelled = [p for p in s.points if p.model is not None]
            if modelled:
                cycle.plot(
                    [p.np for p in modelled],
                    [p.model.cycle_s * 1e3 for p in modelled],
                    color=color,
                    linestyle="--",
                    marker="x",
                    linewidth=1,
                    label=f"model, {s.label}",
                )
            rates = [p for p in s.points if p.rate is not None]
            if rates:
                values = [(p.rate.median, p.rate.ci_lo, p.rate.ci_hi) for p in rates]
                plots.draw_error_bars(
                    rate,
                    [
                        _curve(
                            s.label,
                            [p.np for p in rates],
                            [tuple(v / 1e6 for v in r) for r in values],
                            color,
                        )
                    ],
                )
        plots.plain_log_y(cycle, "cycle time, ms")
        rate.set_ylabel("cell updates per s per process, millions")
        rate.set_ylim(bottom=0)
        for ax in (cycle, rate):
            ax.set_xticks(counts)
            ax.set_xlabel("MPI processes (weak scaling)")
        cycle.legend(frameon=False, loc="upper left", fontsize=6.5)
        rate.legend(frameon=False, loc="lower left", fontsize=6.5)
        fig.tight_layout()
        return plots.to_svg(fig)


def _scaling_table(series: list[analysis_hydro.WeakScaling]) -> Table:
    rows = []
    for s in series:
        one = next((p.model for p in s.points if p.np == 1), None)
        for p in s.points:
            m = p.model
            rows.append(
                [
                    s.label,
                    str(p.np),
                    " x ".join(str(v) for v in p.global_grid),
                    str(p.neighbours_max),
                    seconds_with_ci(p.cycle),
                    *(seconds(r.median) if (r := p.phases.get(k)) else "-" for k in PHASES),
                    seconds(m.compute_s) if m else "-",
                    seconds(m.gather_scatter_s) if m else "-",
                    seconds(m.reduction_s) if m else "-",
                    seconds(m.cycle_s) if m else (p.model_missing or "-"),
                    format_number(m.cycle_s / p.cycle.median) if m and p.cycle.median else "-",
                    ratio_text(p.efficiency),
                    format_number(one.cycle_s / m.cycle_s) if m and one else "-",
                ]
            )
    return Table(
        [
            "series",
            "np",
            "global grid",
            "most neighbours",
            "cycle [95 % CI]",
            "compute",
            "gather/scatter",
            "reduction",
            "model compute",
            "model gather/scatter",
            "model reduction",
            "model cycle",
            "model / measured",
            "efficiency T(1)/T(np) [95 % CI]",
            "model efficiency",
        ],
        rows,
        caption="Weak scaling per series: the measured cycle time (a run from a common barrier "
        "to the slowest rank, per cycle) and the slowest rank's time per phase (medians; waits "
        "for other ranks fall in gather/scatter and reduction), against the model's terms; the "
        "weak-scaling efficiency T(1)/T(np) of the medians with a percentile-bootstrap 95 % "
        "interval, and the model's.",
        numeric=tuple(range(1, 15)),
    )


def _rate_table(series: list[analysis_hydro.WeakScaling]) -> Table:
    rows = [
        [
            s.label,
            str(p.np),
            str(p.hosts),
            str(p.per_node),
            scaled_with_ci(p.rate, 1e6, "M/s"),
            ratio_text(p.rate_against_one),
        ]
        for s in series
        for p in s.points
    ]
    return Table(
        [
            "series",
            "np",
            "hosts",
            "processes per node",
            "cc/s/pe [95 % CI]",
            "against one process [95 % CI]",
        ],
        rows,
        caption="Cell updates per second per process (cells_per_pe / cycle time) with one "
        "process and with more per node; against one process: the ratio of medians with a "
        "percentile-bootstrap 95 % interval (SAGE on the Lightning study's nodes: 15-20 % lower "
        "per processor when both processors of a node are used).",
        numeric=(1, 2, 3, 4, 5),
    )


@section("app-hydro", "SAGE-style hydrodynamics (app.hydro)", order=64)
def build(data: RunData) -> list[Block] | None:
    series = analysis_hydro.weak_scaling(data.results)
    if not series:
        return None
    blocks: list[Block] = [
        Figure(
            _figure(series),
            "Left: cycle time against the number of processes, each holding the same cells "
            "(median, 95 % CI; log scale), and the model (dashed). Right: cell updates per second per "
            "process. " + FORMULA,
        ),
        _scaling_table(series),
        _rate_table(series),
    ]
    sources = sorted({s.atlas_source for s in series})
    blocks.append(Note("Comm atlas of the model: " + "; ".join(sources) + ".", "info"))
    missing = sorted(
        {f"{s.label}: {p.model_missing}" for s in series for p in s.points if p.model_missing}
    )
    if missing:
        blocks.append(Note("No model for " + "; ".join(missing) + ".", "warning"))
    return blocks
