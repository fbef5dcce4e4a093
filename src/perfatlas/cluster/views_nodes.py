"""The terminal's view of a multi-host run: per-node figures and the nodes that differ, as the
run's cluster.node_slowdown findings state them (the report's nodes section shows the same rows
and sentence: perfatlas.cluster.findings_nodes)."""

from __future__ import annotations

from rich.markup import escape

from perfatlas.cluster.findings_nodes import NODE_HEADER, RULE, flagged, node_rows, nodes_sentence
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import of_kind
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import console, titled_table


def print_nodes(data: RunData) -> None:
    """A table of the run's node findings, when it has any; flagged nodes in red."""
    found = of_kind(run_findings(data).findings, "cluster.node_slowdown")
    if not found:
        return
    table = titled_table(
        "Nodes: figure per node [95 % CI], slowdown vs the median of nodes, as the run's "
        "findings state them",
        *NODE_HEADER,
        right=(2, 3),
    )
    for f, row in zip(found, node_rows(found)):
        cells = [escape(cell) for cell in row]
        table.add_row(*cells[:-1], f"[red]{cells[-1]}[/]" if flagged(f) else cells[-1])
    console.print(table)
    said = nodes_sentence(found)
    if said is None:
        return
    text, differ = said
    if differ:
        console.print(f"[red]{escape(text)}[/] {escape(RULE)}")
    else:
        console.print(escape(text))
