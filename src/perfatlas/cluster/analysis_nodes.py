"""Nodes that differ from the others: the per-node slowdown and the "no asymmetry between nodes"
check of the LANL Lightning report, on the node-level results of a multi-host run.

Node-level results carry their host among their parameters (perfatlas.cluster). Results that
differ only in host form a group (same benchmark, metric and other parameters); noise is compared
PU by PU, each node's figure being that PU's noise slowdown with its block-bootstrap interval
(perfatlas.noise.analysis), every other benchmark by its median with the 95 % CI of the median.

For node i with figure m_i and interval [lo_i, hi_i], and M the median of the nodes' figures:
  - per-node slowdown s_i = m_i / M where a larger figure is worse (latency, noise) and M / m_i
    where a smaller one is (bandwidth, *_Bps): 1 is the typical node, 1.2 is 20 % slower.
  - node i is flagged when both
      (1) its interval lies entirely outside the envelope of the other nodes' intervals,
          [min lo_j, max hi_j] over j != i: it differs from every other node by more than the
          spread of its own samples and of theirs, and of the spread between them; and
      (2) m_i differs from the median of the other nodes' figures by more than 5 %, so that
          nodes with very tight intervals are not called asymmetric for a fraction of a percent.
Groups of fewer than 3 nodes are shown but not judged (of two, which one is odd?).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from perfatlas.store import Result, pool_launches

MIN_NODES = 3
MIN_RELATIVE = 0.05


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


def flag_nodes(figures: list[NodeFigure]) -> dict[str, float]:
    """The rule of the module docstring: host -> m_i / median of the others - 1."""
    if len(figures) < MIN_NODES:
        return {}
    flagged = {}
    for i, figure in enumerate(figures):
        others = figures[:i] + figures[i + 1 :]
        low = min(o.ci_lo for o in others)
        high = max(o.ci_hi for o in others)
        center = float(np.median([o.value for o in others]))
        outside = figure.ci_lo > high or figure.ci_hi < low
        relative = figure.value / center - 1.0 if center else float("inf")
        if outside and abs(relative) > MIN_RELATIVE:
            flagged[figure.host] = relative
    return flagged


def _figure(result: Result) -> NodeFigure | None:
    host = str(result.params["host"])
    if result.benchmark == "noise":
        from perfatlas.noise import analysis as noise_analysis
        from perfatlas.noise.series import series_of

        ratio = noise_analysis.slowdown_interval(series_of(result))
        return NodeFigure(host, ratio.median, ratio.ci_lo, ratio.ci_hi, result)
    if result.median is None or result.ci_lo is None or result.ci_hi is None:
        return None
    return NodeFigure(host, result.median, result.ci_lo, result.ci_hi, result)


def _label(result: Result) -> str:
    from perfatlas.report.data import params_label

    label = params_label(result)
    return " ".join(word for word in label.split() if not word.startswith("host="))


def node_groups(results: list[Result]) -> list[NodeGroup]:
    """The run's node-level results grouped across nodes, in the order they were stored (the
    launches of one node and point pooled first: a sweep stores each repetition apart)."""
    groups: dict[tuple, list[Result]] = {}
    for r in pool_launches(results):
        if "host" not in r.params or not r.samples:
            continue
        shared = {k: v for k, v in r.params.items() if k != "host"}
        groups.setdefault((r.benchmark, r.metric, json.dumps(shared, sort_keys=True)), []).append(r)
    found = []
    for (benchmark, metric, _), members in groups.items():
        figures = sorted((f for f in map(_figure, members) if f is not None), key=lambda f: f.host)
        if not figures:
            continue
        first = members[0]
        noise = benchmark == "noise"
        found.append(
            NodeGroup(
                benchmark,
                "noise slowdown" if noise else metric,
                "fraction" if noise else first.unit,
                _label(first),
                noise or not metric.endswith("_Bps"),
                figures,
                float(np.median([f.value for f in figures])),
                flag_nodes(figures),
            )
        )
    return found


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
