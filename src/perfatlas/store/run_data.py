"""The result model: one run as read from the store, once per command (RunData.load), and handed
to everything that reads it: findings (perfatlas.findings), the terminal's tables
(perfatlas.terminal), the report (perfatlas.report), the per-node views (perfatlas.cluster) and
perfatlas check (perfatlas.regression). Nothing above the store reads a run's results again."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from perfatlas.common.anomaly import is_remeasurement
from perfatlas.common.warning import Kind
from perfatlas.machine.caches import Cache, hwloc_caches
from perfatlas.store.database import Store
from perfatlas.store.result import Result, pool_launches


@dataclass(frozen=True)
class Comparison:
    run_a: dict[str, Any]
    results_a: list[Result]
    expect: float | None  # the expected ratio B / A (--expect), drawn for reference


@dataclass
class RunData:
    run: dict[str, Any]
    launches: list[Result]  # as stored: a sweep stores each launch of a point on its own
    profiles: list[dict[str, Any]] = field(default_factory=list)  # Store.profiles
    scenarios: list[dict[str, Any]] = field(default_factory=list)  # Store.scenarios
    comparison: Comparison | None = None  # perfatlas compare: this run (B) against another (A)
    stored_findings: dict[str, Any] | None = None  # Store.findings (perfatlas.findings)
    # what analyses computed once for the whole report (perfatlas.findings.compute.run_findings)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    source: str = ""  # where it was read: the store's path (the report names it)

    @classmethod
    def load(cls, store: Store, run_id: int) -> RunData:
        """Everything stored of one run, read once: a command hands this one object to the
        findings, the terminal tables, the report and the checks."""
        return cls(
            store.run(run_id),
            store.results(run_id),
            store.profiles(run_id),
            scenarios=store.scenarios(run_id),
            stored_findings=store.findings(run_id),
            source=str(store.path),
        )

    @cached_property
    def results(self) -> list[Result]:
        """One result per measurement: the launches of a point pooled."""
        return pool_launches(self.launches)

    @cached_property
    def caches(self) -> list[Cache]:
        return hwloc_caches(self.run["topology"])

    def measured(self, benchmark: str, metric: str | None = None) -> list[Result]:
        """Results with samples (not the unmeasurable ones) of one benchmark (and metric);
        re-measurements (perfatlas.run.remeasure_anomalies) are left to the analyses that asked for them."""
        return [
            r
            for r in self.results
            if r.benchmark == benchmark
            and r.samples
            and (metric is None or r.metric == metric)
            and not is_remeasurement(r.document)
        ]

    @cached_property
    def unmeasurable(self) -> list[Result]:
        """One result per measurement that could not be made here."""
        seen, found = set(), []
        for r in self.results:
            key = (r.benchmark, json.dumps(r.params, sort_keys=True), r.not_measurable)
            if r.not_measurable and key not in seen:
                seen.add(key)
                found.append(r)
        return found

    def document_block(self, name: str) -> dict | None:
        """The first result document's `name` block (timer, build): the same for a whole run."""
        for r in self.results:
            if r.document.get(name):
                return r.document[name]
        return None


def warning_tally(results: list[Result]) -> Counter[Kind]:
    """How many warnings of each kind the results carry (most frequent first with most_common)."""
    return Counter(w.kind for r in results for w in r.warnings)
