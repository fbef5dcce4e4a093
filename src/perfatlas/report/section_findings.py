"""Findings: every conclusion of the run's analyses as one table, from the same Finding objects
that `perfatlas show` prints and `export` writes (perfatlas.findings)."""

from __future__ import annotations

from perfatlas.findings.compute import run_findings
from perfatlas.findings.render import coverage_text, value_text
from perfatlas.report.blocks import Block, Details, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

OPEN_LIMIT = 40  # more findings than this: the table starts folded


@section("findings", "Findings", order=12)
def findings_section(data: RunData) -> list[Block]:
    found = run_findings(data)
    if not found.findings:
        return []
    attention = [f for f in found.findings if f.severity != "info"]
    origin = (
        f"stored with the run by {found.computed_by}"
        if found.origin == "stored"
        else f"recomputed from the stored results by {found.computed_by} (the run has none stored)"
    )
    rows = [
        [f.kind, f.subject, value_text(f), coverage_text(f), f.verdict or "", f.severity]
        for f in found.findings
    ]
    table = Table(
        ["kind", "subject", "value [interval]", "coverage", "verdict", "severity"],
        rows,
        caption="Coverage: each interval's (95 %; an order-statistic interval of a median its "
        "exact coverage, below 95 % for the full range of fewer than 6 samples), or why there is "
        "none. Schema "
        "perfatlas.findings/1: 'perfatlas show RUN --json' and 'perfatlas export RUN --format "
        "findings-csv' give the same findings with their methods and sources.",
    )
    blocks: list[Block] = [
        Note(
            f"{len(found.findings)} finding(s), {len(attention)} worth a look (notice or "
            f"warning); {origin}.",
            "warning" if any(f.severity == "warning" for f in attention) else "info",
        )
    ]
    if attention:
        blocks.append(
            Table(
                ["kind", "subject", "value [interval]", "coverage", "verdict"],
                [
                    [f.kind, f.subject, value_text(f), coverage_text(f), f.verdict or ""]
                    for f in attention
                ],
                caption="Findings of severity notice or warning.",
            )
        )
    blocks.append(Details(f"All {len(rows)} findings", [table], open=len(rows) <= OPEN_LIMIT))
    return blocks
