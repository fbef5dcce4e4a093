"""One object a run had loaded (a path and the build-id it had in memory), as this machine can
read it now: the file opened once and checked against the build-id, its DWARF (its own, or a
separate debug file), and what that says about an address, or why it says less: the reasons."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from perfatlas.profile.symbols.debug_files import find_debug_file
from perfatlas.profile.symbols.dwarf_lookup import DwarfIndex
from perfatlas.profile.symbols.dwarf_unit import InlinedCall, SourcePlace
from perfatlas.profile.symbols.elf_image import BAD_FILE_ERRORS, ElfImage

NO_DEBUG_INFO = "no debug information"  # no DWARF for the address; a symbol may name it
STRIPPED = "stripped"  # no DWARF and no .symtab: nothing names it
CHANGED = "binary changed since the run"  # the file's build-id is not the one the run loaded
NO_LINE = "no line information"  # DWARF names the function, with no line (compiler-made code)


class Resolution(NamedTuple):
    """What is known of one address of an object; reason is None when it is fully known."""

    function: str | None
    file: str | None
    line: int | None
    inlined: tuple[InlinedCall, ...]
    reason: str | None


def cannot_read(path: str, error: Exception) -> str:
    why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return f"cannot read {path}: {why or type(error).__name__}"


class LoadedObject:
    def __init__(self, path: str, build_id: str | None, debug_dirs: Sequence[Path]):
        self.path = path
        self.problem: str | None = None  # why nothing of the file can be used
        self.image: ElfImage | None = None
        self.debug: ElfImage | None = None  # a separate debug file
        self.dwarf: DwarfIndex | None = None
        self._dwarf_problem: str | None = None
        self._known: dict[int, Resolution] = {}
        try:
            self.image = ElfImage(path)
        except BAD_FILE_ERRORS as error:
            self.problem = cannot_read(path, error)
            return
        if build_id is not None and self.image.build_id != build_id.lower():
            self.problem = CHANGED
            return
        self._open_dwarf(debug_dirs)

    def _open_dwarf(self, debug_dirs: Sequence[Path]) -> None:
        assert self.image is not None
        source = self.image
        try:
            if not self.image.has_dwarf():
                source = self.debug = find_debug_file(self.image, debug_dirs)
            if source is not None:
                self.dwarf = DwarfIndex(source.dwarf())
        except BAD_FILE_ERRORS as error:
            self._dwarf_problem = cannot_read(source.path if source else self.path, error)

    def close(self) -> None:
        for image in (self.image, self.debug):
            if image is not None:
                image.close()

    def resolve(self, address: int) -> Resolution:
        """What the object says about the code at ELF virtual address `address`."""
        if self.problem is not None:
            return Resolution(None, None, None, (), self.problem)
        if address not in self._known:
            self._known[address] = self._resolve(address)
        return self._known[address]

    def _resolve(self, address: int) -> Resolution:
        place, problem = None, self._dwarf_problem
        if self.dwarf is not None:
            try:
                place = self.dwarf.locate(address)
            except BAD_FILE_ERRORS as error:
                problem = cannot_read(self.debug.path if self.debug else self.path, error)
        place = place or SourcePlace(None, None, None, ())
        function = place.function or self._symbol(address)
        if place.line is not None:
            return Resolution(function, place.file, place.line, place.inlined, None)
        if problem is None and place.function:
            problem = NO_LINE
        elif problem is None:
            problem = NO_DEBUG_INFO if function or self._has_symtab() else STRIPPED
        return Resolution(function, None, None, (), problem)

    def _tables(self) -> list[tuple[ElfImage, str]]:
        images = [image for image in (self.debug, self.image) if image is not None]
        return [*((image, ".symtab") for image in images), (self.image, ".dynsym")]  # type: ignore[list-item]

    def _symbol(self, address: int) -> str | None:
        """The function symbol holding the address: .symtab (the debug file's, then the
        binary's), then .dynsym (what `strip` leaves)."""
        for image, table in self._tables():
            try:
                name = image.symbols(table).function_at(address)
            except BAD_FILE_ERRORS:
                continue
            if name:
                return name
        return None

    def _has_symtab(self) -> bool:
        for image, table in self._tables()[:-1]:
            try:
                if image.symbols(table):
                    return True
            except BAD_FILE_ERRORS:
                continue
        return False
