"""Every native executable against hostile key=value words (docs/safety/native.md): each ends with
exit status 2 and one line on stderr, never a signal, a hang or a second line.

The executables and their parameters come from the executables themselves (`--params`), so a new
program or parameter is attacked without editing this file. The profiler's own test programs
(pa-ipm-*) take no key=value words and are left out."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from perfatlas.launch.native import bin_dir

LONG = "9" * 5000
NOT_UTF8 = b"\xff\xfe\xc3("
# Values no parameter of a kind accepts: huge, overflowing, negative, not a number, empty,
# malformed, not UTF-8, very long.
HOSTILE: dict[str, list[str | bytes]] = {
    "int": ["1e999", "99999999999999999999", "-99999999999999999999", "nan", "", "1.5", LONG],
    "size": ["1e999", "-1", "nan", "inf", "", "1.5", "4QiB", "99999999999TiB", LONG],
    "sizes": ["1e999", "-1", "nan", "", "4KiB,,8KiB", ",", "4KiB," * 2000, LONG],
    "ints": ["1e999", "99999999999999999999", "nan", "", "1.5", "0,,5", ",", "0," * 2000, LONG],
    "double": ["1e999", "-1e999", "nan", "inf", "", "1e5x", LONG],
    "duration": ["1e999", "-1", "nan", "inf", "", "1parsec", LONG],
    "choice": ["", "nan", "x" * 100_000],
    "cpus": ["", "-1", "nan", "1-0", "0,0", "0-100000000", "0-99999999999999999999", LONG],
    "node": ["", "-1", "nan", "99999999999999999999", "4096"],
    "string": [],  # any text is a string: hostile strings are tried where they are used, below
}
UNKNOWN: list[str | bytes] = ["nosuchkey=1", "=1", "novalue", b"\xff\xfe=1", "k" * 100_000 + "=1"]


def programs() -> list[Path]:
    if not bin_dir().is_dir():
        return []
    found = sorted(bin_dir().glob("pa-*"))
    # the MPI test programs of perfatlas-ipm and libpa-smi take no key=value parameters
    libraries = ("pa-ipm-", "pa-smi-")
    return [p for p in found if not p.name.startswith(libraries) and os.access(p, os.X_OK)]


def parameter_table(program: Path) -> list[dict]:
    done = subprocess.run([program, "--params"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["params"]


def word(name: str, value: str | bytes) -> bytes:
    return name.encode() + b"=" + (value if isinstance(value, bytes) else value.encode())


def hostile_words(program: Path) -> list[bytes]:
    """Every hostile value of a kind on the program's first parameter of that kind, and one of
    them, in turn, on each other parameter: each value and each parameter attacked, in a few
    hundred launches in all."""
    words = [w if isinstance(w, bytes) else w.encode() for w in UNKNOWN]
    seen: set[str] = set()
    for index, param in enumerate(parameter_table(program)):
        values = [*HOSTILE[param["kind"]], NOT_UTF8] if param["kind"] != "string" else []
        if param["kind"] not in seen:
            seen.add(param["kind"])
            words += [word(param["name"], value) for value in values]
        elif values:
            words.append(word(param["name"], values[index % len(values)]))
    return words


def assert_refused(done: subprocess.CompletedProcess, program: str, what: str) -> None:
    """Exit 2 after ONE line on stderr, prefixed by the program's name; never a signal."""
    err = done.stderr.decode(errors="replace")
    assert done.returncode >= 0, f"{program} {what}: killed by signal {-done.returncode}"
    assert done.returncode == 2, f"{program} {what}: exit {done.returncode}, stderr {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{program}: "), f"{program} {what}: {err!r}"


def run(argv: list, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        argv, capture_output=True, timeout=120, env={**os.environ, **(env or {})}, cwd=cwd
    )


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_hostile_words_are_refused_in_one_sentence(program: Path, tmp_path: Path) -> None:
    words = hostile_words(program)
    assert len(words) >= len(UNKNOWN)
    for hostile in words:
        done = run([program, hostile], cwd=tmp_path)
        assert_refused(done, program.name, f"{hostile[:60]!r}")
    assert not list(tmp_path.iterdir()), "a refused command line left a file behind"


def test_every_program_was_attacked() -> None:
    names = {p.name for p in programs()}
    if not names:
        pytest.skip(f"no native executables in {bin_dir()}")
    assert {"pa-mem-bandwidth", "pa-noise", "pa-parbench", "pa-topology"} <= names


# Sizes beyond memory: what the arguments ask for is weighed against the memory available (here
# set to 1 GB by PERFATLAS_MEMORY_AVAILABLE, so that every machine refuses alike) before it is
# allocated; a program that allocated first would be killed by the OOM killer or crash.
BEYOND_MEMORY = [
    ("pa-mem-bandwidth", ["bytes=64GiB"]),
    ("pa-mem-bandwidth", ["bytes=4KiB,64GiB"]),
    ("pa-mem-latency", ["bytes=64GiB"]),
    ("pa-mem-contention", ["bytes=64GiB"]),
    ("pa-mem-numa-matrix", ["bandwidth_bytes=64GiB"]),
    ("pa-parbench", ["bytes=1TiB"]),
    ("pa-example-sum", ["bytes=64GiB"]),
    ("pa-noise", ["duration=3600", "quantum=1us"]),
    ("pa-spsolve", ["problem=laplace2d", "n=20000"]),
    ("pa-spsolve", ["problem=elasticity3d", "n=500"]),
    ("pa-spmv", ["problem=laplace2d", "n=20000"]),
    ("pa-sweep", ["it=1000000", "jt=1000000", "kt=1000000"]),
    ("pa-sweep", ["it=100000", "jt=100000", "kt=1", "mk=1"]),
    ("pa-madbench", ["npix=1000000"]),
    ("pa-hydro", ["cells_per_pe=90000000"]),
]


@pytest.mark.parametrize(("name", "words"), BEYOND_MEMORY, ids=lambda v: str(v))
def test_sizes_beyond_memory_are_refused_before_allocating(name: str, words: list[str]) -> None:
    program = bin_dir() / name
    if not program.is_file():
        pytest.skip(f"{name} is not built here")
    done = run([program, *words], env={"PERFATLAS_MEMORY_AVAILABLE": "1e9"})
    assert_refused(done, name, " ".join(words))
    assert any(word in done.stderr.decode() for word in ("available", "beyond", "more than"))


def matrix_files(tmp_path: Path) -> dict[str, str]:
    """Hostile matrix= values: missing, a folder, a FIFO (must not hang), a device, too long a
    name, a name that is not UTF-8, a file declaring 4e8 rows, NaN and Inf values."""
    fifo = tmp_path / "matrix.fifo"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    banner = "%%MatrixMarket matrix coordinate real symmetric\n"
    files = {
        "declares-4e8-rows": banner + "400000000 400000000 1\n1 1 1\n",
        "nan": banner + "2 2 2\n1 1 nan\n2 2 1\n",
        "inf": banner + "2 2 2\n1 1 1\n2 2 -inf\n",
        "overflowing-duplicates": banner + "2 2 3\n1 1 1e308\n1 1 1e308\n2 2 1\n",
        "out-of-range": banner + "2 2 1\n3 1 1\n",
        "negative-size": banner + "-2 -2 1\n1 1 1\n",
        "entries-beyond-n-squared": banner + "2 2 99999999999\n1 1 1\n",
        "nul-byte": banner + "2 2 2\n1 1 1\x002 2 1\n2 2 1\n",
        "missing-diagonal": banner + "3 3 2\n1 1 1\n3 3 1\n",
    }
    paths = {"missing": str(tmp_path / "missing.mtx"), "folder": str(tmp_path)}
    paths |= {"fifo": str(fifo), "device": "/dev/zero", "long": "m" * 5000}
    for name, text in files.items():
        (tmp_path / f"{name}.mtx").write_text(text)
        paths[name] = str(tmp_path / f"{name}.mtx")
    return paths


SPMV_MATRICES = {"fifo", "declares-4e8-rows", "nan", "overflowing-duplicates"}


@pytest.mark.parametrize("name", ["pa-spsolve", "pa-spmv"])
def test_hostile_matrix_files_are_refused_as_bad_input(name: str, tmp_path: Path) -> None:
    program = bin_dir() / name
    if not program.is_file():
        pytest.skip(f"{name} is not built here")
    for label, path in matrix_files(tmp_path).items():
        if name == "pa-spmv" and label not in SPMV_MATRICES:
            continue  # the same reader: pa-spsolve tries every file, pa-spmv (MPI) a few
        fast = ["repeat=1", "warmup=0"] if name == "pa-spsolve" else []
        done = run([program, f"matrix={path}", *fast], env={"PERFATLAS_MEMORY_AVAILABLE": "1e9"})
        assert_refused(done, name, label)
    done = run([program, b"matrix=" + bytes(tmp_path) + b"/\xff\xfe.mtx"])
    assert_refused(done, name, "a file name that is not UTF-8")


def test_nan_in_a_matrix_is_a_bad_file_naming_the_line(tmp_path: Path) -> None:
    program = bin_dir() / "pa-spsolve"
    if not program.is_file():
        pytest.skip("pa-spsolve is not built here")
    path = matrix_files(tmp_path)["nan"]
    done = run([program, f"matrix={path}", "repeat=1", "warmup=0"])
    assert_refused(done, "pa-spsolve", "nan")
    assert "line 3" in done.stderr.decode() and "not a finite number" in done.stderr.decode()
