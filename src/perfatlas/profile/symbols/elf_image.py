"""One ELF file opened for symbol lookup: its GNU build-id, its .gnu_debuglink, whether it carries
DWARF, its DWARF read by pyelftools, and the function symbol (.symtab, then .dynsym) that contains
an address. Symbol tables are read with struct from the section bytes (the ELF gABI's Elf32_Sym and
Elf64_Sym layouts): pyelftools' per-symbol parsing costs a second on a large library."""

from __future__ import annotations

import errno
import os
import stat
import struct
import zlib
from bisect import bisect_right
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import DWARFError, ELFError
from elftools.construct import ConstructError
from elftools.dwarf.dwarfinfo import DWARFInfo
from elftools.elf.elffile import ELFFile

# What reading a file that is not what it claims raises: pyelftools' own errors and those of the
# construct library it carries (a truncated note), OSError (a seek past the end), and what
# pyelftools and the readers here let through from a garbled section, as found by overwriting
# bytes of real binaries' sections at random (tests/test_call_site_symbols.py): an unknown
# abbreviation code or form (KeyError, NotImplementedError), an attribute of the wrong type once
# its form is garbled (TypeError), struct and zlib errors on short or garbled data (OverflowError:
# a decompressed size too large for zlib), IndexError and ValueError on offsets past the data,
# and AssertionError: pyelftools checks some header fields (an address size) with assert.
BAD_FILE_ERRORS = (
    ELFError,
    DWARFError,
    ConstructError,
    OSError,
    struct.error,
    zlib.error,
    OverflowError,
    KeyError,
    IndexError,
    ValueError,
    TypeError,
    NotImplementedError,
    AssertionError,
)
# DEFLATE's largest compression ratio (RFC 1951: a 258-byte match coded in 2 bits): a compressed
# section that claims more is garbled.
DEFLATE_RATIO = 1032
# st_info's low four bits (gABI): code symbols.
STT_FUNC = 2
STT_GNU_IFUNC = 10
SHN_UNDEF = 0
# st_info's high four bits, in the order an alias is preferred: STB_GLOBAL, STB_WEAK, STB_LOCAL.
BINDING_PREFERENCE = {1: 0, 2: 1, 0: 2}


class SymbolTable:
    """The sized function symbols of one symbol table section, sorted by address."""

    def __init__(self, elf: ELFFile, name: str):
        self.starts: list[int] = []
        self._entries: list[tuple[int, int, int, int]] = []  # (start, end, preference, name)
        self._strings = b""
        section = elf.get_section_by_name(name)
        if section is None or section["sh_type"] == "SHT_NOBITS":
            return
        layout = "IIIBBH" if elf.elfclass == 32 else "IBBHQQ"
        record = struct.Struct(("<" if elf.little_endian else ">") + layout)
        data = section.data()
        if section["sh_entsize"] != record.size or len(data) % record.size:
            return
        self._strings = elf.get_section(section["sh_link"]).data()
        for fields in record.iter_unpack(data):
            if elf.elfclass == 32:
                name_at, value, size, info, _, shndx = fields
            else:
                name_at, info, _, shndx, value, size = fields
            if info & 0xF in (STT_FUNC, STT_GNU_IFUNC) and size > 0 and shndx != SHN_UNDEF:
                preference = BINDING_PREFERENCE.get(info >> 4, 3)
                self._entries.append((value, value + size, preference, name_at))
        self._entries.sort()
        self.starts = [entry[0] for entry in self._entries]

    def __bool__(self) -> bool:
        return bool(self._entries)

    def function_at(self, address: int) -> str | None:
        """The name of the symbol with st_value <= address < st_value + st_size: among those that
        start nearest below the address (aliases), a global one first."""
        at = bisect_right(self.starts, address) - 1
        if at < 0:
            return None
        start = self.starts[at]
        while at > 0 and self.starts[at - 1] == start:
            at -= 1
        aliases = [entry for entry in self._entries[at:] if entry[0] == start]
        containing = [entry for entry in aliases if address < entry[1]]
        if not containing:
            return None
        name_at = min(containing, key=lambda entry: entry[2])[3]
        end = self._strings.find(b"\0", name_at)
        return self._strings[name_at : end if end >= 0 else None].decode("utf-8", "replace")


class ElfImage:
    """An ELF file, kept open while its DWARF is read (pyelftools reads sections on demand)."""

    def __init__(self, path: str | Path):
        """Raises OSError when the file cannot be opened or is not a regular file (a FIFO
        would block), ELFError (or another of BAD_FILE_ERRORS) when it is not ELF."""
        self.path = str(path)
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", self.path)
        self._file: BinaryIO = open(path, "rb")  # closed by close()
        self.size = os.fstat(self._file.fileno()).st_size
        try:
            self.elf = ELFFile(self._file, stream_loader=self._open_linked)
            self.build_id = self._build_id()
        except BaseException:
            self._file.close()
            raise
        self._symbols: dict[str, SymbolTable] = {}

    def close(self) -> None:
        self._file.close()

    def _open_linked(self, path: str | bytes) -> BinaryIO:
        """A file this one names (a dwz supplementary file), relative to its folder."""
        return open(Path(self.path).parent / os.fsdecode(path), "rb")

    def _build_id(self) -> str | None:
        """The NT_GNU_BUILD_ID note as hex, from .note.gnu.build-id or any note section."""
        named = self.elf.get_section_by_name(".note.gnu.build-id")
        sections = [named] if named is not None else self.elf.iter_sections("SHT_NOTE")
        for section in sections:
            for note in section.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID" and isinstance(note["n_desc"], str):
                    return note["n_desc"]
        return None

    def has_dwarf(self) -> bool:
        """Whether the file holds DWARF itself (a stripped file's .debug_info is gone; a separate
        debug file keeps it while its code sections become NOBITS)."""
        for name in (".debug_info", ".zdebug_info"):
            section = self.elf.get_section_by_name(name)
            if section is not None and section["sh_type"] != "SHT_NOBITS" and section["sh_size"]:
                return True
        return False

    def dwarf(self) -> DWARFInfo:
        """Its DWARF, a dwz supplementary file (.gnu_debugaltlink) followed when present.
        pyelftools reads every debug section into memory: sizes a garbled header claims are
        refused first (ELFError)."""
        self._check_debug_sizes()
        try:
            return self.elf.get_dwarf_info(relocate_dwarf_sections=False, follow_links=True)
        except OSError:  # the supplementary file is gone: what this file holds itself
            return self.elf.get_dwarf_info(relocate_dwarf_sections=False, follow_links=False)

    def _check_debug_sizes(self) -> None:
        """A debug section holds at most its file size, or DEFLATE_RATIO times its stored size
        once inflated (SHF_COMPRESSED); it is never NOBITS (pyelftools would make the zeros)."""
        for section in self.elf.iter_sections():
            if not section.name.startswith((".debug", ".zdebug")):
                continue
            stored = 0 if section["sh_type"] == "SHT_NOBITS" else section["sh_size"]
            largest = stored * DEFLATE_RATIO if section.compressed else stored
            if section.data_size > min(largest, self.size * DEFLATE_RATIO):
                raise ELFError(f"{section.name} claims {section.data_size} bytes")

    def debuglink(self) -> tuple[str, int] | None:
        """.gnu_debuglink: the debug file's name and the CRC-32 of its contents (the section is
        the NUL-terminated name, padding to 4 bytes, then the CRC in the file's byte order)."""
        section = self.elf.get_section_by_name(".gnu_debuglink")
        if section is None:
            return None
        data = section.data()
        name, nul, _ = data.partition(b"\0")
        at = (len(name) + 1 + 3) & ~3
        if not nul or not name or len(data) < at + 4:
            return None
        (crc,) = struct.unpack_from("<I" if self.elf.little_endian else ">I", data, at)
        return os.fsdecode(name), crc

    def symbols(self, name: str) -> SymbolTable:
        """The function symbols of section `name` (.symtab or .dynsym), read once."""
        if name not in self._symbols:
            self._symbols[name] = SymbolTable(self.elf, name)
        return self._symbols[name]
