"""One DWARF compile unit and what it says about a code address in it: the file and line, from
the unit's line program (line_table.py); the function and the inlined calls around it, from the
DIE tree (skimmed by die_skim.py): the DW_TAG_subprogram that holds the address (DWARF 5 §2.17:
DW_AT_low_pc with DW_AT_high_pc, or DW_AT_ranges), then the DW_TAG_inlined_subroutine nested in
it (through lexical blocks), each called from its DW_AT_call_file:DW_AT_call_line (§3.3.8.2),
each named through DW_AT_abstract_origin and DW_AT_specification."""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

from elftools.dwarf.compileunit import CompileUnit
from elftools.dwarf.die import DIE

from perfatlas.profile.symbols import dwarf_codes as dw
from perfatlas.profile.symbols.address_intervals import Intervals
from perfatlas.profile.symbols.demangle import is_mangled
from perfatlas.profile.symbols.die_skim import DieSkimmer, Skimmed
from perfatlas.profile.symbols.dwarf_sections import DwarfSections
from perfatlas.profile.symbols.line_header import LineHeader, read_header
from perfatlas.profile.symbols.line_table import LineTable
from perfatlas.profile.symbols.unit_header import UnitHeader

CODE_SCOPES = {dw.DW_TAG_INLINED_SUBROUTINE, dw.DW_TAG_LEXICAL_BLOCK, dw.DW_TAG_SUBPROGRAM}
NAME_REFERENCES = ("DW_AT_abstract_origin", "DW_AT_specification")
MAX_NAME_REFERENCES = 8  # a concrete instance -> its abstract origin -> its declaration


class InlinedCall(NamedTuple):
    """A function an inlined body was expanded into, and where in it the inlined call is."""

    function: str | None
    file: str | None
    line: int | None


class SourcePlace(NamedTuple):
    """The innermost function at an address and its line; the calls it was inlined through."""

    function: str | None
    file: str | None
    line: int | None
    inlined: tuple[InlinedCall, ...]


def text(die: DIE, name: str) -> str | None:
    """A string attribute; None when absent or not a string (a dwz string with no supplement)."""
    attribute = die.attributes.get(name)
    if attribute is None or not isinstance(attribute.value, bytes):
        return None
    return attribute.value.decode("utf-8", "replace")


def function_name(die: DIE) -> str | None:
    """The C++ linkage name when there is one (demangled later: it carries the namespace, class
    and template arguments), else DW_AT_name; found through the abstract origin or declaration."""
    plain = None
    for _ in range(MAX_NAME_REFERENCES):
        for key in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name"):
            linkage = text(die, key)
            if linkage and is_mangled(linkage):
                return linkage
        plain = plain or text(die, "DW_AT_name")
        reference = next((key for key in NAME_REFERENCES if key in die.attributes), None)
        if reference is None:
            break
        try:
            die = die.get_DIE_from_attribute(reference)
        except NotImplementedError:  # pyelftools: a reference into a file it has not loaded
            break
    return plain


class Unit:
    """One compile unit: its line table, its functions by address, its file names. The DIE tree
    is skimmed (die_skim.py); pyelftools reads the few DIEs that name what was found."""

    def __init__(self, sections: DwarfSections, header: UnitHeader):
        self.sections, self.header = sections, header
        self.skimmer = DieSkimmer(sections, header)
        self._lines: LineTable | None = None
        self._functions: Intervals | None = None
        self._later: list[tuple[int, tuple[str, ...]]] = []  # scopes (children at) for a miss

    @cached_property
    def cu(self) -> CompileUnit:
        return self.sections.info.get_CU_at(self.header.offset)

    @cached_property
    def top(self) -> DIE:
        return self.cu.get_top_DIE()

    @cached_property
    def comp_dir(self) -> str:
        return text(self.top, "DW_AT_comp_dir") or ""

    @cached_property
    def line_header(self) -> LineHeader | None:
        """The header of the unit's line program (DW_AT_stmt_list); None without one."""
        stmt_list = self.top.attributes.get("DW_AT_stmt_list")
        if stmt_list is None or not isinstance(stmt_list.value, int):
            return None
        sections = self.sections
        return read_header(
            sections.debug_line,
            stmt_list.value,
            sections.strings,
            sections.little_endian,
            self.header.address_size,
        )

    def file_name(self, index: int | None) -> str | None:
        """Entry `index` of the line program's file table, as a path."""
        header = self.line_header
        return None if header is None or index is None else header.file_name(index, self.comp_dir)

    def locate(self, address: int) -> SourcePlace:
        if self._lines is None and self.line_header is not None:
            sections = self.sections
            self._lines = LineTable(sections.debug_line, self.line_header, sections.little_endian)
        row = self._lines.row_at(address) if self._lines is not None else None
        file, line = (self.file_name(row[0]), row[1] or None) if row else (None, None)
        found = self._function_at(address)
        if found is None:
            return SourcePlace(None, file, line, ())
        offset, prefix = found
        chain = [self.cu.get_DIE_from_refaddr(at) for at in (offset, *self._chain(offset, address))]
        names = [function_name(die) for die in chain]
        if prefix and names[0] and not is_mangled(names[0]):
            names[0] = "::".join((*prefix, names[0]))
        inlined = tuple(
            InlinedCall(
                names[at - 1],
                self.file_name(_number(chain[at], "DW_AT_call_file")),
                _number(chain[at], "DW_AT_call_line"),
            )
            for at in range(len(chain) - 1, 0, -1)
        )
        return SourcePlace(names[-1], file, line, inlined)

    def _function_at(self, address: int) -> tuple[int, tuple[str, ...]] | None:
        """The offset of the DW_TAG_subprogram holding the address, and the modules it is in:
        those at the top of the unit and in Fortran modules first; on a miss, those in
        namespaces and nested in other functions."""
        if self._functions is None:
            self._functions = Intervals()
            top = self.skimmer.top
            if top.children_at is not None:
                self._index(top.children_at, (), nested=False)
        found = self._functions.find(address)
        while found is None and self._later:
            scopes, self._later = self._later, []
            for first, prefix in scopes:
                self._index(first, prefix, nested=True)
            found = self._functions.find(address)
        return found  # type: ignore[return-value]

    def _index(self, first: int, prefix: tuple[str, ...], nested: bool) -> None:
        """The functions among the DIEs from `first` on, into self._functions."""
        assert self._functions is not None
        for child in self.skimmer.children(first):
            tag, inside = child.tag, child.children_at
            if tag == dw.DW_TAG_SUBPROGRAM:
                for start, end in self.skimmer.ranges(child):
                    self._functions.add(start, end, (child.offset, prefix))
                if inside is not None:
                    self._later.append((inside, prefix))
            elif inside is None:
                continue
            elif tag == dw.DW_TAG_MODULE or (tag == dw.DW_TAG_NAMESPACE and nested):
                self._index(inside, (*prefix, self._scope_name(child)), nested)
            elif tag == dw.DW_TAG_NAMESPACE:
                self._later.append((inside, (*prefix, self._scope_name(child))))
            elif nested and tag in CODE_SCOPES:
                self._later.append((inside, prefix))

    def _scope_name(self, skimmed: Skimmed) -> str:
        return text(self.cu.get_DIE_from_refaddr(skimmed.offset), "DW_AT_name") or "?"

    def _chain(self, function: int, address: int) -> list[int]:
        """The offsets of the inlined subroutines (and nested functions) holding the address
        inside the function at offset `function`, outermost first; lexical blocks are passed
        through, not named."""
        skimmed = self.skimmer.read(function)
        return (
            [] if skimmed.children_at is None else self._chain_below(skimmed.children_at, address)
        )

    def _chain_below(self, first: int, address: int) -> list[int]:
        for child in self.skimmer.children(first):
            if child.tag not in CODE_SCOPES:
                continue
            ranges = self.skimmer.ranges(child)
            inside = child.children_at
            lexical = child.tag == dw.DW_TAG_LEXICAL_BLOCK
            if not ranges and lexical and inside is not None:
                inner = self._chain_below(inside, address)
                if inner:
                    return inner
            elif any(start <= address < end for start, end in ranges):
                inner = self._chain_below(inside, address) if inside is not None else []
                return inner if lexical else [child.offset, *inner]
        return []


def _number(die: DIE, name: str) -> int | None:
    attribute = die.attributes.get(name)
    return attribute.value if attribute is not None and isinstance(attribute.value, int) else None
