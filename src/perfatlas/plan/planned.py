"""What a run measures, independent of where it runs: one planned measurement (a benchmark, its
resolved parameters, a sweep's placement and annotation), and the pooling of repeated launches.

The runner and every executor (perfatlas.run.executor) share these; neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, series_points
from perfatlas.common.warning import WarningRecord
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store


@dataclass(frozen=True)
class Planned:
    """One measurement of a run: a benchmark, its resolved parameters, and for a sweep's launch
    the placement to apply and the annotation of its document (perfatlas.plan.sweep_grid.Slot)."""

    benchmark: Benchmark
    params: dict[str, Any]
    placement: Placement | None = None
    annotate: Callable[[dict], list[WarningRecord]] | None = None
    note: str = ""  # shown after the label in the progress line

    @property
    def points(self) -> int:
        """Results this launch yields per series point (a size series: one per size)."""
        return len(series_points(self.params, self.benchmark))

    @property
    def description(self) -> str:
        placed = f" {self.placement.label}" if self.placement else ""
        return f"{self.benchmark.name} {self.benchmark.label(self.params)}{placed}{self.note}"


def merge_repeats(documents_per_repeat: list[list[dict]]) -> list[dict]:
    """Pool the samples of N independent launches into one document per result (--repeat)."""
    merged = [
        dict(doc, samples={k: list(v) for k, v in (doc.get("samples") or {}).items()})
        for doc in documents_per_repeat[0]
    ]
    for repeat in documents_per_repeat[1:]:
        for target, doc in zip(merged, repeat, strict=True):
            for metric, values in (doc.get("samples") or {}).items():
                target["samples"][metric].extend(values)
            target["sample_seconds"] = target.get("sample_seconds", []) + doc.get(
                "sample_seconds", []
            )
    for target in merged:
        target.setdefault("derived", {})["launches"] = len(documents_per_repeat)
    return merged


@dataclass(frozen=True)
class Destination:
    """Where an executor stores what it measures: the open run of a store, and the machine the
    parameters were resolved against (perfatlas.run.runner.Runner.run opens and closes the run)."""

    store: Store
    run_id: int
    machine: Machine
