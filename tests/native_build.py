"""A build of some native targets from this source tree into a folder of its own (CMake, Ninja):
for tests of builds other than the installed one (tests/test_portable.py, tests/test_arm64.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def build(folder: Path, *defines: str, targets: tuple[str, ...] = ("pa-mem-latency",)) -> Path:
    """`targets` (and what they link) built from this source tree; their bin/ folder."""
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are needed to build (make deps installs them)")
    configure = ["cmake", "-S", str(ROOT), "-B", str(folder), "-G", "Ninja", *defines]
    subprocess.run(configure, check=True, capture_output=True, text=True, timeout=300)
    done = subprocess.run(
        ["cmake", "--build", str(folder), "--target", *targets],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return folder / "bin"


def partial_bin(folder: Path, without: dict[str, tuple[str, ...]]) -> Path:
    """The installed build as a build without some of its optional parts would be: a folder of
    links to its files less the executables of each part of `without` (part name -> the
    executables it alone serves), and its build-parts.json with those parts not built."""
    from perfatlas.launch.build_parts import FILE
    from perfatlas.launch.native import bin_dir

    folder.mkdir()
    dropped = {name for programs in without.values() for name in programs}
    for installed in bin_dir().iterdir():
        if installed.name not in dropped | {FILE}:
            (folder / installed.name).symlink_to(installed)
    parts = json.loads((bin_dir() / FILE).read_text())
    for part in without:
        parts["parts"][part] = {"built": False, "why": f"{part} was not found at build time"}
    (folder / FILE).write_text(json.dumps(parts))
    return folder
