"""Terminal summary tables, registered with their benchmarks: adding one is a function in a module
summary_*.py of a domain package (mem/, noise/, comm/, ...) decorated with @summary_table (the
report's sections work alike, report/report_sections.py; perfatlas.common.discovery finds both). `perfatlas run`
prints, in order, every table whose benchmarks the run measured and that has something to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from perfatlas.common.discovery import import_modules

if TYPE_CHECKING:
    from perfatlas.store.run_data import RunData

Builder = Callable[["RunData"], Any]  # a rich renderable (a Table, a line of text), or None


@dataclass(frozen=True)
class SummaryTable:
    name: str
    order: int  # position in the summary
    benchmarks: tuple[str, ...]  # the run must hold a result of one of these
    build: Builder


_TABLES: dict[str, SummaryTable] = {}


def summary_table(
    name: str, order: int, benchmarks: tuple[str, ...]
) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        if name in _TABLES:
            raise ValueError(f"summary table '{name}' is registered twice")
        _TABLES[name] = SummaryTable(name, order, benchmarks, build)
        return build

    return register


def all_tables() -> list[SummaryTable]:
    """Every table of the summary_* modules of perfatlas's packages, in summary order."""
    import_modules("summary")
    return sorted(_TABLES.values(), key=lambda t: t.order)
