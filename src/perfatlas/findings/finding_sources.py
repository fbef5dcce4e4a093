"""Finding sources, registered like the summary tables: a function RunData -> list[Finding] in a
module findings_*.py of a domain package, decorated with @finding_source (perfatlas.common.discovery
finds the modules). Each source adapts what its domain's analysis returns; none decides anything
an analysis does not, so the findings say what the report and the terminal say.

A source declares every kind of finding it makes and which way each gets worse (Better): the
regression check (perfatlas.regression) reads the direction from here, and a finding of a kind
its source does not declare stops compute_findings, so no kind goes unjudged unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from perfatlas.common.discovery import import_modules

if TYPE_CHECKING:
    from perfatlas.findings.model import Finding
    from perfatlas.store.run_data import RunData

Source = Callable[["RunData"], "list[Finding]"]


class Better(Enum):
    """Which way a finding's value is better: what perfatlas check calls worse."""

    HIGHER = "higher"  # a bandwidth, a rate, an efficiency
    LOWER = "lower"  # a latency, a slowdown, a penalty
    NEITHER = "neither"  # a verdict, a count or a frequency: nothing is better or worse


@dataclass(frozen=True)
class FindingSource:
    name: str
    order: int  # position of its findings in a run's list (the report's bands: memory first)
    build: Source
    kinds: dict[str, Better]  # every kind it makes, and which way each is better


_SOURCES: dict[str, FindingSource] = {}


def finding_source(name: str, order: int, kinds: dict[str, Better]) -> Callable[[Source], Source]:
    def register(build: Source) -> Source:
        if name in _SOURCES:
            raise ValueError(f"finding source '{name}' is registered twice")
        for kind in kinds:
            for other in _SOURCES.values():
                if kind in other.kinds:
                    raise ValueError(f"finding kind '{kind}' is declared by '{other.name}' too")
        _SOURCES[name] = FindingSource(name, order, build, dict(kinds))
        return build

    return register


def all_sources() -> list[FindingSource]:
    """Every source of the findings_* modules of perfatlas's packages, in order."""
    import_modules("findings")
    return sorted(_SOURCES.values(), key=lambda s: (s.order, s.name))


def declared_kinds() -> dict[str, Better]:
    """Every kind a source declares, with its direction."""
    return {kind: better for source in all_sources() for kind, better in source.kinds.items()}
