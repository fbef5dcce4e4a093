"""LEB128 numbers, the variable-length integers of DWARF (DWARF 5 §7.6): seven bits a byte, low
bits first, the high bit set on every byte but the last."""

from __future__ import annotations


def uleb128(data: bytes, at: int) -> tuple[int, int]:
    """The unsigned number at `at` and the offset after it; IndexError when the data ends."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def sleb128(data: bytes, at: int) -> tuple[int, int]:
    """The signed number at `at` (two's complement, sign in bit 6 of the last byte)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value - (1 << shift) if byte & 0x40 else value), at
