"""Nodes of a multi-host run: per-node figures, per-node slowdown, nodes that differ from the
others, as the run's cluster.node_slowdown findings state them (perfatlas.cluster.findings_nodes;
perfatlas.cluster.analysis_nodes states the rule), and MPI results by link."""

from __future__ import annotations

from perfatlas.cluster.analysis_nodes import link_rows
from perfatlas.cluster.findings_nodes import NODE_HEADER, RULE, host_of, node_rows, nodes_sentence
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import Finding, of_kind
from perfatlas.report.blocks import Block, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


def _verdict_note(found: list[Finding]) -> Note | None:
    said = nodes_sentence(found)
    return None if said is None else Note(said[0], "bad" if said[1] else "info")


@section("nodes", "Nodes: per-node results and asymmetry", order=55)
def nodes_section(data: RunData) -> list[Block]:
    found = of_kind(run_findings(data).findings, "cluster.node_slowdown")
    links = link_rows(data.results)
    if not found and not links:
        return []
    blocks: list[Block] = []
    if found:
        hosts = sorted({host_of(f) for f in found})
        if note := _verdict_note(found):
            blocks.append(note)
        blocks.append(
            Table(
                list(NODE_HEADER),
                node_rows(found),
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
