"""Warnings: every warning of every result, grouped by kind (perfatlas.common.warning), with the result it
belongs to and the fix it suggests."""

from __future__ import annotations

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.units import format_value
from perfatlas.report.blocks import Block, Details, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData, warning_tally

OPEN_LIMIT = 20  # more warnings than this: the full table starts folded, a tally shows first


@section("warnings", "Warnings", order=95)
def warnings_section(data: RunData) -> list[Block]:
    kinds = warning_tally(data.results)
    if not kinds:
        return []
    order = {kind: rank for rank, (kind, _) in enumerate(kinds.most_common())}
    found = [(w, r) for r in data.results for w in r.warnings]
    found.sort(key=lambda pair: order[pair[0].kind])  # stable: results keep their order
    rows = [
        [
            w.kind.value,
            r.benchmark,
            params_label(r),
            w.metric or r.metric,
            format_value(r.median, r.unit),
            w.message,
            w.fix,
        ]
        for w, r in found
    ]
    tally = ", ".join(f"{count} × {kind.value}" for kind, count in kinds.most_common())
    meanings = Table(
        ["kind", "warnings", "what it means"],
        [[kind.value, str(count), kind.meaning] for kind, count in kinds.most_common()],
        numeric=(1,),
    )
    table = Table(
        ["kind", "benchmark", "parameters", "metric", "median", "warning", "fix"],
        rows,
        numeric=(4,),
    )
    return [
        Note(
            f"{len(rows)} warning(s) on {sum(1 for r in data.results if r.warnings)} result(s): "
            f"{tally}. Each says what to change; figures carrying one are less trustworthy.",
            "warning",
        ),
        meanings,
        Details(f"All {len(rows)} warnings, by kind", [table], open=len(rows) <= OPEN_LIMIT),
    ]
