"""A quick pass over the DIEs of one compile unit: the tag, the code ranges and where the
children start of each, read from the .debug_info bytes with the unit's abbreviation table
(DWARF 5 §7.5.3), every other attribute skipped by its form's size (§7.5.6). Finding the function
that holds an address means looking at every function of a unit, and the unit of an address
without .debug_aranges means reading every unit's top DIE: pyelftools builds a full object for
each DIE, which takes most of a second for one large C++ unit. Subtrees are skipped by
DW_AT_sibling where the compiler wrote one, else walked through."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from elftools.common.exceptions import DWARFError

from perfatlas.profile.symbols import dwarf_codes as dw
from perfatlas.profile.symbols.dwarf_sections import DwarfSections
from perfatlas.profile.symbols.leb128 import sleb128, uleb128
from perfatlas.profile.symbols.range_lists import Ranges, debug_ranges, debug_rnglists
from perfatlas.profile.symbols.unit_header import UnitHeader

KEPT = {dw.DW_AT_LOW_PC, dw.DW_AT_HIGH_PC, dw.DW_AT_RANGES, dw.DW_AT_SIBLING}
KEPT |= {dw.DW_AT_ADDR_BASE, dw.DW_AT_RNGLISTS_BASE}
ADDRESS_VALUE_FORMS = {dw.DW_FORM_ADDR} | dw.ADDRESS_INDEX_FORMS


class Skimmed(NamedTuple):
    """One DIE: its offset in .debug_info, its tag, low_pc and high_pc (an address) when it has
    them, DW_AT_ranges (value, form) when it has it, and where its children start."""

    offset: int
    tag: int
    low: int | None
    high: int | None
    ranges: tuple[int, int] | None
    children_at: int | None  # None: it has none


class DieSkimmer:
    """The DIEs of one compile unit, skimmed; its top DIE read at once (the unit's base address
    and the bases of its .debug_addr and .debug_rnglists entries)."""

    def __init__(self, sections: DwarfSections, unit: UnitHeader):
        self.sections, self.unit, self.data = sections, unit, sections.debug_info
        self.abbreviations = sections.abbreviations(unit.abbrev_offset)
        self.end = min(unit.end, len(self.data))
        # Where the unit's entries start when its top DIE does not say (after the header of
        # .debug_addr, 8 bytes in 32-bit DWARF; of .debug_rnglists, 12).
        self.addr_base = 8 if unit.offset_size == 4 else 16
        self.rnglists_base = 12 if unit.offset_size == 4 else 20
        self.top = self.read(unit.first_die)
        self.base = self.top.low or 0  # the base address of the unit's range lists

    def children(self, first: int) -> Iterator[Skimmed]:
        """The DIEs from offset `first` (where a parent's children start) to the null entry
        that ends them."""
        at = first
        while at < self.end:
            code, after = uleb128(self.data, at)
            if code == 0:
                return
            skimmed, following = self._read(at, code, after)
            yield skimmed
            at = self._next(at, skimmed, following)

    def read(self, offset: int) -> Skimmed:
        """The DIE at `offset`."""
        code, after = uleb128(self.data, offset)
        return self._read(offset, code, after)[0]

    def ranges(self, skimmed: Skimmed) -> Ranges:
        """The DIE's code ranges: its range list, else [low_pc, high_pc)."""
        if skimmed.ranges is not None:
            return self._range_list(*skimmed.ranges)
        if skimmed.low is None or skimmed.high is None:
            return []
        return [(skimmed.low, skimmed.high)]

    def _range_list(self, value: int, form: int) -> Ranges:
        sections, unit = self.sections, self.unit
        if unit.version < 5:
            return debug_ranges(
                sections.debug_ranges, value, self.base, unit.address_size, sections.order
            )
        offset = value
        if form == dw.DW_FORM_RNGLISTX:  # an index into the unit's table of list offsets
            size = unit.offset_size
            at = self.rnglists_base + value * size
            offset = self.rnglists_base + int.from_bytes(
                sections.debug_rnglists[at : at + size], sections.order
            )
        return debug_rnglists(
            sections.debug_rnglists,
            offset,
            self.base,
            unit.address_size,
            sections.order,
            self._indexed_address,
        )

    def _indexed_address(self, index: int) -> int:
        """Entry `index` of the unit's addresses in .debug_addr."""
        size = self.unit.address_size
        at = self.addr_base + index * size
        data = self.sections.debug_addr
        if at + size > len(data):
            raise DWARFError(f"address index {index} past .debug_addr")
        return int.from_bytes(data[at : at + size], self.sections.order)

    def _end_of_children(self, at: int) -> int:
        """The offset after the null entry that ends the children starting at `at` (walked
        without recursion: a garbled unit may nest deeper than Python's stack)."""
        depth = 1
        while at < self.end:
            code, after = uleb128(self.data, at)
            if code == 0:
                depth -= 1
                if depth == 0:
                    return after
                at = after
                continue
            skimmed, following = self._read(at, code, after)
            if following is None:
                depth += 1
                following = skimmed.children_at
            at = self._checked(at, following)  # type: ignore[arg-type]
        return self.end

    def _next(self, at: int, skimmed: Skimmed, following: int | None) -> int:
        """Where the DIE after `skimmed` (at `at`) starts: its sibling, or past its children."""
        if following is None:
            following = self._end_of_children(skimmed.children_at)  # type: ignore[arg-type]
        return self._checked(at, following)

    @staticmethod
    def _checked(at: int, following: int) -> int:
        if following <= at:  # a garbled DW_AT_sibling that points back: it would loop
            raise DWARFError(f"DW_AT_sibling of the DIE at {at:#x} points back")
        return following

    def _read(self, offset: int, code: int, at: int) -> tuple[Skimmed, int | None]:
        """The DIE at `offset` whose attributes start at `at`, and where the next DIE starts:
        after it when it has no children, else at its DW_AT_sibling (None without one)."""
        abbreviation = self.abbreviations.get(code)
        if abbreviation is None:
            raise DWARFError(f"abbreviation code {code} at {offset:#x} is not in its table")
        low = high = ranges = sibling = None
        for name, form, implicit in abbreviation.attributes:
            while form == dw.DW_FORM_INDIRECT:
                form, at = uleb128(self.data, at)
            if name not in KEPT:
                at = self._skip(form, at)
                continue
            value, at = (implicit, at) if implicit is not None else self._value(form, at)
            if name == dw.DW_AT_LOW_PC:
                low = (value, form)
            elif name == dw.DW_AT_HIGH_PC:
                high = (value, form)
            elif name == dw.DW_AT_RANGES:
                ranges = (value, form)
            elif name == dw.DW_AT_SIBLING:
                unit_relative = form in dw.UNIT_REFERENCE_FORMS
                sibling = self.unit.offset + value if unit_relative else value
            elif offset == self.unit.first_die:  # the bases, in the top DIE
                if name == dw.DW_AT_ADDR_BASE:
                    self.addr_base = value
                else:
                    self.rnglists_base = value
        low_pc = self._address(*low) if low else None
        high_pc = None
        if high is not None and high[1] in ADDRESS_VALUE_FORMS:
            high_pc = self._address(*high)
        elif high is not None and low_pc is not None:  # a length, since DWARF 4
            high_pc = low_pc + high[0]
        children_at = at if abbreviation.has_children else None
        skimmed = Skimmed(offset, abbreviation.tag, low_pc, high_pc, ranges, children_at)
        return skimmed, (sibling if abbreviation.has_children else at)

    def _address(self, value: int, form: int) -> int:
        return self._indexed_address(value) if form in dw.ADDRESS_INDEX_FORMS else value

    def _value(self, form: int, at: int) -> tuple[int, int]:
        """A number-valued attribute (an address, a constant, a reference, an offset)."""
        if form == dw.DW_FORM_ADDR:
            size = self.unit.address_size
        elif form in dw.OFFSET_FORMS:
            size = self.unit.offset_size
        elif form == dw.DW_FORM_REF_ADDR:
            size = self.unit.address_size if self.unit.version == 2 else self.unit.offset_size
        elif form in dw.LEB_FORMS:
            return sleb128(self.data, at) if form == dw.DW_FORM_SDATA else uleb128(self.data, at)
        elif form in dw.FIXED_SIZES:
            size = dw.FIXED_SIZES[form]
        else:
            raise DWARFError(f"form {form:#x} for a code address or offset at {at:#x}")
        return int.from_bytes(self.data[at : at + size], self.sections.order), at + size

    def _skip(self, form: int, at: int) -> int:
        """The offset after an attribute of `form` at `at`."""
        if form in dw.FIXED_SIZES:
            return at + dw.FIXED_SIZES[form]
        if form in dw.LEB_FORMS:
            return uleb128(self.data, at)[1]
        if form == dw.DW_FORM_STRING:
            end = self.data.find(b"\0", at)
            if end < 0:
                raise DWARFError(f"unterminated string at {at:#x}")
            return end + 1
        if form in dw.BLOCK_LENGTH_SIZES:
            size = dw.BLOCK_LENGTH_SIZES[form]
            return at + size + int.from_bytes(self.data[at : at + size], self.sections.order)
        if form in dw.ULEB_BLOCK_FORMS:
            length, at = uleb128(self.data, at)
            return at + length
        return self._value(form, at)[1]
