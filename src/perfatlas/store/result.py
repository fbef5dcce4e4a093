"""A stored result (Result: one metric of one measurement, as every analysis reads it) and the
pooling of a measurement's separate launches into one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from perfatlas.common.anomaly import is_remeasurement
from perfatlas.common.stats import summarize
from perfatlas.common.warning import WarningRecord


@dataclass(frozen=True)
class Result:
    """One metric of one measurement, as the report and comparisons read it."""

    id: int
    run_id: int
    benchmark: str
    params: dict[str, Any]
    metric: str
    unit: str
    samples: list[float]
    n: int
    median: float | None
    ci_lo: float | None
    ci_hi: float | None
    min: float | None
    max: float | None
    not_measurable: str | None
    warnings: list[WarningRecord]
    document: dict[str, Any]


def pool_launches(results: list[Result]) -> list[Result]:
    """Results of separate launches of the same measurement (a sweep's repetitions) as one
    result each: samples concatenated in launch order, statistics recomputed, the first
    launch's document and warnings kept (with the others' added). A re-measurement
    (perfatlas.run.remeasure_anomalies) is kept apart from what it re-measures."""
    groups: dict[tuple, list[Result]] = {}
    for r in results:
        key = (r.benchmark, json.dumps(r.params, sort_keys=True), r.metric)
        groups.setdefault((*key, is_remeasurement(r.document)), []).append(r)
    pooled = []
    for launches in groups.values():
        first = launches[0]
        if len(launches) == 1 or not first.samples:
            pooled.append(first)
            continue
        samples = [x for r in launches for x in r.samples]
        summary = summarize(samples)
        warnings = list(dict.fromkeys(w for r in launches for w in r.warnings))
        pooled.append(
            Result(
                **{
                    **first.__dict__,
                    "samples": samples,
                    "n": len(samples),
                    "median": summary.median,
                    "ci_lo": summary.ci_lo,
                    "ci_hi": summary.ci_hi,
                    "min": summary.min,
                    "max": summary.max,
                    "warnings": warnings,
                }
            )
        )
    return pooled
