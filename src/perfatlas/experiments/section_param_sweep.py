"""Sweeps: speedup and parallel efficiency per metric (per phase), wall time and speedup of the
policies side by side, run-to-run variability per point (perfatlas.experiments.analysis_param_sweep)."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np

from perfatlas.common.units import format_number, format_value
from perfatlas.experiments.analysis_param_sweep import (
    Scaling,
    SweepPoint,
    fastest_and_best_scaling,
    scaling,
    sweep_points,
)
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData

PANELS_PER_FIGURE = 3  # metrics side by side in one figure


def _curves(scalings: list[Scaling], value) -> list[Curve]:
    """One line per policy: x = threads, y = value(scaling) -> (median, lo, hi)."""
    by_policy: dict[str, list[Scaling]] = defaultdict(list)
    for s in scalings:
        by_policy[s.point.policy].append(s)
    curves = []
    for i, (policy, members) in enumerate(by_policy.items()):
        members.sort(key=lambda s: s.point.threads)
        values = np.array([value(s) for s in members], dtype=float)
        curves.append(
            Curve(
                policy,
                np.array([s.point.threads for s in members], dtype=float),
                values[:, 0],
                values[:, 1],
                values[:, 2],
                color=plots.COLORS[i % len(plots.COLORS)],
                marker="o",
            )
        )
    return curves


def _figure(name: str, scalings: list[Scaling], metrics: list[str]) -> str:
    """Top row: the metric against threads per policy; bottom row: speedup with the ideal line."""
    with plots.figure(name, 2, len(metrics), width=3.3 * len(metrics) + 0.6, height=5.6) as (
        fig,
        axes,
    ):
        for column, metric in enumerate(metrics):
            mine = [s for s in scalings if s.point.metric == metric]
            unit = mine[0].point.unit
            top, bottom = axes[0][column], axes[1][column]
            plots.draw_error_bars(
                top,
                _curves(
                    mine,
                    lambda s: (
                        s.point.summary.median,
                        s.point.summary.ci_lo,
                        s.point.summary.ci_hi,
                    ),
                ),
            )
            top.set_title(metric, loc="left")
            top.set_ylabel(unit)
            plots.draw_error_bars(
                bottom,
                _curves(mine, lambda s: (s.speedup.median, s.speedup.ci_lo, s.speedup.ci_hi)),
            )
            threads = sorted({s.point.threads for s in mine})
            base = min(s.base.threads for s in mine)
            bottom.plot(
                threads,
                [t / base for t in threads],
                color="0.4",
                linestyle=":",
                linewidth=0.9,
                label="ideal",
            )
            bottom.set_ylabel("speedup (95 % CI)")
            for ax in (top, bottom):
                ax.set_xticks(threads)
                ax.set_xlabel("threads")
        axes[0][0].legend(frameon=False)
        fig.tight_layout()
        return plots.to_svg(fig)


def _side_by_side(scalings: list[Scaling]) -> Table:
    """Policies side by side per metric and thread count: time (or rate) and speedup."""
    verdicts = fastest_and_best_scaling(scalings)
    rows = []
    for s in scalings:
        p = s.point
        fastest, best = verdicts[(p.benchmark, p.fixed, p.metric, p.threads)]
        marks = [
            m for m, policy in (("fastest", fastest), ("best scaling", best)) if policy == p.policy
        ]
        rows.append(
            [
                p.metric,
                str(p.threads),
                p.policy,
                f"{format_value(p.summary.median, p.unit)} "
                f"[{format_value(p.summary.ci_lo, p.unit)}, {format_value(p.summary.ci_hi, p.unit)}]",
                f"{format_number(s.speedup.median)} [{format_number(s.speedup.ci_lo)}, {format_number(s.speedup.ci_hi)}]",
                f"{s.efficiency:.0%}",
                ", ".join(marks),
            ]
        )
    return Table(
        ["metric", "threads", "policy", "median (95 % CI)", "speedup (95 % CI)", "efficiency", ""],
        rows,
        caption="The policies side by side: the fastest policy and the best-scaling one are "
        "marked per thread count (they need not be the same). Speedup is against the policy's "
        "fewest threads; efficiency = speedup x fewest threads / threads.",
        numeric=(1, 3, 4, 5),
    )


def _variability(points: list[SweepPoint]) -> Table:
    methods = sorted({m for p in points for m in p.obtained("remote_fraction_method") if m})
    rows = []
    for p in points:
        remote = p.remote_fraction
        rows.append(
            [
                p.metric,
                str(p.threads),
                p.policy,
                str(len(p.launches)),
                "-" if p.cv is None else f"{p.cv:.1%}",
                "-" if p.spread is None else f"{p.spread:.1%}",
                ", ".join(format_value(m, p.unit) for m in p.launch_medians),
                "-" if p.migrations is None else f"{p.migrations:g}",
                "-" if remote is None else f"{remote:.0%}",
                p.obtained("binding")[0] or "-",
            ]
        )
    return Table(
        [
            "metric",
            "threads",
            "policy",
            "launches",
            "CV",
            "spread",
            "launch medians",
            "migrations",
            "remote",
            "binding obtained",
        ],
        rows,
        caption="Run-to-run variability: the coefficient of variation and the spread "
        "((max - min) / median) of the launches' medians, with every launch's median. "
        "Migrations: the scheduler's count over the process's threads (median of launches). "
        "Remote: the fraction of memory accesses to another NUMA node -- "
        + (methods[0] if len(methods) == 1 else "measured or estimated per launch")
        + ".",
        numeric=(1, 3, 4, 5, 7, 8),
    )


@section("sweep", "Sweeps: threads, binding, memory placement", order=70)
def build(data: RunData) -> list[Block] | None:
    points = sweep_points(data.launches)
    if not points:
        return None
    blocks: list[Block] = []
    groups: dict[tuple, list[SweepPoint]] = defaultdict(list)
    for p in points:
        groups[(p.benchmark, p.fixed)].append(p)
    for index, ((benchmark, fixed), members) in enumerate(groups.items()):
        scalings = scaling(members)
        metrics = list(dict.fromkeys(p.metric for p in members))
        params = ", ".join(f"{k}={v}" for k, v in json.loads(fixed).items() if v not in (None, ""))
        for start in range(0, len(metrics), PANELS_PER_FIGURE):
            shown = metrics[start : start + PANELS_PER_FIGURE]
            blocks.append(
                Figure(
                    _figure(f"sweep{index}-{start}", scalings, shown),
                    f"{benchmark} ({params}): {', '.join(shown)} against threads per policy "
                    "(top) and their speedup with the ideal line (bottom); medians of all "
                    "launches with 95 % intervals.",
                )
            )
        blocks.append(_side_by_side(scalings))
        blocks.append(_variability(members))
    if all(len(p.launches) < 2 for p in points):
        blocks.append(
            Note("each point was launched once: run-to-run variability needs --repeat 2", "warning")
        )
    return blocks
