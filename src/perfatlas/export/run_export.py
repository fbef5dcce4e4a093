"""Export a run with every raw sample: JSON (run + results + findings, perfatlas.findings/1) or
CSV (one row per result). Warnings travel as records (kind, metric, message, fix): a JSON list, in
CSV a JSON list in one column. The findings' own CSV is perfatlas.findings.render."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

from perfatlas.common.warning import records_to_json
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

CSV_COLUMNS = (
    "run_id",
    "benchmark",
    "params",
    "metric",
    "unit",
    "n",
    "median",
    "ci_lo",
    "ci_hi",
    "min",
    "max",
    "not_measurable",
    "warnings",
    "samples",
)


def export(data: RunData, fmt: str) -> str:
    """The run `data` holds, every launch as stored, as JSON or CSV."""
    results = data.launches
    if fmt == "json":
        from perfatlas.findings.compute import run_findings

        document = {
            "run": data.run,
            "results": [_result_json(r) for r in results],
            "findings": run_findings(data).document(),
        }
        return json.dumps(document, indent=1) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for r in results:
        row = _result_json(r)
        row["params"] = json.dumps(r.params, sort_keys=True)
        row["warnings"] = json.dumps(row["warnings"])
        row["samples"] = " ".join(repr(s) for s in r.samples)
        writer.writerow([row[c] if row[c] is not None else "" for c in CSV_COLUMNS])
    return buffer.getvalue()


def _result_json(result: Result) -> dict:
    row = dataclasses.asdict(result)
    row["warnings"] = records_to_json(result.warnings)
    return row
