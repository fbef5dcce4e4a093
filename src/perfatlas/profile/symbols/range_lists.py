"""Range lists, the code ranges of a DIE with DW_AT_ranges (DWARF 5 §2.17.3). Before DWARF 5, in
.debug_ranges: pairs of addresses relative to the unit's base address, a pair whose first is the
largest address selecting a new base, (0, 0) at the end. From DWARF 5, in .debug_rnglists: the
DW_RLE_* entries of §7.25, whose addresses may be indexes into .debug_addr."""

from __future__ import annotations

from collections.abc import Callable

from perfatlas.profile.symbols.dwarf_codes import (
    DW_RLE_BASE_ADDRESS,
    DW_RLE_BASE_ADDRESSX,
    DW_RLE_END_OF_LIST,
    DW_RLE_OFFSET_PAIR,
    DW_RLE_START_END,
    DW_RLE_START_LENGTH,
    DW_RLE_STARTX_ENDX,
    DW_RLE_STARTX_LENGTH,
)
from perfatlas.profile.symbols.leb128 import uleb128

Ranges = list[tuple[int, int]]


def debug_ranges(data: bytes, at: int, base: int, address_size: int, order: str) -> Ranges:
    """The list at offset `at` of .debug_ranges (DWARF 2 to 4)."""
    largest = (1 << (8 * address_size)) - 1
    found = []
    while at + 2 * address_size <= len(data):
        start = int.from_bytes(data[at : at + address_size], order)
        end = int.from_bytes(data[at + address_size : at + 2 * address_size], order)
        at += 2 * address_size
        if start == 0 and end == 0:
            break
        if start == largest:
            base = end
        else:
            found.append((base + start, base + end))
    return found


def debug_rnglists(
    data: bytes, at: int, base: int, address_size: int, order: str, address: Callable[[int], int]
) -> Ranges:
    """The list at offset `at` of .debug_rnglists (DWARF 5); `address` reads .debug_addr."""
    found = []

    def read_address() -> int:
        nonlocal at
        at += address_size
        return int.from_bytes(data[at - address_size : at], order)

    while at < len(data):
        kind, at = data[at], at + 1
        if kind == DW_RLE_END_OF_LIST:
            break
        if kind == DW_RLE_BASE_ADDRESSX:
            index, at = uleb128(data, at)
            base = address(index)
        elif kind == DW_RLE_BASE_ADDRESS:
            base = read_address()
        elif kind in (DW_RLE_STARTX_ENDX, DW_RLE_STARTX_LENGTH):
            index, at = uleb128(data, at)
            other, at = uleb128(data, at)
            start = address(index)
            found.append((start, address(other) if kind == DW_RLE_STARTX_ENDX else start + other))
        elif kind == DW_RLE_OFFSET_PAIR:
            start, at = uleb128(data, at)
            end, at = uleb128(data, at)
            found.append((base + start, base + end))
        elif kind == DW_RLE_START_END:
            start = read_address()
            found.append((start, read_address()))
        elif kind == DW_RLE_START_LENGTH:
            start = read_address()
            length, at = uleb128(data, at)
            found.append((start, start + length))
        else:
            raise ValueError(f"range list entry kind {kind}")
    return found
