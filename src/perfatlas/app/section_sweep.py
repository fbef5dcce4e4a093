"""app.sweep: weak scaling of the KBA wavefront sweep (grind time against process count), the
pipeline model's efficiency against the measured one, and the particle balance of every solve
(perfatlas.app.analysis_sweep)."""

from __future__ import annotations

import numpy as np

from perfatlas.app import analysis_sweep
from perfatlas.app.proxy_figures import optional, ratio_text, scaled_with_ci, seconds
from perfatlas.common.units import format_number
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData

FORMULA = (
    "Grind time g(np) = T(np) np / (C D I) = T(np) / (c D I): the solve time T (a common barrier "
    "to the slowest rank) per cell, direction and source iteration of one process (C = c np "
    "global cells, D directions, I iterations). Weak scaling keeps the c cells per process, so "
    "the ideal T does not change with np and the measured efficiency is E(np) = T(1) / T(np) = "
    "g(1) / g(np), g(1) the np = 1 result of the same subgrid, directions, blocking and physics "
    "in this run (a ratio of medians with a percentile-bootstrap 95 % interval). Model: 8 Nb / "
    "(8 Nb + 2 (px - 1) + 3 (py - 1)) pipeline steps with unit time per block and free messages, "
    "Nb = (kt/mk)(mmo/mmi) blocks per octant."
)


def _curve(label: str, x: list[int], values: list[tuple[float, float, float]], color) -> Curve:
    array = np.array(values, dtype=float)
    return Curve(
        label, np.array(x, dtype=float), array[:, 0], array[:, 1], array[:, 2], color=color
    )


def _figure(series: list[analysis_sweep.WeakScaling]) -> str:
    with plots.figure("app-sweep", 1, 2, width=10.0, height=3.8) as (fig, axes):
        grind, efficiency = axes[0]
        counts = sorted({p.np for s in series for p in s.points})
        for i, s in enumerate(series):
            color = plots.COLORS[i % len(plots.COLORS)]
            x = [p.np for p in s.points]
            plots.draw_error_bars(
                grind,
                [
                    _curve(
                        s.label,
                        x,
                        [(p.grind.median, p.grind.ci_lo, p.grind.ci_hi) for p in s.points],
                        color,
                    )
                ],
            )
            measured = [p for p in s.points if p.measured is not None]
            if measured:
                plots.draw_error_bars(
                    efficiency,
                    [
                        _curve(
                            f"measured, {s.label}",
                            [p.np for p in measured],
                            [
                                (p.measured.median, p.measured.ci_lo, p.measured.ci_hi)
                                for p in measured
                            ],
                            color,
                        )
                    ],
                )
            given = [p for p in s.points if p.measured is None and p.document_efficiency]
            if given:  # no np = 1 in this run: the document's, against reference_grind_ns
                plots.draw_error_bars(
                    efficiency,
                    [
                        _curve(
                            f"document's (reference_grind_ns), {s.label}",
                            [p.np for p in given],
                            [
                                (r.median, r.ci_lo, r.ci_hi)
                                for r in (p.document_efficiency for p in given)
                            ],
                            color,
                        )
                    ],
                )
            efficiency.plot(
                x,
                [p.model_efficiency for p in s.points],
                color=color,
                linestyle="--",
                marker="x",
                linewidth=1,
                label=f"KBA model, {s.label}",
            )
        efficiency.axhline(1.0, color="0.4", linestyle=":", linewidth=0.9)
        grind.set_ylabel("grind time, ns per cell, direction, iteration")
        efficiency.set_ylabel("parallel efficiency")
        highest = [
            v
            for s in series
            for p in s.points
            for v in (
                p.measured.ci_hi if p.measured else 0.0,
                p.document_efficiency.ci_hi if p.document_efficiency else 0.0,
            )
        ]
        efficiency.set_ylim(0, max([1.15, *(1.05 * v for v in highest)]))
        for ax in (grind, efficiency):
            ax.set_xticks(counts)
            ax.set_xlabel("MPI processes (weak scaling)")
        grind.set_ylim(bottom=0)
        grind.legend(frameon=False, loc="lower left")
        efficiency.legend(frameon=False, loc="lower left", fontsize=6.5)
        fig.tight_layout()
        return plots.to_svg(fig)


def _efficiency_text(point: analysis_sweep.ScalingPoint, has_reference: bool) -> str:
    if point.measured is not None:
        return ratio_text(point.measured)
    if point.document_efficiency is not None:
        return (
            scaled_with_ci(point.document_efficiency, 1.0, "")
            + f" (document: reference_grind_ns={point.reference_grind_ns:g})"
        )
    return "-" if has_reference else "no np = 1 result"


def _scaling_table(series: list[analysis_sweep.WeakScaling]) -> Table:
    given = any(p.document_efficiency for s in series for p in s.points)
    rows = []
    for s in series:
        for p in s.points:
            steps = f" ({p.pipeline_steps} steps)" if p.pipeline_steps else ""
            row = [
                s.label,
                str(p.np),
                f"{p.px} x {p.py}",
                " x ".join(str(v) for v in p.global_grid),
                scaled_with_ci(p.grind, 1.0, "ns"),
                seconds(p.solve.median if p.solve else None),
                f"{format_number(p.model_efficiency)}{steps}",
                optional(p.model_without_overlap),
                _efficiency_text(p, s.reference is not None),
            ]
            if given:
                row.append(scaled_with_ci(p.document_efficiency, 1.0, ""))
            rows.append(row)
    columns = [
        "subgrid",
        "np",
        "px x py",
        "global grid",
        "grind time [95 % CI]",
        "solve",
        "model efficiency",
        "single octant, no overlap",
        "measured efficiency [95 % CI]",
    ]
    return Table(
        columns + (["document's, against reference_grind_ns"] if given else []),
        rows,
        caption="Weak scaling per subgrid. Measured efficiency = g(1) / g(np) from this run's "
        "stored grind times; where the run holds no np = 1 result of the subgrid, the "
        "document's parallel_efficiency against the reference_grind_ns it was given is shown "
        "instead. Single octant without overlap: Hoisie et al.'s Nb / (Nb + px + py - 2).",
        numeric=(1, 2, 3, 4, 5, 6, 7, 8, 9),
    )


def _small(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def _balance_table(series: list[analysis_sweep.WeakScaling]) -> Table:
    rows = []
    for s in series:
        for p in s.points:
            b, physical = p.balance, p.physical_balance
            rows.append(
                [
                    s.label,
                    str(p.np),
                    optional(b.get("source"), 6),
                    optional(b.get("collision"), 6),
                    optional(b.get("leakage"), 6),
                    _small(b.get("relative_imbalance")),
                    _small(physical.get("relative_imbalance")),
                    str(p.derived.get("iterations", "-"))
                    + (" (converged)" if p.derived.get("converged") else ""),
                    str(p.derived.get("negative_face_fluxes", "-")),
                ]
            )
    limit = next((p.balance.get("limit") for s in series for p in s.points if p.balance), None)
    return Table(
        [
            "subgrid",
            "np",
            "source",
            "collision",
            "leakage",
            "imbalance",
            "physical imbalance",
            "iterations",
            "negative face fluxes",
        ],
        rows,
        caption="Particle balance of the last sweep of every solve, particles/s: source V sum "
        "(sigma_s phi + q) = collision V sigma_t sum phi + leakage through the six faces; exact "
        "for diamond differencing, so the relative imbalance is rounding (every solve is "
        f"checked against {limit:g}, else the run fails). Physical: V N_q q = V sigma_a sum phi "
        "+ leakage, which holds once the source iteration has converged."
        if limit is not None
        else "Particle balance of the last sweep of every solve, particles/s.",
        numeric=(1, 2, 3, 4, 5, 6, 7, 8),
    )


@section("app-sweep", "Wavefront transport sweep (app.sweep)", order=63)
def build(data: RunData) -> list[Block] | None:
    series = analysis_sweep.weak_scaling(data.results)
    if not series:
        return None
    blocks: list[Block] = [
        Figure(
            _figure(series),
            "Left: grind time against the number of processes, each process holding the same "
            "subgrid (median, 95 % CI). Right: measured parallel efficiency (solid, 95 % CI) "
            "and the KBA pipeline model (dashed); dotted: ideal. " + FORMULA,
        ),
        _scaling_table(series),
        _balance_table(series),
    ]
    without = [s.label for s in series if s.reference is None]
    if without:
        blocks.append(
            Note(
                f"No np = 1 result of {'; '.join(without)} in this run: its measured efficiency "
                "needs one (add np = 1 to the step), or the document's parallel_efficiency "
                "against a reference_grind_ns you give.",
                "warning",
            )
        )
    return blocks
