"""What the communication results mean: anomalous ranks, pairs and links; how collectives grow
with the process count; ranks that share a core.

Anomalies (the mis-routed cable of the LANL Lightning report): within a group of comparable
figures (same benchmark, metric, message size, np, and link class: intra-node figures are never
compared with inter-node ones), a figure (a rank's, a pair's or a sender's median with the 95 %
interval of its own samples) is an anomaly by the one rule of perfatlas.common.anomaly: far from its
group (leave-one-out modified z-score on logarithms, Iglewicz and Hoaglin 1993, > 3.5), its
interval apart from that of the others' pooled samples, and more than 10 % from the others'
median. Groups of fewer than three figures are not judged (of two, which is the odd one?). A
group where the rule trips, or that is too spread to tell, is re-measured (perfatlas.run.remeasure_anomalies);
where the run holds the re-measurement, a figure is reported only when both of its measurements
pass the rule against the others, each at the better of its two (perfatlas.common.anomaly.each), and
one the first measurement alone found is withdrawn. A
host is suspect when every figure involving it is a reported anomaly, worse, while the group also
holds figures without it: the link of that host, not one rank, is then the likely cause.

Growth of collectives (comm.allreduce, comm.barrier): latency is fitted by least squares against
log2 P and against P; growth is called logarithmic (or linear) when that fit leaves at most half
the residual sum of squares of the other. It is "flat" when the largest median is within 25 % of
the smallest, and "inconclusive" with fewer than three process counts or when P spans less than a
factor of 4 (over 2..4 the two shapes differ by less than the noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from perfatlas.common import anomaly
from perfatlas.common.anomaly import (
    MIN_EFFECT,
    MIN_GROUP,
    ROBUST_Z_LIMIT,
    Estimate,
    is_remeasurement,
)
from perfatlas.common.units import format_size
from perfatlas.store.result import Result

MIN_RELATIVE_DEVIATION = MIN_EFFECT  # the rule's minimum effect (perfatlas.common.anomaly)
GROWTH_WIN_FACTOR = 0.5  # the better fit's residual sum of squares, relative to the other's
GROWTH_MIN_SPAN = 4.0  # largest P / smallest P
FLAT_RATIO = 1.25


# -- robust outliers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deviation:
    index: int
    value: float
    median: float  # of the other values
    relative: float  # value / median - 1
    robust_z: float  # of ln value against the others' logs; inf when their MAD is 0


def robust_outliers(
    values: Sequence[float],
    z_limit: float = ROBUST_Z_LIMIT,
    min_relative: float = MIN_RELATIVE_DEVIATION,
) -> list[Deviation]:
    """The values far from the others (criteria (1) and (3) of perfatlas.common.anomaly, without the
    intervals: for figures given as bare values).

    Each value is compared with the median and MAD of the other values (leave one out), so that
    in a small group the outlier does not inflate the spread it is measured against; the robust
    z-score is taken on logarithms, since latency and bandwidth vary by factors.
    """
    x = np.asarray(values, dtype=float)
    if len(x) < MIN_GROUP or np.any(x <= 0):
        return []
    found = []
    for i, v in enumerate(x):
        z = anomaly.robust_z(x, i)
        median = float(np.median(np.delete(x, i)))
        relative = float(v) / median - 1.0
        if abs(relative) > min_relative and abs(z) > z_limit:
            found.append(Deviation(i, float(v), median, relative, z))
    return found


# -- anomalies of a run ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """One figure to compare: a rank's, a pair's or a sender's median."""

    subject: str
    value: float
    hosts: tuple[str, ...]
    result: Result
    estimate: Estimate  # the median and the 95 % interval of its own samples


@dataclass(frozen=True)
class Anomaly:
    benchmark: str
    metric: str
    unit: str
    group: str
    subject: str
    value: float
    median: float
    relative: float
    robust_z: float
    worse: bool  # slower latency or lower bandwidth
    hosts: tuple[str, ...]
    result_id: int  # the stored result the figure comes from
    ci_lo: float = math.nan  # the figure's 95 % interval
    ci_hi: float = math.nan
    others_lo: float = math.nan  # the envelope of the other figures' intervals
    others_hi: float = math.nan
    confirmed: bool | None = None  # by its re-measurement; None: not re-measured
    remeasured_value: float | None = None
    remeasured_result_id: int | None = None
    n: int = 0  # samples behind the figure's own interval (its coverage below 6)


@dataclass(frozen=True)
class SuspectHost:
    benchmark: str
    metric: str
    group: str
    host: str
    flagged: int


@dataclass
class AnomalyReport:
    anomalies: list[Anomaly] = field(default_factory=list)
    suspects: list[SuspectHost] = field(default_factory=list)
    groups_checked: int = 0
    figures_checked: int = 0
    too_small: list[tuple[str, list[Figure]]] = field(default_factory=list)  # under 3 figures
    withdrawn: list[Anomaly] = field(default_factory=list)  # not confirmed by re-measurement
    # results of groups to measure again: a figure passes the rule, or is significant and
    # large while the others are too spread to tell (perfatlas.common.anomaly.unsettled)
    to_remeasure: list[int] = field(default_factory=list)


def higher_is_worse(metric: str) -> bool:
    return not metric.endswith("_Bps")


def rank_hosts(document: dict) -> dict[int, str]:
    ranks = (document.get("placement") or {}).get("ranks") or []
    return {int(r["rank"]): str(r.get("host", "?")) for r in ranks}


def link_of(document: dict) -> str:
    return str((document.get("placement") or {}).get("link") or "unknown link")


def _message_sizes(result: Result, metric: str) -> str:
    p = result.params
    if metric.startswith("latency") and "latency_bytes" in p:
        return format_size(p["latency_bytes"])
    if "bandwidth_bytes" in p:
        return format_size(p["bandwidth_bytes"])
    return format_size(p["bytes"]) if "bytes" in p else "?"


def _distance_or_complement(result: Result) -> Figure | None:
    hosts = rank_hosts(result.document)
    if result.benchmark == "comm.distance":
        peer = int(result.params["peer"])
        subject, ranks = f"rank {peer}", (0, peer)
    else:
        a, b = result.params["pair"]
        subject, ranks = f"pair {a}↔{b}", (a, b)
    if result.median is None or result.ci_lo is None or result.ci_hi is None:
        return None
    return Figure(
        subject,
        result.median,
        tuple(hosts.get(r, "?") for r in ranks),
        result,
        Estimate(result.median, result.ci_lo, result.ci_hi, tuple(result.samples)),
    )


def _hotspot_senders(result: Result) -> list[Figure]:
    """Each sender's median bandwidth at one k (samples are sender-major)."""
    derived = result.document.get("derived") or {}
    senders = derived.get("sender_ranks") or []
    if not senders or not result.samples:
        return []
    per = len(result.samples) // len(senders)
    hosts = rank_hosts(result.document)
    figures = []
    for i, rank in enumerate(senders):
        own = anomaly.estimate(result.samples[i * per : (i + 1) * per])
        hosts_of = (hosts.get(0, "?"), hosts.get(rank, "?"))
        figures.append(Figure(f"sender rank {rank}", own.value, hosts_of, result, own))
    return figures


def _groups(results: list[Result]) -> dict[tuple, list[Figure]]:
    groups: dict[tuple, list[Figure]] = {}
    for r in results:
        if not r.samples:
            continue
        if r.benchmark in ("comm.distance", "comm.complement"):
            figure = _distance_or_complement(r)
            figures = [figure] if figure else []
            key = (r.benchmark, r.metric, _message_sizes(r, r.metric), r.params.get("np"))
        elif r.benchmark == "comm.hotspot" and r.metric == "bandwidth_per_sender_Bps":
            figures = _hotspot_senders(r)
            key = (r.benchmark, r.metric, _message_sizes(r, r.metric), f"k={r.params['senders']}")
        else:
            continue
        for figure in figures:
            link = link_of(r.document) if r.benchmark != "comm.hotspot" else _sender_link(figure)
            groups.setdefault((*key, link), []).append(figure)
    return groups


def _sender_link(figure: Figure) -> str:
    a, b = figure.hosts
    return "intra-node" if a == b else "inter-node"


def _group_label(key: tuple) -> str:
    benchmark, metric, sizes, extra, link = key
    extra = f"np={extra}" if isinstance(extra, int) else str(extra)
    return f"{benchmark} {metric} at {sizes}, {extra}, {link}"


def find_anomalies(results: list[Result]) -> AnomalyReport:
    """Ranks (distance), pairs (complement) and senders (hotspot) that deviate by the rule of
    perfatlas.common.anomaly, confirmed by their re-measurement where the run holds one, and the hosts
    whose every figure deviates (their link)."""
    report = AnomalyReport()
    again = _groups([r for r in results if is_remeasurement(r.document)])
    for key, figures in _groups([r for r in results if not is_remeasurement(r.document)]).items():
        label = _group_label(key)
        if len(figures) < MIN_GROUP:
            report.too_small.append((label, figures))
            continue
        report.groups_checked += 1
        report.figures_checked += len(figures)
        verdicts = anomaly.judge([f.estimate for f in figures])
        if key in again:
            found = _confirmed(key, label, figures, verdicts, again[key], report)
        else:
            found = [_anomaly(key, label, figures[v.index], v) for v in verdicts if v.anomalous]
            if anomaly.unsettled(verdicts):
                report.to_remeasure.append(figures[0].result.id)
        report.anomalies += found
        worse = [f for f in figures if any(a.worse and a.subject == f.subject for a in found)]
        report.suspects += _suspect_hosts(key, label, figures, worse)
    return report


def _anomaly(key: tuple, label: str, figure: Figure, verdict: anomaly.Verdict) -> Anomaly:
    return Anomaly(
        key[0],
        key[1],
        figure.result.unit,
        label,
        figure.subject,
        verdict.value,
        verdict.median,
        verdict.relative,
        verdict.robust_z,
        (verdict.relative > 0) == higher_is_worse(key[1]),
        figure.hosts,
        figure.result.id,
        verdict.ci_lo,
        verdict.ci_hi,
        verdict.others_lo,
        verdict.others_hi,
        n=len(figure.estimate.samples),
    )


def _confirmed(
    key: tuple,
    label: str,
    figures: list[Figure],
    verdicts: list[anomaly.Verdict],
    again: list[Figure],
    report: AnomalyReport,
) -> list[Anomaly]:
    """The group with its re-measurement (figures matched by subject): the anomalies both
    measurements confirm; those the first measurement alone found go to report.withdrawn. A
    confirmed one is shown as the rule confirmed it (its first measurement against the others'
    better of two), a withdrawn one as the first measurement judged it; each with its
    re-measured value."""
    by_subject = {f.subject: f for f in again}
    both = [(f, by_subject[f.subject]) for f in figures if f.subject in by_subject]
    tripped = {figures[v.index].subject for v in verdicts if v.anomalous}
    found: list[Anomaly] = []
    if len(both) < MIN_GROUP or not verdicts:
        return found
    measured = [(first.estimate, second.estimate) for first, second in both]
    for index, (first, second) in enumerate(both):
        pair = anomaly.each(measured, index, higher_is_worse(key[1]))
        kept = anomaly.confirmed(pair)
        if not kept and first.subject not in tripped:
            continue
        shown = pair[0] if kept else verdicts[figures.index(first)]
        judged = replace(
            _anomaly(key, label, first, shown),
            confirmed=kept,
            remeasured_value=second.value,
            remeasured_result_id=second.result.id,
        )
        (found if kept else report.withdrawn).append(judged)
    return found


def _suspect_hosts(
    key: tuple, label: str, figures: list[Figure], worse: list[Figure]
) -> list[SuspectHost]:
    if not worse:
        return []
    suspects = []
    for host in sorted({h for f in worse for h in f.hosts}):
        involving = [f for f in figures if host in f.hosts]
        if len(involving) < len(figures) and all(f in worse for f in involving):
            suspects.append(SuspectHost(key[0], key[1], label, host, len(involving)))
    return suspects


# -- growth of collectives ------------------------------------------------------------------------
@dataclass(frozen=True)
class Fit:
    intercept: float
    slope: float
    rss: float  # residual sum of squares

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.intercept + self.slope * x


@dataclass(frozen=True)
class Growth:
    verdict: str  # logarithmic | linear | flat | inconclusive
    reason: str
    log_fit: Fit | None  # latency = a + b log2 P
    linear_fit: Fit | None  # latency = a + b P


def _fit(x: np.ndarray, y: np.ndarray) -> Fit:
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (intercept + slope * x)
    return Fit(float(intercept), float(slope), float(residual @ residual))


def growth(processes: Sequence[int], latency: Sequence[float]) -> Growth:
    """Logarithmic, linear, flat or inconclusive (criterion in the module docstring)."""
    p = np.asarray(processes, dtype=float)
    y = np.asarray(latency, dtype=float)
    if len(set(p.tolist())) < 3:
        return Growth("inconclusive", "fewer than 3 process counts", None, None)
    log_fit, linear_fit = _fit(np.log2(p), y), _fit(p, y)
    if y.max() <= FLAT_RATIO * y.min():
        return Growth(
            "flat",
            f"the largest latency is within {FLAT_RATIO - 1:.0%} of the smallest",
            log_fit,
            linear_fit,
        )
    if p.max() / p.min() < GROWTH_MIN_SPAN:
        return Growth(
            "inconclusive",
            f"P spans only {p.min():.0f}..{p.max():.0f}; log2 P and P cannot be told apart "
            f"over less than a factor of {GROWTH_MIN_SPAN:.0f}",
            log_fit,
            linear_fit,
        )
    if log_fit.rss <= GROWTH_WIN_FACTOR * linear_fit.rss:
        verdict = "logarithmic"
    elif linear_fit.rss <= GROWTH_WIN_FACTOR * log_fit.rss:
        verdict = "linear"
    else:
        return Growth(
            "inconclusive",
            "the log2 P and the P fits leave similar residuals",
            log_fit,
            linear_fit,
        )
    return Growth(
        verdict,
        f"residual sum of squares: vs log2 P {log_fit.rss:.3g}, vs P {linear_fit.rss:.3g}",
        log_fit,
        linear_fit,
    )


# -- ranks sharing cores --------------------------------------------------------------------------
