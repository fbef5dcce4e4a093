"""A finding: one conclusion of an analysis, as data (schema perfatlas.findings/1).

A finding states a figure (`value` in `unit`) about a `subject` with its interval and the
interval's coverage (95 %; an order-statistic interval of a median its exact coverage for its
count of samples, under 95 % for the full range of fewer than 6), or no interval and the reason
why (`interval_reason`), the `method` that produced it and the ids of the stored results (or
scenarios) it was computed from. `verdict` is the analysis's own word where it
judges (an anomaly, a growth shape, a model's agreement), `severity` how much a reader should
care: info (a figure of the machine), notice (worth a look), warning (something is wrong).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfatlas.common.stats import CONFIDENCE, Ratio, median_ci_ranks
from perfatlas.store.result import Result

SEVERITIES = ("info", "notice", "warning")


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float = CONFIDENCE  # its coverage
    samples: int | None = None  # of an order-statistic interval: its coverage is exact for these


@dataclass(frozen=True)
class Sources:
    """Where a finding comes from: stored result ids and scenario ids of its run."""

    results: tuple[int, ...] = ()
    scenarios: tuple[int, ...] = ()


@dataclass(frozen=True)
class Finding:
    kind: str  # dotted: domain.conclusion, e.g. noise.slowdown, comm.suspect_host
    subject: str  # what it is about: a PU, a level, a rank, a host, a kernel pair
    value: float | None
    unit: str
    method: str  # how it was computed, in a sentence with its reference
    sources: Sources
    interval: Interval | None = None
    interval_reason: str | None = None  # why there is no interval (required without one)
    verdict: str | None = None
    severity: str = "info"
    details: dict[str, Any] = field(default_factory=dict)  # other figures, finite or None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} is not one of {SEVERITIES}")
        if self.interval is None and not self.interval_reason:
            raise ValueError(f"finding {self.kind} of {self.subject}: no interval and no reason")
        if self.value is not None and not math.isfinite(self.value):
            raise ValueError(f"finding {self.kind} of {self.subject}: value {self.value}")

    def as_dict(self) -> dict[str, Any]:
        """The finding as the schema writes it (findings.schema.json)."""
        return {
            "kind": self.kind,
            "subject": self.subject,
            "value": None if self.value is None else float(self.value),
            "unit": self.unit,
            "interval": None
            if self.interval is None
            else {
                "low": float(self.interval.low),
                "high": float(self.interval.high),
                "confidence": float(self.interval.confidence),
                "samples": self.interval.samples,
            },
            "interval_reason": self.interval_reason,
            "method": self.method,
            "sources": {
                "results": list(self.sources.results),
                "scenarios": list(self.sources.scenarios),
            },
            "verdict": self.verdict,
            "severity": self.severity,
            "details": {k: finite(v) for k, v in self.details.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        interval = d.get("interval")
        return cls(
            kind=d["kind"],
            subject=d["subject"],
            value=d.get("value"),
            unit=d.get("unit", ""),
            method=d.get("method", ""),
            sources=Sources(
                tuple(d.get("sources", {}).get("results", ())),
                tuple(d.get("sources", {}).get("scenarios", ())),
            ),
            interval=None
            if interval is None
            else Interval(
                interval["low"],
                interval["high"],
                interval.get("confidence", CONFIDENCE),
                interval.get("samples"),
            ),
            interval_reason=d.get("interval_reason") or (None if interval else "not stored"),
            verdict=d.get("verdict"),
            severity=d.get("severity", "info"),
            details=dict(d.get("details") or {}),
        )


def of_kind(found: Iterable[Finding], kind: str) -> list[Finding]:
    """The findings of one kind, in their order (the views that state a conclusion read theirs
    this way)."""
    return [f for f in found if f.kind == kind]


def finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite float becomes None; numpy scalars become Python
    numbers; lists and dicts recurse."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    return value


# -- the usual shapes of a figure ------------------------------------------------------------------
MEDIAN_CI = (
    "median of the samples with its order-statistic interval (Le Boudec, Thm. 2.1): 95 %, or "
    "its exact coverage with fewer than 6 samples"
)
RATIO_CI = "ratio of medians with a seeded percentile-bootstrap 95 % interval (stats.ratio)"


def median_of(result: Result, scale: float = 1.0) -> tuple[float | None, dict[str, Any]]:
    """A stored result's median and its interval (as Finding keyword arguments), scaled."""
    if result.median is None:
        return None, {"interval_reason": "the result has no samples"}
    if result.ci_lo is None or result.ci_hi is None:
        return result.median * scale, {"interval_reason": "the result has no interval"}
    return result.median * scale, median_interval(
        result.ci_lo * scale, result.ci_hi * scale, result.n
    )


def median_interval(low: float, high: float, samples: int) -> dict[str, Any]:
    """Finding keyword arguments for the order-statistic interval [low, high] of the median of
    `samples` samples, with its exact coverage (stats.median_ci_ranks: 95 % or a little more, and
    under 95 % for the full range of fewer than 6); one sample has none."""
    if samples < 2:
        return {"interval_reason": "one sample" if samples else "no samples"}
    return interval_of(low, high, median_ci_ranks(samples)[2], samples)


def ratio_of(r: Ratio, scale: float = 1.0, offset: float = 0.0) -> tuple[float, dict[str, Any]]:
    """A ratio and its bootstrap interval, as (value, Finding keyword arguments)."""
    return (r.median + offset) * scale, interval_of(
        (r.ci_lo + offset) * scale, (r.ci_hi + offset) * scale
    )


def interval_of(
    low: float | None,
    high: float | None,
    confidence: float = CONFIDENCE,
    samples: int | None = None,
) -> dict[str, Any]:
    """Finding keyword arguments for [low, high] (its coverage `confidence`, exact for `samples`
    where given); a non-finite bound is said instead."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return {"interval_reason": "an interval bound is not finite"}
    return {"interval": Interval(min(low, high), max(low, high), confidence, samples)}


def from_results(*results: Result | None) -> Sources:
    return Sources(results=tuple(sorted({r.id for r in results if r is not None})))
