"""The one rule that makes a figure an anomaly: communication figures (ranks, pairs, senders,
perfatlas.comm.analysis_comm) and node figures (perfatlas.cluster.analysis_nodes) are judged by it.

A group holds comparable figures, each a median with its 95 % confidence interval (the order
statistics of perfatlas.common.stats.median_ci_ranks, or the bootstrap interval of a noise slowdown).
Figure i, with m and MAD the median and the median absolute deviation of the logarithms of the
OTHER figures, is an anomaly only if all three hold:

  (1) far from its group: |ln x_i - m| > 3.5 * 1.4826 * MAD, the modified z-score of Iglewicz
      and Hoaglin (1993) with their cut-off, on logarithms (latency and bandwidth vary by
      factors), leave-one-out so that in a small group the outlier does not inflate the spread
      it is judged against (MAD = 0: any deviation is far);
  (2) significant against its own samples and the group's: its interval does not overlap the
      95 % interval of the median of the other figures' samples pooled (order statistics,
      perfatlas.common.stats.summarize), so that it differs from the group by more than the spread of
      its own samples and of theirs, and one disturbed figure among the others (a wide
      interval) does not hide it. Where the figures carry no plain samples (a noise slowdown
      with its block-bootstrap interval) the group's interval is the envelope [min lo_j,
      max hi_j] of the others' intervals. Two disjoint 95 % intervals of one distribution
      happen about 0.6 % of the time (Schenker & Gentleman, Am. Stat. 2001); with (1) and (3),
      on 2000 groups of 3 to 8 figures of 11 samples from one distribution (10 % spread), the
      rule trips in 7 groups (0.35 %; tests/test_anomaly.py);
  (3) beyond the minimum effect: x_i differs from the others' median by more than MIN_EFFECT
      (10 %), so that figures with very tight intervals are not called anomalous for a few
      percent.

Groups of fewer than three figures are not judged (of two, which is the odd one?).

Re-measure before reporting (perfatlas.run.remeasure_anomalies). A group is measured once more when a figure
passes the rule, or when a figure passes (2) and (3) but not (1): it differs from the others,
but they disagree among themselves too much to tell which is odd (with three figures, one
disturbed figure does that). With both measurements, figure i is reported only when it passes
the rule in each of them, in the same direction, against the other figures each taken at the
better of its two measurements (the lower latency or slowdown, the higher bandwidth: a
disturbance only makes a figure worse, so the best of repeated measurements is the least
disturbed; Chen & Revels 2016): a transient disturbance of figure i touches one of its
measurements only, and one of another figure is dropped with its worse measurement. A figure
that passed in the first measurement and not in both is withdrawn. On one distribution
(tests/test_anomaly.py) the rule trips in 0.35 % of the groups and none of these is reported
once re-measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfatlas.common.stats import summarize

MAD_TO_SIGMA = 1.4826
ROBUST_Z_LIMIT = 3.5
MIN_EFFECT = 0.10
MIN_GROUP = 3


@dataclass(frozen=True)
class Estimate:
    """A figure: its median (or point value) and its 95 % interval."""

    value: float
    ci_lo: float
    ci_hi: float
    samples: tuple[float, ...] = ()  # the raw samples where the figure is their median


@dataclass(frozen=True)
class Verdict:
    index: int
    value: float
    median: float  # of the other figures
    relative: float  # value / median - 1
    robust_z: float  # of ln value against the others' logs; inf when their MAD is 0
    ci_lo: float  # the figure's interval
    ci_hi: float
    others_lo: float  # the group's interval (criterion (2))
    others_hi: float
    far: bool  # (1)
    significant: bool  # (2)
    large: bool  # (3)

    @property
    def anomalous(self) -> bool:
        return self.far and self.significant and self.large


def estimate(samples: Sequence[float]) -> Estimate:
    """A figure from its raw samples: the median and its order-statistic interval."""
    summary = summarize(list(samples))
    return Estimate(summary.median, summary.ci_lo, summary.ci_hi, tuple(samples))


def robust_z(values: Sequence[float], index: int) -> float:
    """The leave-one-out modified z-score of ln values[index] (criterion (1))."""
    logs = np.log(np.asarray(values, dtype=float))
    others = np.delete(logs, index)
    center = float(np.median(others))
    scale = MAD_TO_SIGMA * float(np.median(np.abs(others - center)))
    deviation = float(logs[index]) - center
    if scale > 0:
        return deviation / scale
    return math.copysign(math.inf, deviation) if deviation else 0.0


def judge(
    figures: Sequence[Estimate],
    z_limit: float = ROBUST_Z_LIMIT,
    min_effect: float = MIN_EFFECT,
) -> list[Verdict]:
    """Every figure's verdict by the rule of this module's docstring; [] for a group of fewer
    than three figures or one with a figure that is not positive (no logarithm)."""
    values = [f.value for f in figures]
    if len(figures) < MIN_GROUP or any(not v > 0 for v in values):
        return []
    verdicts = []
    for i, figure in enumerate(figures):
        others = [f for j, f in enumerate(figures) if j != i]
        median = float(np.median([o.value for o in others]))
        low, high = group_interval(others)
        z = robust_z(values, i)
        relative = figure.value / median - 1.0
        verdicts.append(
            Verdict(
                i,
                figure.value,
                median,
                relative,
                z,
                figure.ci_lo,
                figure.ci_hi,
                low,
                high,
                far=abs(z) > z_limit,
                significant=disjoint(figure.ci_lo, figure.ci_hi, low, high),
                large=abs(relative) > min_effect,
            )
        )
    return verdicts


def disjoint(lo: float, hi: float, other_lo: float, other_hi: float) -> bool:
    """The project's one significance test (criterion (2)): two 95 % intervals that do not
    overlap. perfatlas.regression judges a figure against its baseline by it too."""
    return lo > other_hi or hi < other_lo


def group_interval(others: Sequence[Estimate]) -> tuple[float, float]:
    """The interval a figure is compared with (criterion (2)): that of the median of the others'
    samples pooled, or where one has no samples the envelope of their intervals."""
    if all(o.samples for o in others):
        pooled = summarize([x for o in others for x in o.samples])
        return pooled.ci_lo, pooled.ci_hi
    return min(o.ci_lo for o in others), max(o.ci_hi for o in others)


def anomalies(figures: Sequence[Estimate], min_effect: float = MIN_EFFECT) -> list[Verdict]:
    """The figures the rule calls anomalous."""
    return [v for v in judge(figures, min_effect=min_effect) if v.anomalous]


# -- re-measurements ------------------------------------------------------------------------------
REMEASURE_KEY = "remeasure"  # a document's link to the results it re-measures (docs/contract.md)


def is_remeasurement(document: dict) -> bool:
    """Whether a stored document re-measures earlier results (perfatlas.run.remeasure_anomalies)."""
    return bool(document.get(REMEASURE_KEY))


def unsettled(verdicts: Sequence[Verdict]) -> bool:
    """Whether a group's verdicts ask for a re-measurement: a figure passes the rule, or is
    significant and large but the others are too spread to call it far."""
    return any(v.significant and v.large for v in verdicts)


def best_of(measurements: Sequence[Estimate], higher_is_worse: bool) -> Estimate:
    """The best of a figure's measurements (the first of equals): disturbances only ever make a
    figure worse, so the best of repeated measurements is the least disturbed (Chen & Revels,
    "Robust benchmarking in noisy environments", 2016)."""
    if higher_is_worse:
        return min(measurements, key=lambda m: m.value)
    return max(measurements, key=lambda m: m.value)


def each(
    measured: Sequence[Sequence[Estimate]], index: int, higher_is_worse: bool
) -> tuple[Verdict | None, ...]:
    """Figure `index` judged at each of its measurements against the other figures, each at the
    best of its own (the group of at least three figures; None: not judged, a value that is not
    positive)."""
    others = [best_of(ms, higher_is_worse) for j, ms in enumerate(measured) if j != index]
    verdicts = []
    for own in measured[index]:
        judged = judge([*others[:index], own, *others[index:]])
        verdicts.append(judged[index] if judged else None)
    return tuple(verdicts)


def confirmed(verdicts: Sequence[Verdict | None]) -> bool:
    """Every measurement passes the rule, in the same direction."""
    if not verdicts or any(v is None for v in verdicts):
        return False
    up = verdicts[0].relative > 0
    return all(v.anomalous and (v.relative > 0) == up for v in verdicts)


def remeasure_label(confirmed: bool | None, value: str) -> str:
    """What a table shows of a figure's re-measurement, given its value formatted."""
    if confirmed is None:
        return "not re-measured"
    return f"{value}, {'confirmed' if confirmed else 'not confirmed'}"
