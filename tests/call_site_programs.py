"""The call-site test programs of tests/data/call_sites built and run: the return addresses each
probe call kept and the objects the process had loaded (a rank file's "objects"), and the source
lines their `site:TAG` comments mark (tests/test_call_site_symbols.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "call_sites"
TIMEOUT_S = 120
# The programs in other languages: compiler, source, flags (gfortran has no noinline attribute).
OTHER_PROGRAMS = {
    "g++": ("program.cpp", ()),
    "clang++": ("program.cpp", ()),
    "gfortran": ("program.f90", ("-fno-inline",)),
}


@dataclass(frozen=True)
class Run:
    """One run of a test program: its probe's return addresses by tag, and its objects."""

    sites: dict[str, int]
    objects: list[dict]

    def object_of(self, name: str) -> dict:
        """The object whose file is named `name`."""
        return next(entry for entry in self.objects if Path(entry["path"]).name == name)

    def moved(self, files: dict[str, Path]) -> list[dict]:
        """The objects, with the file of each object named in `files` (by file name) replaced by
        another path: a copy of the file, changed or removed after the run."""
        return [
            {**entry, "path": str(files.get(Path(entry["path"]).name, entry["path"]))}
            for entry in self.objects
        ]


@dataclass(frozen=True)
class Program:
    folder: Path
    executable: Path
    library: Path | None  # libwork.so, the library the C program links

    def run(self) -> Run:
        done = subprocess.run(
            [str(self.executable)], capture_output=True, text=True, timeout=TIMEOUT_S, check=True
        )
        document = json.loads(done.stdout)
        return Run(document["sites"], document["objects"])


def site_lines(source: str) -> dict[str, int]:
    """TAG -> the line number (from 1) of each `site:TAG` comment (C or Fortran) in a source."""
    lines = (DATA / source).read_text().splitlines()
    return {
        match.group(1): number
        for number, line in enumerate(lines, 1)
        for match in re.finditer(r"(?:/\*|!) site:(\w+)", line)
    }


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def execute(*command: str | Path) -> None:
    argv = [str(part) for part in command]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stderr[-3000:]}"


def linking(pie: bool) -> list[str]:
    return ["-fPIE", "-pie"] if pie else ["-fno-pie", "-no-pie"]


def build_probe(folder: Path, cc: str, flags: list[str]) -> None:
    """libprobe.so, the library the programs call (as a program calls libperfatlas-ipm.so)."""
    execute(cc, *flags, "-shared", "-fPIC", DATA / "probe.c", "-o", folder / "libprobe.so")


def build_library(folder: Path, cc: str, flags: list[str], *defines: str) -> Path:
    """libwork.so (library.c) into `folder`, against the probe library there (`flags` name the
    folder with -L)."""
    library = folder / "libwork.so"
    execute(cc, *flags, *defines, "-shared", "-fPIC", DATA / "library.c", "-o", library, "-lprobe")
    return library


def build(folder: Path, cc: str = "gcc", flags: tuple[str, ...] = (), pie: bool = True) -> Program:
    """The C program (program.c), its libwork.so and libprobe.so at -O2 -g plus `flags`."""
    folder.mkdir(parents=True, exist_ok=True)
    cc = tool(cc)
    common = ["-O2", "-g", *flags, f"-I{DATA}", f"-L{folder}", f"-Wl,-rpath,{folder}"]
    build_probe(folder, cc, common)
    library = build_library(folder, cc, common)
    executable = folder / "program"
    execute(cc, *common, *linking(pie), DATA / "program.c", "-o", executable, "-lwork", "-lprobe")
    return Program(folder, executable, library)


def build_other(folder: Path, compiler: str, pie: bool = True) -> Program:
    """The C++ or Fortran program by `compiler` (OTHER_PROGRAMS), against a probe built by gcc."""
    folder.mkdir(parents=True, exist_ok=True)
    source, flags = OTHER_PROGRAMS[compiler]
    program = tool(compiler)
    common = ["-O2", "-g", f"-I{DATA}", f"-J{folder}" if compiler == "gfortran" else "-I."]
    build_probe(folder, tool("gcc"), ["-O2", "-g"])
    executable = folder / f"program-{compiler}"
    libraries = [f"-L{folder}", "-lprobe", f"-Wl,-rpath,{folder}"]
    execute(program, *common, *flags, *linking(pie), DATA / source, "-o", executable, *libraries)
    return Program(folder, executable, None)
