"""Findings of the node asymmetry analysis: each node's slowdown against the median of the nodes,
with the verdict of perfatlas.cluster.analysis_nodes (the rule is stated there). The report's
nodes section and the terminal's node table say a node's verdict as written here."""

from __future__ import annotations

from perfatlas.cluster.analysis_nodes import MIN_NODES, MIN_RELATIVE, NodeGroup, node_groups
from perfatlas.common.anomaly import ROBUST_Z_LIMIT, remeasure_label
from perfatlas.common.units import format_number
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import Finding, from_results, interval_of
from perfatlas.run.remeasure_anomalies import judges_figures
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

RULE = (
    f"A node is flagged when its figure is far from the others' (modified z-score of its "
    f"logarithm > {ROBUST_Z_LIMIT:g}), its 95 % interval does not overlap that of the median of "
    f"the other nodes' samples pooled (noise: the envelope of their intervals), and its figure "
    f"differs from the median of theirs by more than "
    f"{100 * MIN_RELATIVE:g} % (noise: its time factor 1 + slowdown); a group where a node is "
    "flagged, or too spread to tell, is measured again, and a node stays flagged only when both "
    "measurements pass against the other nodes, each at the better of its two; groups of fewer "
    f"than {MIN_NODES} nodes are not judged. Slowdown: "
    "the node's figure over the median of the nodes (latency, noise), or the median over the "
    "node's figure (bandwidth): 1 is the typical node (LANL Lightning report: per-node "
    'slowdown and "no asymmetry between nodes").'
)


def figure_text(unit: str, value: float) -> str:
    """A node's figure in its unit: noise slowdown (a fraction) in %, byte/s in GB/s."""
    if unit == "fraction":
        return f"{format_number(100 * value)} %"
    if unit == "byte/s":
        return f"{format_number(value / 1e9)} GB/s"
    return f"{format_number(value)} {unit}"


def verdict(group: NodeGroup, host: str) -> str:
    if not group.judged:
        return f"not judged (fewer than {MIN_NODES} nodes)"
    again = group.remeasured.get(host)
    remeasured = remeasure_label(
        group.confirmed(host), figure_text(group.unit, again.value) if again else ""
    )
    if host in group.withdrawn:
        return f"like the others (re-measured {remeasured})"
    if host not in group.flagged:
        return "like the others"
    relative = group.flagged[host]
    worse = (relative > 0) == group.higher_is_worse
    said = f"{'SLOWER' if worse else 'faster'}: {100 * relative:+.0f} % vs the other nodes"
    return f"{said} (re-measured {remeasured})" if again else f"{said} ({remeasured})"


def group_name(group: NodeGroup) -> str:
    """What the nodes of a group measured: benchmark, shared parameters, metric."""
    return f"{group.benchmark} {group.label} {group.metric}"


@finding_source("node asymmetry", 55, {"cluster.node_slowdown": Better.LOWER})
def node_findings(data: RunData) -> list[Finding]:
    found = []
    for group in node_groups(data.results):
        if len(group.figures) < 2:
            continue
        for figure in group.figures:
            s, lo, hi = group.slowdown(figure)
            relative = group.flagged.get(figure.host)
            worse = relative is not None and (relative > 0) == group.higher_is_worse
            remeasured = group.remeasured.get(figure.host)
            found.append(
                Finding(
                    kind="cluster.node_slowdown",
                    subject=f"host {figure.host}: {group_name(group)}",
                    value=s,
                    unit="x the median node",
                    method=RULE,
                    sources=from_results(figure.result, remeasured and remeasured.result),
                    verdict=verdict(group, figure.host),
                    severity="warning" if worse else "notice" if relative is not None else "info",
                    details={
                        "host": figure.host,
                        "group": group_name(group),
                        "figure": figure.value,
                        "figure_interval": [figure.ci_lo, figure.ci_hi],
                        "unit": group.unit,
                        "nodes": len(group.figures),
                        "judged": group.judged,
                        "confirmed": group.confirmed(figure.host),
                        "remeasured": remeasured.value if remeasured else None,
                    },
                    **interval_of(lo, hi),
                )
            )
    return found


# -- read back: the node findings as the report's nodes section and the terminal's node table both
# show them ---------------------------------------------------------------------------------------
NODE_HEADER = ("measurement", "node", "figure [95 % CI]", "slowdown [CI]", "verdict")


def host_of(f: Finding) -> str:
    return str(f.details.get("host", f.subject))


def _figure(f: Finding) -> str:
    """The node's own figure with its 95 % interval, in the group's unit."""
    unit, value = f.details.get("unit", ""), f.details.get("figure")
    if value is None:
        return "-"
    bounds = f.details.get("figure_interval") or [None, None]
    if None in bounds:
        return figure_text(unit, value)
    low, high = (figure_text(unit, bound) for bound in bounds)
    return f"{figure_text(unit, value)} [{low}, {high}]"


def _slowdown(f: Finding) -> str:
    if f.value is None:
        return "-"
    if f.interval is None:
        return f"{f.value:.3f}"
    return f"{f.value:.3f} [{f.interval.low:.3f}, {f.interval.high:.3f}]"


def node_rows(found: list[Finding]) -> list[list[str]]:
    """A row (NODE_HEADER) per cluster.node_slowdown finding; a group's name on its first row."""
    rows, previous = [], None
    for f in found:
        group = f.details.get("group", "")
        rows.append(
            [
                group if group != previous else "",
                host_of(f),
                _figure(f),
                _slowdown(f),
                f.verdict or "",
            ]
        )
        previous = group
    return rows


def flagged(f: Finding) -> bool:
    """A node finding above severity info is a flagged node, faster or slower."""
    return f.severity != "info"


def nodes_sentence(found: list[Finding]) -> tuple[str, bool] | None:
    """Which nodes differ, and whether any does; None where no group was judged."""
    if differ := [f for f in found if flagged(f)]:
        text = "; ".join(f"{host_of(f)} in {f.details.get('group', '?')}" for f in differ)
        return f"Nodes that differ from the others: {text}.", True
    judged = {f.details.get("group") for f in found if f.details.get("judged")}
    if judged:
        return f"No asymmetry between nodes in {len(judged)} group(s) of figures.", False
    return None


@judges_figures
def unsettled_nodes(results: list[Result]) -> set[int]:
    """A figure of each node group too spread to tell, or with a node that deviates: the group's
    measurement is launched again (node_groups)."""
    return {g.figures[0].result.id for g in node_groups(results) if g.unsettled}
