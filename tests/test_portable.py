"""Portable builds (docs/portability.md): a build made for one CPU never crashes obscurely on
another. Every executable checks at start that this CPU has the extensions it was compiled for
(native/common/isa_guard.c) and otherwise refuses in one sentence with status 2; the Python side
passes that sentence through and explains a SIGILL that still happens; a named -march level
(PERFATLAS_ARCH) gives a build that runs on every CPU of that level.

The refusal is checked for real: pa-mem-latency is compiled with a -m<feature> flag this CPU lacks,
chosen from /proc/cpuinfo at run time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from native_build import build

from perfatlas.launch.isa import architecture
from perfatlas.launch.native import bin_dir, run_json

ROOT = Path(__file__).resolve().parents[1]
# x86-64 extensions and levels; an aarch64 build's check is tests/test_arm64.py's.
pytestmark = pytest.mark.skipif(
    architecture() != "x86_64", reason="x86-64 extensions and levels (aarch64: test_arm64.py)"
)
PROFILER = "perfatlas-ipm"  # the PMPI profiler library, loaded into programs (LD_PRELOAD)
# GCC's -m flag, GCC's __builtin_cpu_supports name (what the refusal names), /proc/cpuinfo flag;
# newest first, so that the first one missing is one few CPUs have.
CANDIDATES = [
    ("-mavx512fp16", "avx512fp16", "avx512_fp16"),
    ("-mamx-tile", "amx-tile", "amx_tile"),
    ("-mavx512vp2intersect", "avx512vp2intersect", "avx512_vp2intersect"),
    ("-mavxvnni", "avxvnni", "avx_vnni"),
    ("-mavx512f", "avx512f", "avx512f"),
    ("-mavx2", "avx2", "avx2"),
]
REFUSAL = re.compile(
    r"pa-mem-latency: this CPU \((?P<cpu>.+)\) lacks (?P<missing>[\w.\-, ]+), which this build "
    r"of perfatlas was compiled for \((?P<flags>[^()]+)\); rebuild perfatlas on this machine "
    r"\(make install\) or once for every node type \(make install PERFATLAS_ARCH="
    r"(?P<level>x86-64(-v[234])?), the level this CPU has\)"
)


# __builtin_cpu_supports names that /proc/cpuinfo spells otherwise (the others are the same).
CPUINFO_NAMES = {name: flag for _, name, flag in CANDIDATES} | {
    "sse3": "pni",
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "bmi": "bmi1",
    "lzcnt": "abm",
    "pclmul": "pclmulqdq",
    "cmpxchg16b": "cx16",
    "sha": "sha_ni",
    "amx-int8": "amx_int8",
    "amx-bf16": "amx_bf16",
    **{f"avx512{n}": f"avx512_{n}" for n in ("vbmi2", "vnni", "bitalg", "vpopcntdq", "bf16")},
}


def cpuinfo_flag(name: str) -> str:
    return CPUINFO_NAMES.get(name, name)


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return "unknown model"


@pytest.fixture(scope="module")
def lacking(tmp_path_factory) -> tuple[str, Path]:
    """(the extension this CPU lacks, the bin/ folder of a build that requires it)."""
    have = cpu_flags()
    missing = [(flag, name) for flag, name, cpuinfo in CANDIDATES if cpuinfo not in have]
    if not missing:
        pytest.skip(f"this CPU has every candidate: {', '.join(c[1] for c in CANDIDATES)}")
    flag, name = missing[0]
    folder = tmp_path_factory.mktemp("lacking")
    targets = (
        "pa-mem-latency",
        *([PROFILER] if (bin_dir() / f"lib{PROFILER}.so").exists() else []),
    )
    return name, build(folder, f"-DPERFATLAS_ARCH_FLAGS=-march=x86-64-v2 {flag}", targets=targets)


def test_a_build_for_an_extension_this_cpu_lacks_refuses_in_one_sentence(lacking):
    name, folder = lacking
    done = subprocess.run(
        [str(folder / "pa-mem-latency"), "bytes=64KiB", "samples=1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    match = REFUSAL.fullmatch(lines[0])
    assert match, lines[0]
    missing = match["missing"].split(", ")
    assert name in missing  # with what it implies (avx512fp16: avx512bw, avx512f) if lacking too
    assert not {cpuinfo_flag(feature) for feature in missing} & cpu_flags()
    assert match["cpu"] == cpu_model()
    assert match["flags"].endswith(f"-m{name}") or name in match["flags"]


def test_the_profiler_library_refuses_in_the_program_it_is_loaded_into(lacking):
    name, folder = lacking
    library = folder / f"lib{PROFILER}.so"
    if not library.exists():
        pytest.skip("perfatlas-ipm is built only where CMake finds MPI")
    done = subprocess.run(
        ["sh", "-c", "echo ran"],
        env=dict(os.environ, LD_PRELOAD=str(library)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "ran" not in done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"lib{PROFILER}.so: this CPU (")
    assert name in line.split(" lacks ")[1].split(", which")[0].split(", ")


def bin_dir_with(tmp_path: Path, executable: Path) -> Path:
    """The installed executables, but pa-mem-latency replaced by `executable`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for installed in bin_dir().iterdir():
        if installed.name != "pa-mem-latency":
            (folder / installed.name).symlink_to(installed)
    (folder / "pa-mem-latency").symlink_to(executable)
    return folder


def test_perfatlas_passes_the_refusal_through(lacking, cli, tmp_path, monkeypatch):
    name, folder = lacking
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(bin_dir_with(tmp_path, folder / "pa-mem-latency")))
    result = cli("measure", "mem.latency", "bytes=64KiB", "samples=1")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert line.startswith("perfatlas: pa-mem-latency: this CPU (")
    assert name in line.split(" lacks ")[1].split(", which")[0].split(", ")


def test_a_portable_x86_64_v2_build_runs_and_says_what_it_was_built_for(tmp_path):
    folder = build(tmp_path, "-DPERFATLAS_ARCH=x86-64-v2")
    done = subprocess.run(
        [str(folder / "pa-mem-latency"), "bytes=64KiB", "samples=3", "min_sample_time=1ms"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["build"]["arch"] == "x86-64-v2"
    assert document["build"]["cflags"] == "-O3 -march=x86-64-v2"
    isa = document["build"]["isa"]
    assert {"sse4.2", "popcnt", "ssse3"} <= set(isa) and not {"avx", "avx2", "avx512f"} & set(isa)
    assert all(v > 0 for v in document["samples"]["latency_ns"])
    # The choice stays with the build folder, like any CMake option: a reconfiguration (after a
    # change to a CMakeLists.txt) keeps it.
    again = subprocess.run(
        ["cmake", str(tmp_path)], check=True, capture_output=True, text=True, timeout=300
    )
    assert "perfatlas: native code built for x86-64-v2: -march=x86-64-v2" in again.stdout


def test_the_installed_build_records_its_arch_in_every_document_and_doctor(cli):
    document = run_json("pa-mem-latency", ["bytes=16KiB", "samples=1", "min_sample_time=1ms"])
    build_block = document["build"]
    assert build_block["arch"] and build_block["cflags"].startswith("-O3 -march=")
    assert isinstance(build_block["isa"], list) and all(build_block["isa"])
    topology = run_json("pa-topology", [])
    assert topology["build"] == build_block
    doctor = cli("doctor")
    assert doctor.code == 0
    assert "native build" in doctor.out and f"built for {build_block['arch']}" in " ".join(
        doctor.out.split()
    )


def test_the_installed_executables_check_only_extensions_this_cpu_has():
    """What the guard compares: every extension of the build is one this CPU reports."""
    have = cpu_flags()
    build_block = run_json("pa-topology", [])["build"]
    isa = build_block["isa"]
    if build_block["arch"].startswith("native"):
        assert isa, "a native build on x86-64 uses at least SSE3"
    for name in isa:
        assert cpuinfo_flag(name) in have, name


def test_a_sigill_says_to_rebuild_for_this_cpu(cli, tmp_path, monkeypatch):
    crashing = tmp_path / "crashing"
    real = bin_dir() / "pa-mem-latency"  # its parameters still answered (--params)
    crashing.write_text(f'#!/bin/sh\n[ "$1" = --params ] && exec {real} --params\nkill -ILL $$\n')
    crashing.chmod(0o755)
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(bin_dir_with(tmp_path, crashing)))
    result = cli("measure", "mem.latency", "bytes=64KiB", "samples=1")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert line.startswith("perfatlas: pa-mem-latency was killed by SIGILL: it ran an instruction")
    assert f"this CPU ({cpu_model()})" in line and "PERFATLAS_ARCH=x86-64-v2" in line


def test_make_passes_the_named_arch_to_the_build():
    if not shutil.which("make"):
        pytest.skip("no make")
    env = dict(os.environ, MAKEFLAGS="")

    def dry_run(*words: str) -> str:
        done = subprocess.run(
            ["make", "-n", "-C", str(ROOT), "install", *words],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return next(line for line in done.stdout.splitlines() if "--no-build-isolation" in line)

    assert "-C cmake.define.PERFATLAS_ARCH=x86-64-v3 " in dry_run("PERFATLAS_ARCH=x86-64-v3")
    assert "-C cmake.define.PERFATLAS_ARCH=native " in dry_run()  # always passed: native
    flags = dry_run("PERFATLAS_ARCH_FLAGS=-march=haswell -mno-avx2")
    assert "PERFATLAS_ARCH= " in flags and "PERFATLAS_ARCH_FLAGS=-march=haswell -mno-avx2" in flags


def test_a_rank_killed_by_sigill_says_to_rebuild_for_its_host():
    from perfatlas.launch.launchers import Launch, get_launcher

    launch = Launch("mpirun", ["mpirun", "-np", "2", "pa-comm-pingpong"])
    crashed = (
        "mpirun noticed that process rank 1 with PID 4242 on node cn07 exited on signal 4 "
        "(Illegal instruction).\n"
    )
    why = get_launcher("mpirun").failure(launch, "pa-comm-pingpong", 132, crashed)
    assert why.startswith("rank 1 of pa-comm-pingpong crashed on host cn07 (signal 4, ")
    assert "an instruction the CPU of its host does not have" in why
    assert "PERFATLAS_ARCH=x86-64-v2" in why and why.endswith("pa-comm-pingpong")
    segv = crashed.replace("signal 4 (Illegal instruction)", "signal 11 (Segmentation fault)")
    assert "rebuild" not in get_launcher("mpirun").failure(launch, "pa-comm-pingpong", 139, segv)


def test_the_installed_build_on_an_older_emulated_cpu_refuses_and_names_it():
    """The real case: this machine's build run on an older CPU (QEMU user mode, which emulates
    neither AVX-512 nor, with -cpu Nehalem, AVX), as on older compute nodes."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("qemu-x86_64 (Debian package qemu-user) is not installed")
    build_block = run_json("pa-topology", [])["build"]
    if not {"avx", "avx2", "avx512f"} & set(build_block["isa"]):
        pytest.skip(f"this build ({build_block['arch']}) uses no AVX: a Nehalem runs it")
    done = subprocess.run(
        [qemu, "-cpu", "Nehalem", str(bin_dir() / "pa-mem-latency"), "bytes=16KiB"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = [x for x in done.stderr.splitlines() if not x.startswith("qemu-x86_64: warning")]
    match = REFUSAL.fullmatch(line)
    assert match, line
    assert match["cpu"].startswith("Intel Core i7 9xx (Nehalem")  # QEMU's CPUID brand string
    assert "avx" in match["missing"].split(", ") and match["level"] == "x86-64-v2"
    assert match["flags"].startswith(build_block["cflags"].removeprefix("-O3 "))
