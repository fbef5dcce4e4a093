"""Findings of the node asymmetry analysis: each node's slowdown against the median of the nodes,
with the verdict of perfatlas.cluster.analysis_nodes (the rule is stated there)."""

from __future__ import annotations

from perfatlas.cluster.analysis_nodes import node_groups
from perfatlas.cluster.section_nodes import RULE, verdict
from perfatlas.findings.model import Finding, from_results, interval_of
from perfatlas.findings.registry import finding_source
from perfatlas.report.data import RunData


@finding_source("node asymmetry", 55)
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
                    subject=f"host {figure.host}: {group.benchmark} {group.label} {group.metric}",
                    value=s,
                    unit="x the median node",
                    method=RULE,
                    sources=from_results(figure.result, remeasured and remeasured.result),
                    verdict=verdict(group, figure.host),
                    severity="warning" if worse else "notice" if relative is not None else "info",
                    details={
                        "figure": figure.value,
                        "unit": group.unit,
                        "nodes": len(group.figures),
                        "confirmed": group.confirmed(figure.host),
                        "remeasured": remeasured.value if remeasured else None,
                    },
                    **interval_of(lo, hi),
                )
            )
    return found
