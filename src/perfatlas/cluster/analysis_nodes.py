"""Nodes that differ from the others: the per-node slowdown and the "no asymmetry between nodes"
check of the LANL Lightning report, on the node-level results of a multi-host run.

Node-level results carry their host among their parameters (perfatlas.cluster). Results that
differ only in host form a group (same benchmark, metric and other parameters); noise is compared
PU by PU, each node's figure being that PU's noise slowdown with its block-bootstrap interval
(perfatlas.noise.analysis_noise), every other benchmark by its median with the 95 % CI of the median.

For node i with figure m_i and interval [lo_i, hi_i], and M the median of the nodes' figures:
  - per-node slowdown s_i = m_i / M where a larger figure is worse (latency, noise) and M / m_i
    where a smaller one is (bandwidth, *_Bps): 1 is the typical node, 1.2 is 20 % slower.
  - node i is flagged by the one rule of perfatlas.common.anomaly: far from the other nodes (modified
    z-score of its logarithm, leave-one-out, > 3.5), its interval not overlapping the interval
    of the median of the other nodes' samples pooled (noise: the envelope of their intervals),
    and m_i more than 10 % from the median of the other nodes' figures. Noise is judged on the time factor 1 + slowdown (a node whose work
    takes more than 10 % longer), not on the slowdown fraction itself.
  - a group where the rule trips, or that is too spread to tell, is re-measured
    (perfatlas.run.remeasure_anomalies: the same measurement on every node once more); where the run holds
    the re-measurement, a node is flagged only when both measurements pass the rule against the
    other nodes, each at the better of its two (perfatlas.common.anomaly.each), and one the first
    measurement alone flagged is withdrawn.
Groups of fewer than 3 nodes are shown but not judged (of two, which one is odd?).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np

from perfatlas.common import anomaly
from perfatlas.common.anomaly import MIN_EFFECT, Estimate, is_remeasurement
from perfatlas.store.result import Result, pool_launches

MIN_NODES = anomaly.MIN_GROUP
MIN_RELATIVE = MIN_EFFECT


@dataclass(frozen=True)
class NodeFigure:
    host: str
    value: float
    ci_lo: float
    ci_hi: float
    result: Result


@dataclass(frozen=True)
class NodeGroup:
    benchmark: str
    metric: str
    unit: str
    label: str  # the parameters the nodes share
    higher_is_worse: bool
    figures: list[NodeFigure]  # sorted by host
    median: float  # of the nodes' figures
    flagged: dict[str, float]  # host -> relative deviation from the others' median
    # host -> its re-measured figure (the nodes the rule flagged, once re-measured)
    remeasured: dict[str, NodeFigure] = field(default_factory=dict)
    withdrawn: dict[str, float] = field(default_factory=dict)  # flagged, not confirmed
    unsettled: bool = False  # to be re-measured (perfatlas.common.anomaly.unsettled)

    def confirmed(self, host: str) -> bool | None:
        """Whether a flagged or withdrawn node's re-measurement confirmed it; None: not yet
        re-measured."""
        if host not in self.remeasured:
            return None
        return host in self.flagged

    @property
    def judged(self) -> bool:
        return len(self.figures) >= MIN_NODES

    def slowdown(self, figure: NodeFigure) -> tuple[float, float, float]:
        """s_i with the interval of the node's own figure, [s(lo), s(hi)] ordered."""
        values = [self._slowdown(v) for v in (figure.value, figure.ci_lo, figure.ci_hi)]
        return values[0], min(values[1:]), max(values[1:])

    def _slowdown(self, value: float) -> float:
        if self.median == 0 or value == 0:
            return 1.0 if value == self.median else float("inf")
        return value / self.median if self.higher_is_worse else self.median / value


def _estimates(figures: list[NodeFigure], noise: bool) -> list[Estimate]:
    """The nodes' figures as the rule judges them: noise on the time factor 1 + slowdown (no
    plain samples: its interval is a block bootstrap), the others with their samples."""
    if noise:
        return [Estimate(1 + f.value, 1 + f.ci_lo, 1 + f.ci_hi) for f in figures]
    return [Estimate(f.value, f.ci_lo, f.ci_hi, tuple(f.result.samples)) for f in figures]


def _verdicts(figures: list[NodeFigure], noise: bool) -> list[anomaly.Verdict]:
    """perfatlas.common.anomaly's verdicts; noise reported back as the slowdown's own relative
    deviation."""
    verdicts = anomaly.judge(_estimates(figures, noise))
    if not noise:
        return verdicts
    return [
        replace(v, relative=_relative(figures, v.index), value=figures[v.index].value)
        for v in verdicts
    ]


def _relative(figures: list[NodeFigure], index: int) -> float:
    center = float(np.median([f.value for i, f in enumerate(figures) if i != index]))
    return figures[index].value / center - 1.0 if center else float("inf")


def _confirm(
    figures: list[NodeFigure], again: list[NodeFigure], noise: bool, higher_is_worse: bool
) -> tuple[dict[str, float], dict[str, NodeFigure], dict[str, float], bool]:
    """Flagged nodes, their re-measured figures, the withdrawn ones (found by the first
    measurement only), and whether the group is to be re-measured (perfatlas.common.anomaly)."""
    verdicts = _verdicts(figures, noise)
    tripped = {figures[v.index].host for v in verdicts if v.anomalous}
    if not again:
        flagged = {h: _relative(figures, i) for i, h in enumerate(f.host for f in figures)}
        return (
            {h: r for h, r in flagged.items() if h in tripped},
            {},
            {},
            anomaly.unsettled(verdicts),
        )
    by_host = {f.host: f for f in again}
    both = [f for f in figures if f.host in by_host]
    if len(both) < MIN_NODES:
        return {}, {}, {}, False
    measured = list(
        zip(
            _estimates(both, noise), _estimates([by_host[f.host] for f in both], noise), strict=True
        )
    )
    flagged, withdrawn, remeasured = {}, {}, {}
    for index, figure in enumerate(both):
        kept = anomaly.confirmed(anomaly.each(measured, index, higher_is_worse))
        if kept or figure.host in tripped:
            relative = _relative(both, index)
            (flagged if kept else withdrawn)[figure.host] = relative
            remeasured[figure.host] = by_host[figure.host]
    return flagged, remeasured, withdrawn, False


def _figure(result: Result) -> NodeFigure | None:
    host = str(result.params["host"])
    if result.benchmark == "noise":
        from perfatlas.noise import analysis_noise as noise_analysis
        from perfatlas.noise.series_noise import series_of

        ratio = noise_analysis.slowdown_interval(series_of(result))
        return NodeFigure(host, ratio.median, ratio.ci_lo, ratio.ci_hi, result)
    if result.median is None or result.ci_lo is None or result.ci_hi is None:
        return None
    return NodeFigure(host, result.median, result.ci_lo, result.ci_hi, result)


def _label(result: Result) -> str:
    from perfatlas.benchmarks.result_label import params_label

    label = params_label(result)
    return " ".join(word for word in label.split() if not word.startswith("host="))


def node_groups(results: list[Result]) -> list[NodeGroup]:
    """The run's node-level results grouped across nodes, in the order they were stored (the
    launches of one node and point pooled first: a sweep stores each repetition apart); each
    group judged with its re-measurement, where the run holds one."""
    groups: dict[tuple, list[Result]] = {}
    again: dict[tuple, list[Result]] = {}
    for r in pool_launches(results):
        if "host" not in r.params or not r.samples:
            continue
        shared = {k: v for k, v in r.params.items() if k != "host"}
        key = (r.benchmark, r.metric, json.dumps(shared, sort_keys=True))
        (again if is_remeasurement(r.document) else groups).setdefault(key, []).append(r)
    found = []
    for key, members in groups.items():
        benchmark, metric, _ = key
        figures = _figures(members)
        if not figures:
            continue
        first = members[0]
        noise = benchmark == "noise"
        worse_higher = noise or not metric.endswith("_Bps")
        flagged, remeasured, withdrawn, unsettled = _confirm(
            figures, _figures(again.get(key, [])), noise, worse_higher
        )
        found.append(
            NodeGroup(
                benchmark,
                "noise slowdown" if noise else metric,
                "fraction" if noise else first.unit,
                _label(first),
                worse_higher,
                figures,
                float(np.median([f.value for f in figures])),
                flagged,
                remeasured,
                withdrawn,
                unsettled,
            )
        )
    return found


def _figures(members: list[Result]) -> list[NodeFigure]:
    return sorted((f for f in map(_figure, members) if f is not None), key=lambda f: f.host)


def link_rows(results: list[Result]) -> list[tuple[str, str, str, int]]:
    """MPI results by the link their ranks' placement shows (native/comm: pa_link_of): benchmark,
    hosts of the ranks involved, intra-node / inter-node / mixed, and how many results."""
    counts: dict[tuple[str, str, str], int] = {}
    for r in results:
        placement = r.document.get("placement") or {}
        if not placement.get("ranks") or not placement.get("link"):
            continue
        hosts = {int(rank["rank"]): str(rank.get("host", "?")) for rank in placement["ranks"]}
        involved = placement.get("involved") or sorted(hosts)
        names = ", ".join(dict.fromkeys(hosts.get(int(i), "?") for i in involved))
        key = (r.benchmark, names, str(placement["link"]))
        counts[key] = counts.get(key, 0) + 1
    return [(*key, count) for key, count in counts.items()]
