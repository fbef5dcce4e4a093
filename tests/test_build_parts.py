"""Builds that lack optional parts (docs/install.md): a real CMake build without MPI stores the
MPI benchmarks as "not built here" and doctor says so; a build that cannot be made says why in
one sentence (no C compiler, an MPI wrapper that does not work) and installs nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from native_build import ROOT, build

from perfatlas.launch.build_parts import FILE, SCHEMA, build_parts, not_built
from perfatlas.launch.native import bin_dir
from perfatlas.store.database import Store


@pytest.fixture(scope="module")
def without_mpi(tmp_path_factory) -> Path:
    """pa-topology and pa-mem-latency of a build configured with PERFATLAS_MPI=OFF."""
    folder = tmp_path_factory.mktemp("no-mpi") / "build"
    return build(folder, "-DPERFATLAS_MPI=OFF", targets=("pa-topology", "pa-mem-latency"))


def test_the_installed_build_lists_its_parts():
    parts = build_parts()
    assert parts is not None and {"MPI", "CHOLMOD", "MUMPS", "ScaLAPACK", "PAPI"} <= set(parts)
    document = json.loads((bin_dir() / FILE).read_text())
    assert document["schema"] == SCHEMA
    mpi = parts["MPI"]
    assert mpi.built and ("Open MPI" in mpi.text or "MPICH" in mpi.text)
    if mpi.text.startswith("MPICH"):  # make test-mpich: Debian builds these for Open MPI only
        for name in ("MUMPS", "ScaLAPACK"):
            assert (parts[name].built, parts[name].text) == (
                False,
                f"the MPI of this build is MPICH, and Debian's {name} is built for Open MPI",
            )


def test_a_build_without_mpi_stores_the_mpi_benchmarks_as_not_built(cli, monkeypatch, without_mpi):
    parts = json.loads((without_mpi / FILE).read_text())["parts"]
    assert parts["MPI"] == {"built": False, "why": "switched off at build time (PERFATLAS_MPI=OFF)"}
    assert parts["MUMPS"] == parts["ScaLAPACK"] == {"built": False, "why": "this build has no MPI"}
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(without_mpi))
    assert (
        not_built(("MPI",)) == "not built here: MPI: switched off at build time (PERFATLAS_MPI=OFF)"
    )
    result = cli("measure", "comm.pingpong", "np=2")
    assert result.code == 0, result.err
    stored = Store(cli.db).results(Store(cli.db).resolve_run("last"))
    assert stored and {r.not_measurable for r in stored} == {
        "not built here: MPI: switched off at build time (PERFATLAS_MPI=OFF)"
    }
    assert "not built here: MPI" in result.out
    assert cli("measure", "mem.latency", "bytes=16KiB", "samples=3").code == 0  # the rest runs


def test_doctor_lists_what_was_built_and_what_was_not(monkeypatch, without_mpi):
    from perfatlas.cli.doctor import LIMITED, OK, build_part_checks

    checks = {c.name: c for c in build_part_checks()}
    assert checks["built with MPI"].status == OK
    assert "comm.pingpong" in checks["built with MPI"].detail
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(without_mpi))
    checks = {c.name: c for c in build_part_checks()}
    mpi = checks["built with MPI"]
    assert mpi.status == LIMITED
    assert mpi.detail.startswith("no: switched off at build time (PERFATLAS_MPI=OFF); stored as")
    assert "app.sweep" in mpi.detail and "comm.allreduce" in mpi.detail


def test_a_damaged_list_of_parts_is_one_sentence(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / FILE).write_text('{"schema": "perfatlas.build/1", "parts": {"MPI": {}}}')
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(folder))
    from perfatlas.common.errors import UserError

    with pytest.raises(UserError, match=rf"^{folder / FILE} is damaged \('built'\); rebuild"):
        build_parts()


def configure(folder: Path, *defines: str, env: dict[str, str] | None = None):
    return subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(folder), "-G", "Ninja", *defines],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def said(done: subprocess.CompletedProcess) -> str:
    """The build's own sentence, unwrapped from CMake's error block."""
    text = done.stdout + done.stderr
    block = text[text.index("  perfatlas: ") :].split("\n\n")[0]
    return " ".join(block.split())


def test_an_mpi_wrapper_that_does_not_work_is_one_sentence(tmp_path):
    done = configure(tmp_path / "build", "-DMPI_C_COMPILER=/bin/false")
    assert done.returncode != 0
    assert said(done) == (
        "perfatlas: the MPI compiler wrapper MPI_C_COMPILER=/bin/false does not work (try it: "
        "/bin/false -show); name a working one, or build without the MPI benchmarks and the "
        "profiler with PERFATLAS_MPI=OFF"
    )


def test_no_hwloc_is_one_sentence(tmp_path):
    done = configure(tmp_path / "build", env={"PKG_CONFIG_LIBDIR": str(tmp_path)})
    assert done.returncode != 0
    assert said(done) == (
        "perfatlas: hwloc was not found: install it (apt-get install libhwloc-dev; on a "
        "cluster: module load hwloc) or add its lib/pkgconfig to PKG_CONFIG_PATH"
    )


def test_no_c_compiler_is_one_sentence(tmp_path):
    done = configure(tmp_path / "build", env={"CC": str(tmp_path / "no-such-cc")})
    assert done.returncode != 0
    assert said(done).startswith("perfatlas: no C compiler was found: install one")


def test_a_failed_make_install_says_why_and_leaves_the_install_as_it_was(tmp_path):
    """make install through pip with an MPI wrapper that does not work (CMAKE_ARGS, as a site
    would name its own): the build's sentence, status 2, and the installed package untouched."""
    installed = bin_dir() / FILE
    before = (installed.read_bytes(), installed.stat().st_mtime_ns)
    done = subprocess.run(
        ["make", "--no-print-directory", "install", "NO_APT=1", f"BUILD_LOG={tmp_path}/log"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "CMAKE_ARGS": "-DMPI_C_COMPILER=/bin/false",
            "SKBUILD_BUILD_DIR": str(tmp_path / "build"),  # not the checkout's build folder
        },
    )
    assert done.returncode == 2, done.stdout + done.stderr
    [sentence] = [line for line in done.stderr.splitlines() if line.startswith("make: the build")]
    assert sentence.startswith(
        "make: the build failed: perfatlas: the MPI compiler wrapper MPI_C_COMPILER=/bin/false "
        "does not work"
    )
    assert sentence.endswith(f"({tmp_path}/log)")
    assert (installed.read_bytes(), installed.stat().st_mtime_ns) == before
