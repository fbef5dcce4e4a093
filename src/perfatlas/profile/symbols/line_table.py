"""A compile unit's line table (DWARF 5 §6.2; the same opcodes since DWARF 2): the rows its line
program produces, kept as address intervals [row address, next row address) within each sequence,
with the row's file index and line. The opcodes are decoded here, straight from the bytes, as the
header is (line_header.py): pyelftools' decoder takes seconds on the line program of one large C++
unit. Only the registers a location needs are kept: address (with op_index, for VLIW), file, line.
"""

from __future__ import annotations

from bisect import bisect_right

from perfatlas.profile.symbols.leb128 import sleb128, uleb128
from perfatlas.profile.symbols.line_header import LineHeader

# Standard opcodes (DWARF 5 §7.22, table 7.25) and extended ones (table 7.26).
DW_LNS_COPY, DW_LNS_ADVANCE_PC, DW_LNS_ADVANCE_LINE, DW_LNS_SET_FILE = 1, 2, 3, 4
DW_LNS_CONST_ADD_PC, DW_LNS_FIXED_ADVANCE_PC = 8, 9
DW_LNE_END_SEQUENCE, DW_LNE_SET_ADDRESS = 1, 2

Row = tuple[int, int, int]  # (address, file index, line)


def decode_rows(debug_line: bytes, header: LineHeader, little_endian: bool) -> list[list[Row]]:
    """The rows of each sequence of the program, in the order the program emits them."""
    data = debug_line[header.program_start : header.program_end]
    opcode_base, line_base, line_range = header.opcode_base, header.line_base, header.line_range
    min_length = header.minimum_instruction_length
    max_ops = header.maximum_operations_per_instruction
    operand_counts = header.standard_opcode_lengths
    order = "little" if little_endian else "big"
    sequences: list[list[Row]] = []
    rows: list[Row] = []
    address = op_index = 0
    file = line = 1

    def advance(operations: int) -> None:
        nonlocal address, op_index
        address += min_length * ((op_index + operations) // max_ops)
        op_index = (op_index + operations) % max_ops

    at, end = 0, len(data)
    while at < end:
        opcode = data[at]
        at += 1
        if opcode >= opcode_base:  # special opcode (§6.2.5.1): advance address and line, row
            adjusted = opcode - opcode_base
            if max_ops == 1:
                address += min_length * (adjusted // line_range)
            else:
                advance(adjusted // line_range)
            line += line_base + adjusted % line_range
            rows.append((address, file, line))
        elif opcode == 0:  # extended: length, sub-opcode, operands
            length, at = uleb128(data, at)
            following = at + length
            sub = data[at] if length else -1
            if sub == DW_LNE_END_SEQUENCE:
                rows.append((address, file, line))
                sequences.append(rows)
                rows, address, op_index, file, line = [], 0, 0, 1, 1
            elif sub == DW_LNE_SET_ADDRESS:
                address, op_index = int.from_bytes(data[at + 1 : following], order), 0
            at = following
        elif opcode == DW_LNS_COPY:
            rows.append((address, file, line))
        elif opcode == DW_LNS_ADVANCE_PC:
            operations, at = uleb128(data, at)
            advance(operations)
        elif opcode == DW_LNS_ADVANCE_LINE:
            delta, at = sleb128(data, at)
            line += delta
        elif opcode == DW_LNS_SET_FILE:
            file, at = uleb128(data, at)
        elif opcode == DW_LNS_CONST_ADD_PC:
            advance((255 - opcode_base) // line_range)
        elif opcode == DW_LNS_FIXED_ADVANCE_PC:
            address, op_index = address + int.from_bytes(data[at : at + 2], order), 0
            at += 2
        else:  # the other standard opcodes: skip their ULEB128 operands (the header counts them)
            for _ in range(operand_counts[opcode - 1] if opcode - 1 < len(operand_counts) else 0):
                _, at = uleb128(data, at)
    return sequences


class LineTable:
    def __init__(self, debug_line: bytes, header: LineHeader, little_endian: bool):
        rows: list[tuple[int, int, int, int]] = []  # (start, end, file, line)
        for sequence in decode_rows(debug_line, header, little_endian):
            rows += _intervals(sequence)
        rows.sort()
        self._rows = rows
        self._starts = [row[0] for row in rows]

    def row_at(self, address: int) -> tuple[int, int] | None:
        """(file index, line) of the row that holds the address; line 0 is no source line."""
        at = bisect_right(self._starts, address) - 1
        if at >= 0 and address < self._rows[at][1]:
            return self._rows[at][2], self._rows[at][3]
        return None


def _intervals(sequence: list[Row]) -> list[tuple[int, int, int, int]]:
    """A sequence's rows as intervals; of rows at one address, the last counts. A sequence at
    address 0 is code the linker discarded (its tombstone), not code."""
    if not sequence or sequence[0][0] == 0:
        return []
    return [
        (address, following[0], file, line)
        for (address, file, line), following in zip(sequence, sequence[1:])
        if following[0] > address
    ]
