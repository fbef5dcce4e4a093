"""The results of a run grouped into points (one parameter set of a benchmark: its metrics and its
document), and phase times stacked per point with their intervals.

A proxy's document carries one sample per repetition of its whole pipeline for every phase
(app.spsolve: reorder, symbolic, numeric, solve; app.madbench: dSdC, invD, W, dLdC), so sample i
of every phase belongs to the same repetition (a sweep's launches are pooled in launch order,
which keeps that). The stacked total of repetition i is the sum of its phases; its median and 95 %
interval (stats.summarize) are the whisker of a stacked bar. The median of the totals is not the
sum of the phases' medians, and the report says which it draws.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfatlas.common.stats import Summary, summarize
from perfatlas.store.result import Result


@dataclass(frozen=True)
class Point:
    """One measured parameter set: its results by metric and the document they came from."""

    params: dict
    metrics: dict[str, Result]

    @property
    def document(self) -> dict:
        return next(iter(self.metrics.values())).document

    @property
    def derived(self) -> dict:
        return self.document.get("derived") or {}


def points(results: list[Result], benchmark: str) -> list[Point]:
    """The measured results of one benchmark grouped by parameter set, in order of appearance."""
    groups: dict[str, dict[str, Result]] = {}
    params: dict[str, dict] = {}
    for r in results:
        if r.benchmark != benchmark or not r.samples:
            continue
        key = json.dumps(r.params, sort_keys=True)
        params.setdefault(key, r.params)
        groups.setdefault(key, {})[r.metric] = r
    return [Point(params[key], metrics) for key, metrics in groups.items()]


@dataclass(frozen=True)
class Phase:
    name: str
    result: Result  # the phase's samples, median and 95 % CI (seconds)


@dataclass(frozen=True)
class PhaseStack:
    phases: list[Phase]  # in stacking order
    total: Summary | None  # of the per-repetition sums of the phases (seconds); None when the
    # phases' samples are not one per repetition (their counts differ)


def phase_stack(point: Point, phases: Sequence[tuple[str, str]]) -> PhaseStack | None:
    """The phases (name, metric) of a point that it measured, with the summary of the
    per-repetition totals; None when it measured none of them."""
    found = [
        Phase(name, point.metrics[metric]) for name, metric in phases if metric in point.metrics
    ]
    if not found:
        return None
    if len({len(p.result.samples) for p in found}) != 1:
        return PhaseStack(found, None)
    totals = np.sum([np.asarray(p.result.samples, dtype=float) for p in found], axis=0)
    return PhaseStack(found, summarize(totals))
