"""Where a binary's separate debug information is, by the rules GDB follows (GDB manual,
"Debugging Information in Separate Files"): first by build-id, DEBUG_DIR/.build-id/xx/rest.debug
(Debian's -dbgsym packages install there), then by the .gnu_debuglink name beside the binary, in
its .debug/ folder, and under DEBUG_DIR/ + the binary's folder. A file found is used only when it
holds DWARF and matches: the same build-id, or (a debuglink without build-ids) the link's CRC-32."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from perfatlas.profile.symbols.elf_image import BAD_FILE_ERRORS, ElfImage

DEBUG_DIRS = (Path("/usr/lib/debug"),)
CRC_CHUNK_BYTES = 1 << 20


def candidates(image: ElfImage, debug_dirs: Sequence[Path]) -> Iterator[tuple[Path, int | None]]:
    """(path, the CRC-32 it must have or None) of each place the debug file may be, in order."""
    if image.build_id and len(image.build_id) > 2:
        for folder in debug_dirs:
            yield folder / ".build-id" / image.build_id[:2] / f"{image.build_id[2:]}.debug", None
    link = image.debuglink()
    if link is None:
        return
    name, crc = link
    binary = Path(image.path).resolve()
    here = binary.parent
    for path in (here / name, here / ".debug" / name):
        if path != binary:
            yield path, crc
    for folder in debug_dirs:
        yield folder / here.relative_to(here.anchor) / name, crc


def file_crc32(path: Path) -> int:
    """The CRC-32 (ISO-HDLC, as zlib computes it) of a file's contents, as .gnu_debuglink holds."""
    crc = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(CRC_CHUNK_BYTES):
            crc = zlib.crc32(chunk, crc)
    return crc


def find_debug_file(image: ElfImage, debug_dirs: Sequence[Path]) -> ElfImage | None:
    """The separate debug file of `image`, opened, or None when there is none that matches."""
    for path, crc in candidates(image, debug_dirs):
        if not path.is_file():
            continue
        try:
            found = ElfImage(path)
        except BAD_FILE_ERRORS:
            continue
        try:
            if _matches(image, found, path, crc):
                return found
        except BAD_FILE_ERRORS:  # a garbled candidate: the next may do
            pass
        found.close()
    return None


def _matches(image: ElfImage, found: ElfImage, path: Path, crc: int | None) -> bool:
    if not found.has_dwarf():
        return False
    if image.build_id and found.build_id:
        return image.build_id == found.build_id
    return crc is not None and file_crc32(path) == crc
