"""Report sections, registered by name (ReFrame style): adding one is one module section_*.py
in the package of its domain (report/ for the run-wide ones).

A section is a function RunData -> list of blocks; it returns an empty list (or None) when the run
holds nothing for it, and the report then leaves it out.

The report reads from the machine outward, and `order` places a section in its band:
10-29 the run (machine and context, a comparison, the topology); 30-39 memory and the cores
(latency, bandwidth, contention, the NUMA matrix, loaded latency; core-to-core latency, peak
compute, then the roofline that joins them); 40-49 noise; 50-59 communication, then the nodes of a
multi-host run; 60-69 the application proxies; 70-79 experiments (sweeps, interference
scenarios); 80-89 the profile of a program; 90-99 what could not be measured, then the warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perfatlas.common.discovery import import_modules

if TYPE_CHECKING:
    from perfatlas.report.blocks import Block
    from perfatlas.store.run_data import RunData

Builder = Callable[["RunData"], "list[Block] | None"]


@dataclass(frozen=True)
class Section:
    name: str  # also the HTML id
    title: str
    order: int  # position in the report
    build: Builder


_SECTIONS: dict[str, Section] = {}


def section(name: str, title: str, order: int) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        if name in _SECTIONS:
            raise ValueError(f"report section '{name}' is registered twice")
        _SECTIONS[name] = Section(name, title, order, build)
        return build

    return register


def all_sections() -> list[Section]:
    """Every section of the section_* modules of perfatlas's packages, in report order."""
    import_modules("section")
    return sorted(_SECTIONS.values(), key=lambda s: s.order)
