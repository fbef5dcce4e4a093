"""Nodes of a multi-host run: per-node figures, per-node slowdown, nodes that differ from the
others, as the run's cluster.node_slowdown findings state them (perfatlas.cluster.findings_nodes;
perfatlas.cluster.analysis_nodes states the rule), and MPI results by link."""

from __future__ import annotations

from perfatlas.cluster.analysis_nodes import link_rows
from perfatlas.cluster.findings_nodes import RULE, figure_text
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import Finding
from perfatlas.report.blocks import Block, Note, Table
from perfatlas.report.data import RunData
from perfatlas.report.registry import section


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


def _host(f: Finding) -> str:
    return str(f.details.get("host", f.subject))


def _node_rows(found: list[Finding]) -> list[list[str]]:
    """A row per node finding; a group's name on its first row only."""
    rows, previous = [], None
    for f in found:
        group = f.details.get("group", "")
        rows.append(
            [
                group if group != previous else "",
                _host(f),
                _figure(f),
                _slowdown(f),
                f.verdict or "",
            ]
        )
        previous = group
    return rows


def _verdict_note(found: list[Finding]) -> Note | None:
    """Which nodes differ (a node finding above severity info is flagged, faster or slower)."""
    flagged = [f for f in found if f.severity != "info"]
    if flagged:
        text = "; ".join(f"{_host(f)} in {f.details.get('group', '?')}" for f in flagged)
        return Note(f"Nodes that differ from the others: {text}.", "bad")
    judged = {f.details.get("group") for f in found if f.details.get("judged")}
    if judged:
        return Note(f"No asymmetry between nodes in {len(judged)} group(s) of figures.")
    return None


@section("nodes", "Nodes: per-node results and asymmetry", order=55)
def nodes_section(data: RunData) -> list[Block]:
    found = [f for f in run_findings(data).findings if f.kind == "cluster.node_slowdown"]
    links = link_rows(data.results)
    if not found and not links:
        return []
    blocks: list[Block] = []
    if found:
        hosts = sorted({_host(f) for f in found})
        if note := _verdict_note(found):
            blocks.append(note)
        blocks.append(
            Table(
                ["measurement", "node", "figure [95 % CI]", "slowdown [CI]", "verdict"],
                _node_rows(found),
                caption=f"Node-level results of {len(hosts)} node(s) ({', '.join(hosts)}), each "
                "measured on its node at the same time as on the others; the node is read back "
                "on the node (Slurm's node name, else its hostname); the slowdowns and verdicts "
                "are the run's cluster.node_slowdown findings. " + RULE,
                numeric=(2, 3),
            )
        )
    if links:
        blocks.append(
            Table(
                ["benchmark", "hosts of the ranks involved", "link", "results"],
                [[b, hosts, link, str(n)] for b, hosts, link, n in links],
                caption="MPI results by link: intra-node when every rank involved reported the "
                "same host, inter-node when none share one, from the placement the ranks report.",
                numeric=(3,),
            )
        )
    return blocks
