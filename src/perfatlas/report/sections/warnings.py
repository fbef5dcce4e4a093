"""Warnings: every warning of every result, with the result it belongs to and the fix it suggests."""

from __future__ import annotations

from collections import Counter

from perfatlas.report.blocks import Block, Details, Note, Table
from perfatlas.report.data import RunData, params_label, warning_kind
from perfatlas.report.registry import section
from perfatlas.units import format_value

OPEN_LIMIT = 20  # more warnings than this: the full table starts folded, a tally shows first


@section("warnings", "Warnings", order=70)
def warnings_section(data: RunData) -> list[Block]:
    rows, kinds = [], Counter()
    for r in data.results:
        for warning in r.warnings:
            kinds[warning_kind(warning)] += 1
            rows.append(
                [r.benchmark, params_label(r), r.metric, format_value(r.median, r.unit), warning]
            )
    if not rows:
        return []
    tally = ", ".join(f"{count} × {kind}" for kind, count in kinds.most_common())
    table = Table(["benchmark", "parameters", "metric", "median", "warning"], rows, numeric=(3,))
    return [
        Note(
            f"{len(rows)} warning(s) on {sum(1 for r in data.results if r.warnings)} result(s): "
            f"{tally}. Each says what to change; figures carrying one are less trustworthy.",
            "warning",
        ),
        Details(f"All {len(rows)} warnings", [table], open=len(rows) <= OPEN_LIMIT),
    ]
