"""Finding sources, registered like the summary tables: a function RunData -> list[Finding] in a
module findings_*.py of a domain package, decorated with @finding_source (perfatlas.discovery
finds the modules). Each source adapts what its domain's analysis returns; none decides anything
an analysis does not, so the findings say what the report and the terminal say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perfatlas.discovery import import_modules

if TYPE_CHECKING:
    from perfatlas.findings.model import Finding
    from perfatlas.report.data import RunData

Source = Callable[["RunData"], "list[Finding]"]


@dataclass(frozen=True)
class FindingSource:
    name: str
    order: int  # position of its findings in a run's list (the report's bands: memory first)
    build: Source


_SOURCES: dict[str, FindingSource] = {}


def finding_source(name: str, order: int) -> Callable[[Source], Source]:
    def register(build: Source) -> Source:
        if name in _SOURCES:
            raise ValueError(f"finding source '{name}' is registered twice")
        _SOURCES[name] = FindingSource(name, order, build)
        return build

    return register


def all_sources() -> list[FindingSource]:
    """Every source of the findings_* modules of perfatlas's packages, in order."""
    import_modules("findings")
    return sorted(_SOURCES.values(), key=lambda s: (s.order, s.name))
