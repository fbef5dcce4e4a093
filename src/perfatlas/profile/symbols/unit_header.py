"""The header of each unit in .debug_info (DWARF 5 §7.5.1; versions 2 to 4 before it): where the
unit and its first DIE are, its version, address and offset sizes, its abbreviation table."""

from __future__ import annotations

from collections.abc import Iterator
from struct import unpack_from
from typing import NamedTuple

from perfatlas.profile.symbols.dwarf_codes import DW_UT_COMPILE


class UnitHeader(NamedTuple):
    offset: int  # of the header in .debug_info
    end: int  # the offset after the unit
    first_die: int
    version: int
    address_size: int
    offset_size: int  # 4 in 32-bit DWARF, 8 in 64-bit
    abbrev_offset: int  # in .debug_abbrev


def unit_headers(data: bytes, little_endian: bool) -> Iterator[UnitHeader]:
    """The compile units of .debug_info (DWARF 5's type, partial and skeleton units left out:
    they hold no code of their own); stops at a header cut short."""
    order = "<" if little_endian else ">"
    at = 0
    while at + 11 <= len(data):
        (length,) = unpack_from(order + "I", data, at)
        cursor, offset_size = at + 4, 4
        if length == 0xFFFFFFFF:
            (length,) = unpack_from(order + "Q", data, cursor)
            cursor, offset_size = cursor + 8, 8
        end = cursor + length
        offset_format = order + ("I" if offset_size == 4 else "Q")
        (version,) = unpack_from(order + "H", data, cursor)
        cursor += 2
        if version == 5:
            unit_type, address_size = data[cursor], data[cursor + 1]
            (abbrev_offset,) = unpack_from(offset_format, data, cursor + 2)
            cursor += 2 + offset_size
            compile_unit = unit_type == DW_UT_COMPILE
        else:
            (abbrev_offset,) = unpack_from(offset_format, data, cursor)
            address_size = data[cursor + offset_size]
            cursor += offset_size + 1
            compile_unit = 2 <= version <= 4
        if compile_unit and end <= len(data):
            yield UnitHeader(at, end, cursor, version, address_size, offset_size, abbrev_offset)
        at = end
