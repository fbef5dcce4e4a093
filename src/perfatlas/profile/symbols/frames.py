"""Call-site addresses resolved after the run to `function (file:line)` (docs/profile.md, "Call
sites: how addresses are resolved"). A rank file lists the objects its process had loaded (path,
load bias, build-id, executable segments, from dl_iterate_phdr) and each site's return addresses;
an address belongs to the object whose segment holds it, at ELF virtual address address - base,
so address-space randomization does not matter. A return address follows the call: its line and
function are those of address - 1. Nothing here raises on bad input: what cannot be resolved
carries the reason in its Frame."""

from __future__ import annotations

import dataclasses
import posixpath
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from perfatlas.profile.symbols.debug_files import DEBUG_DIRS
from perfatlas.profile.symbols.demangle import demangle
from perfatlas.profile.symbols.dwarf_unit import InlinedCall
from perfatlas.profile.symbols.loaded_object import (
    CHANGED,
    NO_DEBUG_INFO,
    NO_LINE,
    STRIPPED,
    LoadedObject,
)

NOT_LOADED = "not in any loaded object"
REASONS = (NO_DEBUG_INFO, NO_LINE, STRIPPED, CHANGED, NOT_LOADED)  # and "cannot read PATH: WHY"

SiteKey = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Frame:
    """One resolved return address. `offset` is the return address's ELF virtual address in
    `object` (the runtime address itself when it is in no object); `function`, `file` and `line`
    are those of the call before it, the innermost inlined function first: `inlined` holds the
    functions it was inlined into, outermost last, each with the file and line of the inlined
    call. `reason` is None when resolved, else why not (REASONS, or "cannot read PATH: WHY")."""

    object: str
    offset: int
    function: str | None = None
    file: str | None = None
    line: int | None = None
    inlined: tuple[InlinedCall, ...] = ()
    reason: str | None = None

    def label(self) -> str:
        """`function (file:line)`, else `function (object+0xOFF)`, else `object+0xOFF (reason)`,
        with the file's and the object's base names."""
        where = f"{posixpath.basename(self.object)}+{self.offset:#x}" if self.object else ""
        where = where or f"{self.offset:#x}"
        place = f"{posixpath.basename(self.file)}:{self.line}" if self.file and self.line else ""
        if self.function:
            return f"{self.function} ({place or where})"
        return f"{where} ({place or self.reason})"


def site_key(frames: Iterable[Frame]) -> SiteKey:
    """What makes sites of different ranks one site: (object path, offset) of every frame.
    Runtime addresses differ between ranks (randomization); these do not."""
    return tuple((frame.object, frame.offset) for frame in frames)


class _Segments:
    """The executable segments of a process's objects, by address. Entries that do not have the
    rank file's shape are left out (their addresses are then in no loaded object)."""

    def __init__(self, objects: object):
        found = []
        for entry in objects if isinstance(objects, list) else ():
            if not isinstance(entry, dict):
                continue
            path, base, build_id = entry.get("path"), entry.get("base"), entry.get("build_id")
            segments = entry.get("segments")
            if not (isinstance(path, str) and _is_int(base) and isinstance(segments, list)):
                continue
            build_id = build_id if isinstance(build_id, str) else None
            for segment in segments:
                if isinstance(segment, list | tuple) and len(segment) == 2:
                    start, end = segment
                    if _is_int(start) and _is_int(end) and start < end:
                        found.append((start, end, path, base, build_id))
        found.sort()
        self._segments = found
        self._starts = [segment[0] for segment in found]

    def find(self, address: int) -> tuple[str, int, str | None] | None:
        """(path, base, build_id) of the object whose segment holds the address."""
        at = bisect_right(self._starts, address) - 1
        if at >= 0 and address < self._segments[at][1]:
            return self._segments[at][2:]
        return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Resolver:
    """Resolves the addresses of one or more processes (the ranks of a profile): each object
    (path, build-id) is opened once and each of its compile units decoded once while the
    resolver lives; close() (or a with block) closes the files."""

    def __init__(self, debug_dirs: Sequence[Path] = DEBUG_DIRS):
        self.debug_dirs = tuple(debug_dirs)
        self._objects: dict[tuple[str, str | None], LoadedObject] = {}
        self._demangled: dict[str, str] = {}

    def __enter__(self) -> Resolver:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for loaded in self._objects.values():
            loaded.close()
        self._objects.clear()

    def resolve(self, objects: list[dict], addresses: Iterable[int]) -> dict[int, Frame]:
        """Each return address of one process -> its Frame, from that process's objects (a
        rank file's "objects"). Values that are not ints are left out."""
        segments = _Segments(objects)
        frames = {}
        for address in {a for a in addresses if _is_int(a)}:
            frames[address] = self._frame(segments, address)
        return self._demangle(frames)

    def _frame(self, segments: _Segments, address: int) -> Frame:
        # The call instruction ends at address - 1: inside the segment even when the call is
        # the segment's last instruction (a call to a function that does not return).
        found = segments.find(address - 1)
        if found is None:
            return Frame("", address, reason=NOT_LOADED)
        path, base, build_id = found
        key = (path, build_id.lower() if build_id else None)
        if key not in self._objects:
            self._objects[key] = LoadedObject(path, key[1], self.debug_dirs)
        resolution = self._objects[key].resolve(address - base - 1)
        return Frame(path, address - base, *resolution)

    def _demangle(self, frames: dict[int, Frame]) -> dict[int, Frame]:
        """C++ names demangled: the new ones of this call in one c++filt."""
        names = {frame.function for frame in frames.values() if frame.function}
        names |= {call.function for frame in frames.values() for call in frame.inlined}
        new = {name for name in names if name and name not in self._demangled}
        self._demangled.update(demangle(new))
        self._demangled.update((name, name) for name in new if name not in self._demangled)
        return {address: self._demangled_frame(frame) for address, frame in frames.items()}

    def _demangled_frame(self, frame: Frame) -> Frame:
        def plain(name: str | None) -> str | None:
            return self._demangled.get(name, name) if name else name

        inlined = tuple(call._replace(function=plain(call.function)) for call in frame.inlined)
        return dataclasses.replace(frame, function=plain(frame.function), inlined=inlined)


def resolve(
    objects: list[dict], addresses: Iterable[int], debug_dirs: Sequence[Path] = DEBUG_DIRS
) -> dict[int, Frame]:
    """Each return address -> its Frame, for one process; see Resolver to resolve many ranks
    with each binary read once."""
    with Resolver(debug_dirs) as resolver:
        return resolver.resolve(objects, addresses)
