"""perfatlas.profile.symbols: call-site return addresses resolved after the run to `function
(file:line)` with the calls it was inlined through, or `object+0xOFF (reason)`, from the objects
each rank had loaded and the binaries' DWARF and symbol tables (docs/profile.md, "Call sites:
how addresses are resolved"). The API is frames.py's, imported here: Frame, InlinedCall,
Resolver, resolve, site_key and the reasons. pyelftools reads the ELF files; what it reads too
slowly for a large program (line programs, DIEs, abbreviations, range lists, symbol tables) is
read by the modules here, from the DWARF 5 specification.

  frames.py            Frame, site_key, Resolver (every rank, each binary read once), resolve:
                       an address to its loaded object, the reasons, demangling
  loaded_object.py     one object of a run as this machine reads it: build-id checked, DWARF or
                       symbols found, what they say about an address or why not
  elf_image.py         one ELF file: build-id, .gnu_debuglink, DWARF, function symbols; the
                       errors a garbled file raises
  debug_files.py       separate debug files by build-id and .gnu_debuglink (GDB's rules)
  dwarf_lookup.py      the compile unit of an address (.debug_aranges, else each unit's ranges)
  dwarf_unit.py        one unit: the line, function and inlined calls at an address
  dwarf_sections.py    the DWARF sections as bytes, each read once
  dwarf_codes.py       the DWARF tag, attribute and form codes read here
  unit_header.py       the unit headers of .debug_info
  abbreviations.py     a unit's abbreviation table, read as far as needed
  die_skim.py          DIEs skimmed: tag, code ranges, children
  range_lists.py       DW_AT_ranges lists (.debug_ranges, .debug_rnglists)
  address_intervals.py nested address intervals, the innermost holding an address
  line_header.py       a line program's header and its file table
  line_table.py        a line program's rows, by address
  leb128.py            LEB128 numbers
  demangle.py          C++ names demangled by binutils' c++filt, in one process
"""

from perfatlas.profile.symbols.frames import (
    CHANGED,
    NO_DEBUG_INFO,
    NO_LINE,
    NOT_LOADED,
    REASONS,
    STRIPPED,
    Frame,
    InlinedCall,
    Resolver,
    SiteKey,
    resolve,
    site_key,
)

__all__ = [
    "CHANGED",
    "NO_DEBUG_INFO",
    "NO_LINE",
    "NOT_LOADED",
    "REASONS",
    "STRIPPED",
    "Frame",
    "InlinedCall",
    "Resolver",
    "SiteKey",
    "resolve",
    "site_key",
]
