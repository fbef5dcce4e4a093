"""Export a run with every raw sample: JSON (run + results + findings, perfatlas.findings/1) or
CSV (one row per result). Warnings travel as records (kind, metric, message, fix): a JSON list, in
CSV a JSON list in one column. The findings' own CSV is perfatlas.findings.render."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

from perfatlas.store import Result, Store
from perfatlas.warning import records_to_json

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


def export(store: Store, run_id: int, fmt: str) -> str:
    results = store.results(run_id)
    if fmt == "json":
        from perfatlas.findings.compute import findings_of_run

        document = {
            "run": store.run(run_id),
            "results": [_result_json(r) for r in results],
            "findings": findings_of_run(store, run_id).document(),
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
