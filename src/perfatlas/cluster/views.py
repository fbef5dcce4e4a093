"""The terminal's view of a multi-host run: per-node figures and the nodes that differ."""

from __future__ import annotations

from perfatlas.cluster.analysis_nodes import node_groups
from perfatlas.cluster.findings_nodes import RULE, figure_text, group_name, verdict
from perfatlas.store import Result
from perfatlas.views import console, titled_table


def print_nodes(results: list[Result]) -> None:
    """A table of node-level results across nodes, when the run has them; flagged nodes in red."""
    groups = [g for g in node_groups(results) if len(g.figures) > 1]
    if not groups:
        return
    table = titled_table(
        "Nodes: figure per node [95 % CI], slowdown vs the median of nodes",
        "measurement",
        "node",
        "figure",
        "slowdown",
        "verdict",
        right=(2, 3),
    )
    for group in groups:
        for i, figure in enumerate(group.figures):
            s, lo, hi = group.slowdown(figure)
            said = verdict(group, figure.host)
            low, high = (figure_text(group.unit, v) for v in (figure.ci_lo, figure.ci_hi))
            table.add_row(
                group_name(group) if i == 0 else "",
                figure.host,
                f"{figure_text(group.unit, figure.value)} [dim][{low}, {high}][/]",
                f"{s:.3f} [dim][{lo:.3f}, {hi:.3f}][/]",
                f"[red]{said}[/]" if figure.host in group.flagged else said,
            )
    console.print(table)
    flagged = sum(len(g.flagged) for g in groups)
    judged = sum(1 for g in groups if g.judged)
    if flagged:
        console.print(f"[red]{flagged} node figure(s) differ from the other nodes[/]; {RULE}")
    elif judged:
        console.print(f"no asymmetry between nodes ({judged} group(s) judged)")
