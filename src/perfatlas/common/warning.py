"""Warnings as typed records: a kind from one registry, the metric it concerns, the sentence shown
and the fix (hyperfine's typed warnings, each with its remedy; pyperf's typed metadata).

Records are made where a doubt is detected (stats, contract, benchmarks, sweep, scenario
accounting, profiles), stored as JSON objects, and read back by their fields: nothing parses a
warning's text, except `from_legacy_text`, which the store's migration runs once over warnings
stored as sentences by perfatlas before typed records.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Kind(StrEnum):
    """Every kind of warning, with what it means. The value is the short name tallies show."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> Kind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    UNSTABLE = (
        "unstable",
        "the coefficient of variation of the samples exceeds 5 %: the median is less trustworthy",
    )
    FEW_SAMPLES = (
        "few samples",
        "fewer than 6 samples: no order-statistic interval reaches 95 % coverage",
    )
    TOO_SHORT = (
        "too short",
        "a sample lasted under 10x the timer resolution: timer granularity is in the figure",
    )
    BINDING_NOT_APPLIED = (
        "binding not applied",
        "a thread asked for a CPU may run elsewhere (read back from Cpus_allowed_list)",
    )
    MEMORY_MISPLACED = (
        "memory not where asked",
        "pages landed on another NUMA node than the memory policy asked (read back)",
    )
    HUGE_PAGES_PARTIAL = (
        "huge pages partial",
        "only part of the buffer is on the huge pages asked for",
    )
    RANKS_SHARE_CORE = (
        "ranks share a core",
        "several MPI ranks are bound to one core of one machine and take turns on it",
    )
    OVERSUBSCRIBED = (
        "oversubscribed",
        "more MPI ranks than PUs on one machine: the figures include time-sharing",
    )
    COARSE_QUANTUM = (
        "coarse quantum",
        "a noise quantum or work unit too short for the timer: small detours are not resolved",
    )
    ACCOUNTING = (
        "accounting mismatch",
        "a scenario job's user + system + waiting time differs from wall time x threads",
    )
    PARTIAL_PROFILE = (
        "partial profile",
        "the profiled program did not finish: the profile is built from the rank files",
    )
    RECORD_TABLE_FULL = (
        "record table full",
        "the profiler's record table overflowed: some events are counted but not attributed",
    )
    REGION_ERRORS = (
        "region errors",
        "MPI_Pcontrol regions were not properly nested or closed",
    )
    LEGACY = (
        "legacy",
        "a warning stored as text by an older perfatlas whose kind could not be recovered",
    )


@dataclass(frozen=True)
class WarningRecord:
    """One warning: its kind, the metric it is about (None: the whole result), the sentence shown
    and what to do about it."""

    kind: Kind
    message: str
    fix: str = ""
    metric: str | None = None

    @property
    def text(self) -> str:
        """The sentence with its fix, as the terminal and the report show it."""
        return f"{self.message}; {self.fix}" if self.fix else self.message

    def for_metric(self, metric: str) -> WarningRecord:
        return WarningRecord(self.kind, self.message, self.fix, metric)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "metric": self.metric,
            "message": self.message,
            "fix": self.fix,
        }

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> WarningRecord:
        return cls(
            Kind(stored["kind"]), stored["message"], stored.get("fix", ""), stored.get("metric")
        )

    @classmethod
    def from_legacy_text(cls, text: str, metric: str | None = None) -> WarningRecord:
        """A warning stored as a sentence by an older perfatlas ('latency_ns: unstable: ...; fix'),
        its kind recovered from the words it starts with, else LEGACY. Run once, by the store's
        migration; `metric` is the stored row's metric."""
        if metric and text.startswith(f"{metric}: "):
            text = text[len(metric) + 2 :]
        kind = _legacy_kind(text)
        message, _, fix = text.partition("; ")
        per_metric = kind in (Kind.UNSTABLE, Kind.FEW_SAMPLES, Kind.TOO_SHORT)
        return cls(kind, message, fix, metric if per_metric else None)


# How the sentences of perfatlas before typed warnings began, per kind (the migration's only use).
_LEGACY_OPENINGS: tuple[tuple[str, str, Kind], ...] = (
    ("unstable: ", "", Kind.UNSTABLE),
    ("only ", " samples: the interval", Kind.FEW_SAMPLES),
    ("too short: ", "", Kind.TOO_SHORT),
    ("binding not applied: ", "", Kind.BINDING_NOT_APPLIED),
    ("memory not where asked: ", "", Kind.MEMORY_MISPLACED),
    ("only ", " of the buffer is on ", Kind.HUGE_PAGES_PARTIAL),
    ("ranks share a core: ", "", Kind.RANKS_SHARE_CORE),
    ("oversubscribed: ", "", Kind.OVERSUBSCRIBED),
    ("coarse: ", "", Kind.COARSE_QUANTUM),
    ("job ", ": user + system + waiting = ", Kind.ACCOUNTING),
)


def _legacy_kind(text: str) -> Kind:
    for opening, inside, kind in _LEGACY_OPENINGS:
        if text.startswith(opening) and inside in text:
            return kind
    return Kind.LEGACY


def records_from_json(stored: list[dict[str, Any]]) -> list[WarningRecord]:
    return [WarningRecord.from_dict(item) for item in stored]


def records_to_json(records: list[WarningRecord]) -> list[dict[str, Any]]:
    return [record.as_dict() for record in records]
