"""What a report section is made of: figures, tables, notes. The template renders each kind."""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup


@dataclass(frozen=True)
class Figure:
    svg: str  # an inline <svg> element
    caption: str
    kind: str = "figure"


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[str | Markup]]
    caption: str = ""
    numeric: tuple[int, ...] = ()  # column indices aligned right (figures)
    kind: str = "table"


@dataclass(frozen=True)
class Facts:
    """Label -> value pairs, shown as a two-column list."""

    items: list[tuple[str, str | Markup]]
    caption: str = ""
    kind: str = "facts"


@dataclass(frozen=True)
class Note:
    text: str | Markup
    tone: str = "info"  # info | warning | bad
    kind: str = "note"


@dataclass(frozen=True)
class Html:
    """Markup the section built itself (e.g. the topology drawing)."""

    markup: Markup
    caption: str = ""
    kind: str = "html"


@dataclass(frozen=True)
class Details:
    """Collapsible group of blocks (long tables), open or closed by default."""

    summary: str
    blocks: list[Block] = field(default_factory=list)
    open: bool = False
    kind: str = "details"


Block = Figure | Table | Facts | Note | Html | Details
