"""A run's figures against a baseline's, each with a verdict.

Figures match when they are the same benchmark, parameters and metric (a result) or the same
finding kind, subject and unit. For each pair the ratio now / baseline is given with a 95 %
interval: the percentile bootstrap of the ratio of medians where both are results with samples
(perfatlas.common.stats.ratio), else the quotient of their intervals, [now low / baseline high, now
high / baseline low]. The verdict:

- regression: worse, in the figure's direction (perfatlas.regression.direction), by more than the
  tolerance, AND significant by the project's one test (perfatlas.common.anomaly.disjoint: the two 95 %
  intervals do not overlap);
- improved: better by more than the tolerance, and significant;
- not significant: beyond the tolerance either way, but the intervals overlap;
- ok: within the tolerance;
- not comparable: no direction is worse, a value that is not positive, or the figure is not in
  the run.

With a re-measurement (--remeasure) a regression stands only where the better of the two
measurements still is one: a disturbance only makes a figure worse, so the best of repeated
measurements is the least disturbed (perfatlas.common.anomaly.best_of; Chen & Revels 2016).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from perfatlas.common.anomaly import Estimate, best_of, disjoint
from perfatlas.common.errors import UserError
from perfatlas.common.stats import Ratio, ratio
from perfatlas.common.units import format_value
from perfatlas.regression.run_figures import Figure

VERDICTS = ("ok", "improved", "regression", "not significant", "not comparable")
DEFAULT_TOLERANCE = 0.05
SHOWN_METRICS = 12  # metrics named in the sentence that refuses an unknown one


@dataclass(frozen=True)
class Row:
    label: str
    metric: str
    baseline: Figure
    now: Figure | None
    ratio: Ratio | None  # now / baseline
    verdict: str
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.baseline.key


def parse_tolerance(text: str) -> float:
    """'5%' or a fraction '0.05' -> 0.05; from 0 up to (not including) 100 %."""
    word = text.strip()
    percent = word.endswith("%")
    try:
        value = float(word[:-1] if percent else word)
    except ValueError:
        value = math.nan
    value = value / 100 if percent else value
    if not (math.isfinite(value) and 0 <= value < 1):
        raise UserError(
            f"--tolerance {text!r} is not a tolerance: give a percentage from 0 to below 100 "
            "(e.g. 5%) or a fraction (e.g. 0.05)"
        )
    return value


def chosen(figures: Sequence[Figure], metrics: Sequence[str]) -> list[Figure]:
    """The figures of the metrics asked (all where none is asked); an unknown one is refused."""
    known = dict.fromkeys(f.metric for f in figures)
    unknown = [m for m in metrics if m not in known]
    if unknown:
        names = ", ".join(list(known)[:SHOWN_METRICS]) + (
            ", ..." if len(known) > SHOWN_METRICS else ""
        )
        raise UserError(f"unknown metric {unknown[0]!r}: the baseline's figures are of {names}")
    return [f for f in figures if not metrics or f.metric in metrics]


def figure_ratio(now: Figure, baseline: Figure) -> Ratio:
    """now / baseline with its 95 % interval (this module's docstring)."""
    if len(now.samples) > 1 and len(baseline.samples) > 1:
        return ratio(now.samples, baseline.samples)
    low = now.ci_lo / baseline.ci_hi if baseline.ci_hi > 0 else math.inf
    high = now.ci_hi / baseline.ci_lo if baseline.ci_lo > 0 else math.inf
    return Ratio(now.value / baseline.value, low, high)


def judge(baseline: Figure, now: Figure | None, tolerance: float) -> Row:
    """One figure's verdict (this module's docstring)."""
    row = Row(baseline.label, baseline.metric, baseline, now, None, "not comparable")
    if now is None:
        return replace(row, note="not in the run checked")
    if baseline.higher_is_better is None:
        return replace(row, note=baseline.why_no_direction)
    if not (baseline.value > 0 and now.value > 0):
        return replace(row, note="a value that is not positive")
    change = figure_ratio(now, baseline)
    worse = now.value / baseline.value - 1
    if baseline.higher_is_better:
        worse = baseline.value / now.value - 1
    row = replace(row, ratio=change)
    if abs(worse) <= tolerance:
        return replace(row, verdict="ok")
    if not disjoint(now.ci_lo, now.ci_hi, baseline.ci_lo, baseline.ci_hi):
        return replace(row, verdict="not significant", note="the 95 % intervals overlap")
    return replace(row, verdict="regression" if worse > 0 else "improved")


def compare(
    baseline: Sequence[Figure], now: Sequence[Figure], tolerance: float, metrics: Sequence[str]
) -> list[Row]:
    """Every figure of the baseline (of the metrics asked) against the run's."""
    by_key = {f.key: f for f in now}
    return [judge(b, by_key.get(b.key), tolerance) for b in chosen(baseline, metrics)]


def _estimate(f: Figure) -> Estimate:
    return Estimate(f.value, f.ci_lo, f.ci_hi, f.samples)


def confirm(rows: Sequence[Row], again: Sequence[Figure], tolerance: float, run: int) -> list[Row]:
    """Regressions judged again at the better of their two measurements; the others as they
    were. `again`: the figures of the re-measurement, stored as run `run`."""
    by_key = {f.key: f for f in again}
    confirmed = []
    for row in rows:
        second = by_key.get(row.key)
        if row.verdict != "regression" or row.now is None:
            confirmed.append(row)
            continue
        if second is None:
            confirmed.append(replace(row, note=f"not re-measured in run {run}"))
            continue
        first = _estimate(row.now)
        best = best_of((first, _estimate(second)), not row.baseline.higher_is_better)
        kept = judge(row.baseline, row.now if best is first else second, tolerance)
        shown = format_value(second.value, second.unit)
        if kept.verdict == "regression":
            confirmed.append(replace(kept, note=f"confirmed: run {run} measured {shown}"))
        else:
            confirmed.append(replace(kept, note=f"not confirmed: run {run} measured {shown}"))
    return confirmed


def exit_status(rows: Sequence[Row]) -> int:
    """0: no regression; 1: a significant regression beyond the tolerance."""
    return 1 if any(r.verdict == "regression" for r in rows) else 0
