"""What the application proxies' sections share: time and figure cells, and the stacked phase bars
(medians of each phase stacked, the 95 % interval of the per-repetition total as a whisker)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfatlas.app.analysis_points import PhaseStack
from perfatlas.common.stats import Ratio, Summary
from perfatlas.common.units import format_number
from perfatlas.report import plots
from perfatlas.store.result import Result

PHASE_COLORS = [plots.COLORS[i] for i in (0, 1, 2, 3, 4, 5)]
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def time_unit(largest_s: float) -> tuple[str, float]:
    """The unit in which `largest_s` seconds reads best: (name, seconds per unit)."""
    for unit, factor in TIME_UNITS:
        if abs(largest_s) >= factor:
            return unit, factor
    return TIME_UNITS[-1]


def seconds(value: float | None) -> str:
    """'12.3 ms', '4.56 us', '1.2 s'."""
    if value is None:
        return "-"
    unit, factor = time_unit(value)
    return f"{format_number(value / factor)} {unit}"


def seconds_with_ci(result: Result | Summary | None) -> str:
    """'12.3 [12.1, 12.6] ms': a median of seconds and its 95 % interval, in the median's unit."""
    if result is None or result.median is None:
        return "-"
    unit, factor = time_unit(result.median)
    m, lo, hi = (format_number(v / factor) for v in (result.median, result.ci_lo, result.ci_hi))
    return f"{m} [{lo}, {hi}] {unit}"


def scaled_with_ci(result: Result | None, factor: float, unit: str, digits: int = 3) -> str:
    """The median and its interval divided by `factor`: '4.1 [3.9, 4.3] Gflop/s'."""
    if result is None or result.median is None:
        return "-"
    m, lo, hi = (
        format_number(v / factor, digits) for v in (result.median, result.ci_lo, result.ci_hi)
    )
    return f"{m} [{lo}, {hi}] {unit}".strip()


def ratio_text(value: Ratio | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{format_number(value.median, digits)} [{format_number(value.ci_lo, digits)}, {format_number(value.ci_hi, digits)}]"


def optional(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else format_number(value, digits)


def draw_phase_bars(ax, labels: Sequence[str], stacks: Sequence[PhaseStack]) -> str:
    """Horizontal bars, one per label: each phase's median stacked in pipeline order, and the
    median of the per-repetition totals with its 95 % CI as a black whisker. Returns the unit."""
    names = list(dict.fromkeys(p.name for s in stacks for p in s.phases))
    largest = max(
        [s.total.ci_hi for s in stacks if s.total]
        + [sum(p.result.median for p in s.phases) for s in stacks]
    )
    unit, factor = time_unit(largest)
    parts = {
        name: [
            next((p.result.median for p in s.phases if p.name == name), 0.0) / factor
            for s in stacks
        ]
        for name in names
    }
    plots.draw_stacked_bars(ax, list(labels), parts, PHASE_COLORS, horizontal=True)
    with_total = [(i, s.total) for i, s in enumerate(stacks) if s.total is not None]
    if with_total:
        rows = np.array([i for i, _ in with_total], dtype=float)
        median = np.array([t.median for _, t in with_total]) / factor
        errors = np.array([[t.median - t.ci_lo, t.ci_hi - t.median] for _, t in with_total]).T
        ax.errorbar(
            median,
            rows,
            xerr=np.clip(errors / factor, 0, None),
            fmt="o",
            color="black",
            markersize=3,
            capsize=3,
            linewidth=1,
            label="total per repetition (median, 95 % CI)",
        )
    ax.set_xlabel(f"time per repetition ({unit})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return unit


def bar_height(count: int) -> float:
    """Figure height in inches for `count` horizontal bars."""
    return 1.3 + 0.34 * count


def phase_bars_svg(
    name: str, title: str, labels: Sequence[str], stacks: Sequence[PhaseStack]
) -> str:
    """One figure of draw_phase_bars, one bar per label, titled `title`; `name` salts its SVG
    ids (plots.figure)."""
    with plots.figure(name, width=9.5, height=bar_height(len(stacks))) as (fig, axes):
        draw_phase_bars(axes[0, 0], labels, stacks)
        axes[0, 0].set_title(title, loc="left")
        fig.tight_layout()
        return plots.to_svg(fig)
