"""Not measurable here: every measurement this machine cannot make, and why (never a fake figure)."""

from __future__ import annotations

from perfatlas.benchmarks.result_label import params_label
from perfatlas.report.blocks import Block, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


@section("not-measurable", "Not measurable here", order=90)
def unmeasurable_section(data: RunData) -> list[Block]:
    if not data.unmeasurable:
        return []
    rows = [[r.benchmark, params_label(r), r.not_measurable] for r in data.unmeasurable]
    return [
        Table(
            ["benchmark", "parameters", "why"],
            rows,
            caption=f"{len(rows)} measurement(s) of this run cannot be made on this machine; "
            "they are stored with the reason instead of a figure.",
        )
    ]
