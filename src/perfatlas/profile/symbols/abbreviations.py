"""A unit's abbreviation table in .debug_abbrev (DWARF 5 §7.5.3): for each code, the tag, whether
the DIE has children, and its attributes' names and forms (with the value of an implicit_const).
Read here, and only as far as the codes asked for: finding the unit of an address without
.debug_aranges reads one DIE of every unit, and pyelftools parses whole tables, slowly (seconds
for a library's thousands of units)."""

from __future__ import annotations

from typing import NamedTuple

from perfatlas.profile.symbols.dwarf_codes import DW_FORM_IMPLICIT_CONST
from perfatlas.profile.symbols.leb128 import sleb128, uleb128


class Abbreviation(NamedTuple):
    tag: int
    has_children: bool
    attributes: tuple[tuple[int, int, int | None], ...]  # (name, form, implicit value)


class AbbreviationTable:
    """The table at an offset: entries until a zero code, each attribute list ended by (0, 0)."""

    def __init__(self, data: bytes, offset: int):
        self._data, self._at = data, offset
        self._entries: dict[int, Abbreviation] = {}
        self._complete = False

    def get(self, code: int) -> Abbreviation | None:
        """The entry of `code`, reading the table up to it; None when the table lacks it."""
        while code not in self._entries and not self._complete:
            self._read_entry()
        return self._entries.get(code)

    def _read_entry(self) -> None:
        data = self._data
        code, at = uleb128(data, self._at)
        if code == 0:
            self._complete = True
            return
        tag, at = uleb128(data, at)
        has_children, at = data[at] != 0, at + 1
        attributes = []
        while True:
            name, at = uleb128(data, at)
            form, at = uleb128(data, at)
            if name == 0 and form == 0:
                break
            implicit = None
            if form == DW_FORM_IMPLICIT_CONST:
                implicit, at = sleb128(data, at)
            attributes.append((name, form, implicit))
        self._entries[code] = Abbreviation(tag, has_children, tuple(attributes))
        self._at = at
