"""The figures of a stored run that a regression check compares: each result's median with
its 95 % order-statistic interval (perfatlas.common.stats.summarize; a sweep's launches pooled, the
re-measurements of anomalies left out: perfatlas.run.remeasure_anomalies), and each finding with a value, an interval and a
direction (perfatlas.findings, docs/guide/findings.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from perfatlas.benchmarks.result_label import params_label
from perfatlas.common.anomaly import is_remeasurement
from perfatlas.findings.compute import run_findings
from perfatlas.findings.finding_sources import declared_kinds
from perfatlas.regression.direction import (
    UnknownKind,
    finding_higher_is_better,
    metric_higher_is_better,
)
from perfatlas.store.run_data import RunData

NO_DIRECTION = "no direction is worse"


@dataclass(frozen=True)
class Figure:
    key: tuple[str, str, str, str]  # (result|finding, benchmark|kind, params|subject, metric|unit)
    label: str  # what the verdict table shows
    metric: str  # what --metrics names: a result's metric or a finding's kind
    value: float
    ci_lo: float
    ci_hi: float
    unit: str
    higher_is_better: bool | None  # None: no direction is worse (perfatlas.regression.direction)
    samples: tuple[float, ...] = ()  # a result's raw samples (a finding has none)
    results: tuple[int, ...] = ()  # the stored results it comes from (what --remeasure runs)
    why_no_direction: str = NO_DIRECTION  # the verdict's note where it has no direction


def run_figures(data: RunData) -> list[Figure]:
    """Every comparable figure of a run: its results, then its findings."""
    found = []
    for r in data.results:
        if not r.samples or r.median is None or is_remeasurement(r.document):
            continue
        params = json.dumps(r.params, sort_keys=True)
        found.append(
            Figure(
                ("result", r.benchmark, params, r.metric),
                f"{r.benchmark} {params_label(r)} {r.metric}",
                r.metric,
                float(r.median),
                float(r.ci_lo),
                float(r.ci_hi),
                r.unit,
                metric_higher_is_better(r.metric, r.unit),
                tuple(float(x) for x in r.samples),
                (r.id,),
            )
        )
    declared = declared_kinds()
    for f in run_findings(data).findings:
        try:
            higher, why = finding_higher_is_better(f.kind, declared), NO_DIRECTION
        except UnknownKind:  # stored by another version: said in the verdict table, not skipped
            higher, why = None, "a kind this perfatlas does not declare"
        if f.value is None or f.interval is None or (higher is None and why == NO_DIRECTION):
            continue  # a verdict, a count or a frequency: nothing is better or worse
        found.append(
            Figure(
                ("finding", f.kind, f.subject, f.unit),
                f"{f.kind} {f.subject}",
                f.kind,
                float(f.value),
                float(f.interval.low),
                float(f.interval.high),
                f.unit,
                higher,
                results=tuple(f.sources.results),
                why_no_direction=why,
            )
        )
    return found
