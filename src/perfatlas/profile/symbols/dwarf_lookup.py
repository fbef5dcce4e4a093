"""Which compile unit of a file's DWARF (versions 2 to 5) holds a code address: by
.debug_aranges (DWARF 5 §6.1.2) and, for the units that table leaves out (clang writes none by
default), by each unit's own DW_AT_low_pc/DW_AT_high_pc or DW_AT_ranges, read from its header
(§7.5.1) and top DIE. Only the units that hold an address are decoded (dwarf_unit.py), each once.
"""

from __future__ import annotations

from collections.abc import Iterator
from struct import unpack_from

from elftools.dwarf.dwarfinfo import DWARFInfo

from perfatlas.profile.symbols import dwarf_codes as dw
from perfatlas.profile.symbols.address_intervals import Intervals
from perfatlas.profile.symbols.die_skim import DieSkimmer
from perfatlas.profile.symbols.dwarf_sections import DwarfSections
from perfatlas.profile.symbols.dwarf_unit import SourcePlace, Unit
from perfatlas.profile.symbols.unit_header import UnitHeader, unit_headers


def aranges(data: bytes, little_endian: bool) -> Iterator[tuple[int, int, int]]:
    """(start, end, unit offset) for each range of .debug_aranges: sets of a header (unit_length,
    version, debug_info_offset, address_size, segment_selector_size) and (address, length)
    tuples aligned to twice the address size, ended by (0, 0)."""
    order = "<" if little_endian else ">"
    at = 0
    while at + 4 <= len(data):
        (length,) = unpack_from(order + "I", data, at)
        offset_format, header = ("I", 4) if length != 0xFFFFFFFF else ("Q", 12)
        if header == 12:
            (length,) = unpack_from(order + "Q", data, at + 4)
        end = min(at + header + length, len(data))
        cursor = at + header + 2  # past the version
        (unit,) = unpack_from(order + offset_format, data, cursor)
        cursor += 4 if offset_format == "I" else 8
        address_size, segment_size = data[cursor], data[cursor + 1]
        tuple_size = 2 * address_size
        if address_size in (4, 8) and segment_size == 0:
            cursor = at + -(-(cursor + 2 - at) // tuple_size) * tuple_size
            pair = order + ("II" if address_size == 4 else "QQ")
            while cursor + tuple_size <= end:
                start, size = unpack_from(pair, data, cursor)
                cursor += tuple_size
                if start == 0 and size == 0:
                    break
                yield start, start + size, unit
        at = end if end > at else len(data)


class DwarfIndex:
    """The compile units of one file's DWARF by address; each unit decoded when first needed."""

    def __init__(self, info: DWARFInfo):
        self.sections = DwarfSections(info)
        self._headers: dict[int, UnitHeader] | None = None
        self._units: Intervals | None = None
        self._listed: set[int] = set()  # units .debug_aranges covers
        self._scanned = False
        self._decoded: dict[int, Unit] = {}

    def locate(self, address: int) -> SourcePlace | None:
        """None when no compile unit holds the address (code built without -g)."""
        offset = self._unit_at(address)
        if offset is None:
            return None
        if offset not in self._decoded:
            self._decoded[offset] = Unit(self.sections, self._headers[offset])  # type: ignore[index]
        return self._decoded[offset].locate(address)

    def _unit_at(self, address: int) -> int | None:
        sections = self.sections
        if self._units is None:
            headers = unit_headers(sections.debug_info, sections.little_endian)
            self._headers = {header.offset: header for header in headers}
            self._units = Intervals()
            for start, end, unit in aranges(sections.debug_aranges, sections.little_endian):
                if unit in self._headers:  # else a garbled table: the unit scan finds it
                    self._units.add(start, end, unit)
                    self._listed.add(unit)
        found = self._units.find(address)
        if found is None and not self._scanned:
            self._scanned = True
            self._scan_unlisted()
            found = self._units.find(address)
        return found  # type: ignore[return-value]

    def _scan_unlisted(self) -> None:
        """The ranges of the units .debug_aranges leaves out, from their top DIEs."""
        assert self._headers is not None and self._units is not None
        for offset, header in self._headers.items():
            if offset in self._listed:
                continue
            skimmer = DieSkimmer(self.sections, header)
            if skimmer.top.tag == dw.DW_TAG_COMPILE_UNIT:
                for start, end in skimmer.ranges(skimmer.top):
                    self._units.add(start, end, offset)
