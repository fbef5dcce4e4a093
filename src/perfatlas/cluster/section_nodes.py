"""Nodes of a multi-host run: per-node figures, per-node slowdown, nodes that differ from the
others (perfatlas.cluster.analysis_nodes states the rule), and MPI results by link."""

from __future__ import annotations

from perfatlas.anomaly import ROBUST_Z_LIMIT, remeasure_label
from perfatlas.cluster.analysis_nodes import (
    MIN_NODES,
    MIN_RELATIVE,
    NodeGroup,
    link_rows,
    node_groups,
)
from perfatlas.report.blocks import Block, Note, Table
from perfatlas.report.common import number
from perfatlas.report.data import RunData
from perfatlas.report.registry import section


def value_text(group: NodeGroup, value: float) -> str:
    if group.unit == "fraction":
        return f"{number(100 * value)} %"
    if group.unit == "byte/s":
        return f"{number(value / 1e9)} GB/s"
    return f"{number(value)} {group.unit}"


def verdict(group: NodeGroup, host: str) -> str:
    if not group.judged:
        return f"not judged (fewer than {MIN_NODES} nodes)"
    again = group.remeasured.get(host)
    remeasured = remeasure_label(
        group.confirmed(host), value_text(group, again.value) if again else ""
    )
    if host in group.withdrawn:
        return f"like the others (re-measured {remeasured})"
    if host not in group.flagged:
        return "like the others"
    relative = group.flagged[host]
    worse = (relative > 0) == group.higher_is_worse
    said = f"{'SLOWER' if worse else 'faster'}: {100 * relative:+.0f} % vs the other nodes"
    return f"{said} (re-measured {remeasured})" if again else f"{said} ({remeasured})"


def group_rows(group: NodeGroup) -> list[list[str]]:
    rows = []
    for i, figure in enumerate(group.figures):
        s, lo, hi = group.slowdown(figure)
        rows.append(
            [
                f"{group.benchmark} {group.label}" if i == 0 else "",
                group.metric if i == 0 else "",
                figure.host,
                f"{value_text(group, figure.value)} [{value_text(group, figure.ci_lo)}, "
                f"{value_text(group, figure.ci_hi)}]",
                f"{s:.3f} [{lo:.3f}, {hi:.3f}]",
                verdict(group, figure.host),
            ]
        )
    return rows


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


@section("nodes", "Nodes: per-node results and asymmetry", order=55)
def nodes_section(data: RunData) -> list[Block]:
    groups = node_groups(data.results)
    links = link_rows(data.results)
    if not groups and not links:
        return []
    blocks: list[Block] = []
    if groups:
        hosts = sorted({f.host for g in groups for f in g.figures})
        flagged = [(g, h) for g in groups for h in g.flagged]
        judged = [g for g in groups if g.judged]
        if flagged:
            text = "; ".join(f"{h} in {g.benchmark} {g.label} ({g.metric})" for g, h in flagged)
            blocks.append(Note(f"Nodes that differ from the others: {text}.", "bad"))
        elif judged:
            blocks.append(Note(f"No asymmetry between nodes in {len(judged)} group(s) of figures."))
        blocks.append(
            Table(
                ["measurement", "metric", "node", "figure [95 % CI]", "slowdown [CI]", "verdict"],
                [row for g in groups for row in group_rows(g)],
                caption=f"Node-level results of {len(hosts)} node(s) ({', '.join(hosts)}), each "
                "measured on its node at the same time as on the others; the node is read back "
                "on the node (Slurm's node name, else its hostname). " + RULE,
                numeric=(3, 4),
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
