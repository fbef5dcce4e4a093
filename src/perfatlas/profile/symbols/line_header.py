"""The header of a line program in .debug_line (DWARF 5 §6.2.4; the layout of versions 2 to 4
before it): the opcode parameters, the directory and file tables, and where the program's
opcodes start and end. Read here rather than by pyelftools, which before 0.30 cannot read the
file table clang writes (DW_LNCT_MD5 in DW_FORM_data16) and parses each entry slowly."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from struct import unpack_from

from perfatlas.profile.symbols.leb128 import sleb128, uleb128

# Content types of DWARF 5 directory and file entries (§6.2.4.1).
DW_LNCT_PATH, DW_LNCT_DIRECTORY_INDEX = 1, 2
# Forms a DWARF 5 entry may use (§7.5.6, table 7.6): fixed sizes, then the others.
FIXED_FORM_SIZES = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x1E: 16, 0x25: 1, 0x26: 2, 0x27: 3}
FIXED_FORM_SIZES |= {0x28: 4}  # data1, data2, data4, data8, data16, strx1-4
DW_FORM_BLOCK, DW_FORM_STRING, DW_FORM_SDATA, DW_FORM_STRP = 0x09, 0x08, 0x0D, 0x0E
DW_FORM_UDATA, DW_FORM_STRX, DW_FORM_LINE_STRP = 0x0F, 0x1A, 0x1F


@dataclass(frozen=True)
class StringSections:
    """.debug_str and .debug_line_str, where DW_FORM_strp and DW_FORM_line_strp point."""

    debug_str: bytes
    debug_line_str: bytes


@dataclass(frozen=True)
class LineHeader:
    version: int
    address_size: int
    minimum_instruction_length: int
    maximum_operations_per_instruction: int
    line_base: int
    line_range: int
    opcode_base: int
    standard_opcode_lengths: tuple[int, ...]
    directories: tuple[str, ...]
    files: tuple[tuple[str, int], ...]  # (path, directory index)
    program_start: int  # offsets in .debug_line
    program_end: int

    def file_name(self, index: int, comp_dir: str) -> str | None:
        """File `index` (0-based from DWARF 5, 1-based before) joined with its directory and
        the unit's DW_AT_comp_dir when relative (directory 0 is comp_dir before DWARF 5)."""
        at = index if self.version >= 5 else index - 1
        if not 0 <= at < len(self.files):
            return None
        name, folder_at = self.files[at]
        folder_at -= 0 if self.version >= 5 else 1
        folder = self.directories[folder_at] if 0 <= folder_at < len(self.directories) else ""
        return posixpath.normpath(posixpath.join(comp_dir, folder, name))


def read_header(
    data: bytes, offset: int, strings: StringSections, little_endian: bool, address_size: int
) -> LineHeader:
    """The header of the line program at `offset`; IndexError or ValueError when it is cut."""
    order = "<" if little_endian else ">"
    (length,) = unpack_from(order + "I", data, offset)
    at, offset_size = offset + 4, 4
    if length == 0xFFFFFFFF:
        (length,) = unpack_from(order + "Q", data, at)
        at, offset_size = at + 8, 8
    program_end = min(at + length, len(data))
    (version,) = unpack_from(order + "H", data, at)
    at += 2
    if not 2 <= version <= 5:
        raise ValueError(f"line program version {version}")
    if version >= 5:
        address_size, at = data[at], at + 2  # and segment_selector_size
    (header_length,) = unpack_from(order + ("I" if offset_size == 4 else "Q"), data, at)
    at += offset_size
    program_start = at + header_length
    min_length, at = data[at], at + 1
    max_ops = 1
    if version >= 4:
        max_ops, at = data[at] or 1, at + 1
    line_base = unpack_from("b", data, at + 1)[0]  # after default_is_stmt
    line_range, opcode_base = data[at + 2] or 1, data[at + 3]
    at += 4
    lengths = tuple(data[at : at + opcode_base - 1])
    at += max(opcode_base - 1, 0)
    entries = _Entries(data, strings, order, offset_size)
    if version >= 5:
        directories = [path for path, _ in entries.v5(at)]
        files = entries.v5(entries.at)
    else:
        directories, files = entries.v4(at)
    return LineHeader(
        version=version,
        address_size=address_size,
        minimum_instruction_length=min_length,
        maximum_operations_per_instruction=max_ops,
        line_base=line_base,
        line_range=line_range,
        opcode_base=opcode_base,
        standard_opcode_lengths=lengths,
        directories=tuple(directories),
        files=tuple(files),
        program_start=program_start,
        program_end=program_end,
    )


class _Entries:
    """The directory and file tables, read from `at` on; self.at is where reading stopped."""

    def __init__(self, data: bytes, strings: StringSections, order: str, offset_size: int):
        self.data, self.strings, self.order, self.offset_size = data, strings, order, offset_size
        self.at = 0

    def v4(self, at: int) -> tuple[list[str], list[tuple[str, int]]]:
        """Versions 2-4: NUL-terminated directories, then (name, directory, mtime, length)
        entries, each table ended by an empty name."""
        directories: list[str] = []
        while self.data[at]:
            name, at = self._string(at)
            directories.append(name)
        at += 1
        files = []
        while self.data[at]:
            name, at = self._string(at)
            folder, at = uleb128(self.data, at)
            at = uleb128(self.data, uleb128(self.data, at)[1])[1]  # mtime, length
            files.append((name, folder))
        self.at = at + 1
        return directories, files

    def v5(self, at: int) -> list[tuple[str, int]]:
        """Version 5: a format (content type and form pairs), a count, the entries."""
        count, at = self.data[at], at + 1
        formats = []
        for _ in range(count):
            content, at = uleb128(self.data, at)
            form, at = uleb128(self.data, at)
            formats.append((content, form))
        entries_count, at = uleb128(self.data, at)
        entries = []
        for _ in range(entries_count):
            path, folder = "", 0
            for content, form in formats:
                value, at = self._value(form, at)
                if content == DW_LNCT_PATH and isinstance(value, str):
                    path = value
                elif content == DW_LNCT_DIRECTORY_INDEX and isinstance(value, int):
                    folder = value
            entries.append((path, folder))
        self.at = at
        return entries

    def _value(self, form: int, at: int) -> tuple[str | int | None, int]:
        data = self.data
        if form == DW_FORM_STRING:
            return self._string(at)
        if form in (DW_FORM_LINE_STRP, DW_FORM_STRP):
            size = self.offset_size
            (offset,) = unpack_from(self.order + ("I" if size == 4 else "Q"), data, at)
            table = (
                self.strings.debug_line_str if form == DW_FORM_LINE_STRP else self.strings.debug_str
            )
            return _c_string(table, offset), at + size
        if form == DW_FORM_UDATA:
            return uleb128(data, at)
        if form == DW_FORM_SDATA:
            return sleb128(data, at)
        if form == DW_FORM_STRX:  # an index into the unit's string offsets: not followed
            return None, uleb128(data, at)[1]
        if form == DW_FORM_BLOCK:
            size, at = uleb128(data, at)
            return None, at + size
        if form in FIXED_FORM_SIZES:
            size = FIXED_FORM_SIZES[form]
            value = int.from_bytes(data[at : at + size], "little" if self.order == "<" else "big")
            return (
                value if size <= 8 and form not in (0x25, 0x26, 0x27, 0x28) else None
            ), at + size
        raise ValueError(f"form {form:#x} in a line program header")

    def _string(self, at: int) -> tuple[str, int]:
        end = self.data.index(b"\0", at)
        return self.data[at:end].decode("utf-8", "replace"), end + 1


def _c_string(table: bytes, offset: int) -> str:
    end = table.index(b"\0", offset)
    return table[offset:end].decode("utf-8", "replace")
