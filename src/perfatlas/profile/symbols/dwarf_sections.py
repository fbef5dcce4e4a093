"""The DWARF sections of one file that perfatlas reads itself, as bytes, each read once from
pyelftools' DWARFInfo (which holds every section, decompressed, in memory)."""

from __future__ import annotations

from functools import cached_property
from typing import BinaryIO

from elftools.dwarf.dwarfinfo import DWARFInfo

from perfatlas.profile.symbols.abbreviations import AbbreviationTable
from perfatlas.profile.symbols.line_header import StringSections


class DwarfSections:
    def __init__(self, info: DWARFInfo):
        self.info = info
        self.little_endian: bool = info.config.little_endian
        self.order = "little" if self.little_endian else "big"  # for int.from_bytes
        self._abbreviations: dict[int, AbbreviationTable] = {}

    @cached_property
    def debug_info(self) -> bytes:
        return _contents(self.info.debug_info_sec)

    @cached_property
    def debug_line(self) -> bytes:
        return _contents(self.info.debug_line_sec)

    @cached_property
    def debug_aranges(self) -> bytes:
        return _contents(self.info.debug_aranges_sec)

    @cached_property
    def debug_abbrev(self) -> bytes:
        return _contents(self.info.debug_abbrev_sec)

    @cached_property
    def debug_addr(self) -> bytes:
        return _contents(self.info.debug_addr_sec)

    @cached_property
    def debug_ranges(self) -> bytes:
        return _contents(self.info.debug_ranges_sec)

    @cached_property
    def debug_rnglists(self) -> bytes:
        return _contents(self.info.debug_rnglists_sec)

    def abbreviations(self, offset: int) -> AbbreviationTable:
        """The abbreviation table at `offset` (units may share one), kept."""
        if offset not in self._abbreviations:
            self._abbreviations[offset] = AbbreviationTable(self.debug_abbrev, offset)
        return self._abbreviations[offset]

    @cached_property
    def strings(self) -> StringSections:
        return StringSections(
            _contents(self.info.debug_str_sec), _contents(self.info.debug_line_str_sec)
        )


def _contents(section: object) -> bytes:
    """A section's bytes (b"" when the file has none); pyelftools holds each in a stream."""
    stream: BinaryIO | None = getattr(section, "stream", None)
    if stream is None:
        return b""
    stream.seek(0)
    return stream.read()
