"""What the communication results mean: anomalous ranks, pairs and links; how collectives grow
with the process count; ranks that share a core.

Anomalies (the mis-routed cable of the LANL Lightning report): within a group of comparable
figures (same benchmark, metric, message size, np, and link class: intra-node figures are never
compared with inter-node ones), a figure x is flagged when, with m and MAD the median and the
median absolute deviation of the logarithms of the OTHER figures of its group,

    |ln x - m| > 3.5 * 1.4826 * MAD    and    x differs from their median by more than 25 %:

the modified z-score of Iglewicz and Hoaglin (1993) with their cut-off 3.5 (1.4826 MAD estimates
the standard deviation of normal data), on logarithms because latency and bandwidth vary by
factors, computed leave-one-out so that in a small group the outlier does not inflate the spread
it is judged against, plus a floor so that a uniform set with tiny spread flags nothing. Groups of fewer than three figures are not judged (of two, which is
the odd one?). A host is suspect
when every figure involving it is flagged as worse while the group also holds figures without it:
the link of that host, not one rank, is then the likely cause.

Growth of collectives (comm.allreduce, comm.barrier): latency is fitted by least squares against
log2 P and against P; growth is called logarithmic (or linear) when that fit leaves at most half
the residual sum of squares of the other. It is "flat" when the largest median is within 25 % of
the smallest, and "inconclusive" with fewer than three process counts or when P spans less than a
factor of 4 (over 2..4 the two shapes differ by less than the noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perfatlas.store import Result
from perfatlas.units import format_cpu_list, format_size, parse_cpu_list
from perfatlas.warning import Kind, WarningRecord

MAD_TO_SIGMA = 1.4826
ROBUST_Z_LIMIT = 3.5
MIN_RELATIVE_DEVIATION = 0.25
MIN_GROUP = 3
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
    """The values that deviate from the others by the rule of this module's docstring.

    Each value is compared with the median and MAD of the other values (leave one out), so that
    in a small group the outlier does not inflate the spread it is measured against; the robust
    z-score is taken on logarithms, since latency and bandwidth vary by factors.
    """
    x = np.asarray(values, dtype=float)
    if len(x) < MIN_GROUP or np.any(x <= 0):
        return []
    logs = np.log(x)
    found = []
    for i, v in enumerate(x):
        others = np.delete(logs, i)
        center = float(np.median(others))
        scale = MAD_TO_SIGMA * float(np.median(np.abs(others - center)))
        deviation = float(logs[i]) - center
        if scale > 0:
            z = deviation / scale
        else:
            z = math.copysign(math.inf, deviation) if deviation else 0.0
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
    too_small: list[str] = field(default_factory=list)  # groups of fewer than 3 figures


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
    if result.median is None:
        return None
    return Figure(subject, result.median, tuple(hosts.get(r, "?") for r in ranks), result)


def _hotspot_senders(result: Result) -> list[Figure]:
    """Each sender's median bandwidth at one k (samples are sender-major)."""
    derived = result.document.get("derived") or {}
    senders = derived.get("sender_ranks") or []
    if not senders or not result.samples:
        return []
    per = len(result.samples) // len(senders)
    hosts = rank_hosts(result.document)
    return [
        Figure(
            f"sender rank {rank}",
            float(np.median(result.samples[i * per : (i + 1) * per])),
            (hosts.get(0, "?"), hosts.get(rank, "?")),
            result,
        )
        for i, rank in enumerate(senders)
    ]


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
    """Ranks (distance), pairs (complement) and senders (hotspot) that deviate, and the hosts
    whose every figure deviates (their link)."""
    report = AnomalyReport()
    for key, figures in _groups(results).items():
        label = _group_label(key)
        if len(figures) < MIN_GROUP:
            report.too_small.append(f"{label}: {len(figures)} figure(s)")
            continue
        report.groups_checked += 1
        report.figures_checked += len(figures)
        metric = key[1]
        flagged = []
        for d in robust_outliers([f.value for f in figures]):
            figure = figures[d.index]
            worse = (d.relative > 0) == higher_is_worse(metric)
            flagged.append((figure, worse))
            report.anomalies.append(
                Anomaly(
                    key[0],
                    metric,
                    figure.result.unit,
                    label,
                    figure.subject,
                    d.value,
                    d.median,
                    d.relative,
                    d.robust_z,
                    worse,
                    figure.hosts,
                    figure.result.id,
                )
            )
        report.suspects += _suspect_hosts(key, label, figures, [f for f, w in flagged if w])
    return report


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
def rank_sharing_warnings(placement: dict) -> list[WarningRecord]:
    """Ranks of one machine (same kernel boot id) packed onto fewer PUs than there are ranks.

    Ranks bound to one core each but the same core (Open MPI binding every host's first rank to
    core 0 on test hosts that share a machine) get the fix --bind-to none; several ranks on a
    larger shared set mean an oversubscribed host.
    """
    by_set: dict[tuple[str, str], list[dict]] = {}
    for rank in placement.get("ranks") or []:
        machine = rank.get("boot_id") or rank.get("host") or "?"
        by_set.setdefault((machine, str(rank.get("cpus_allowed", ""))), []).append(rank)
    found = []
    for (_, cpus), ranks in by_set.items():
        try:
            pus = parse_cpu_list(cpus) if cpus else []
        except Exception:
            continue
        if not pus or len(ranks) <= len(pus):
            continue
        numbers = format_cpu_list(sorted(int(r["rank"]) for r in ranks))
        hosts = sorted({str(r.get("host")) for r in ranks})
        where = f"host {hosts[0]}" if len(hosts) == 1 else f"hosts {', '.join(hosts)}"
        if len(pus) == 1:
            found.append(
                WarningRecord(
                    Kind.RANKS_SHARE_CORE,
                    f"ranks share a core: ranks {numbers} ({where}) are all bound to cpu {cpus} "
                    "of one machine, so they take turns on it, which inflates latency many "
                    "times over",
                    "pass --mpirun-args '--bind-to none' (or give each host its own cpu set)",
                )
            )
        else:
            found.append(
                WarningRecord(
                    Kind.OVERSUBSCRIBED,
                    f"oversubscribed: {len(ranks)} ranks ({numbers}, {where}) share {len(pus)} "
                    f"PUs ({cpus}) of one machine, so the figures include time-sharing",
                    "use at most one rank per PU per machine for clean figures",
                )
            )
    return found
