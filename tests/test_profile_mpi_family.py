"""`perfatlas profile` of a program of the other MPI of a Debian machine (MPICH beside Open MPI):
it gets the profiler built for that MPI (bin/mpich/ or bin/openmpi/), and its counts are exact;
where the build has none, the run is refused before it starts, in one sentence."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from native_build import partial_bin

from perfatlas.launch.build_parts import build_parts, mpi_family
from perfatlas.store.database import Store

# The other family's compiler wrapper, launcher and name, by the build's own family.
OTHER = {
    "openmpi": ("mpich", "mpicc.mpich", ["mpiexec.mpich", "-n", "2"], "MPICH"),
    "mpich": (
        "openmpi",
        "mpicc.openmpi",
        ["mpirun.openmpi", "-np", "2", "--oversubscribe", "--allow-run-as-root"],
        "Open MPI",
    ),
}
HELLO = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Send(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture
def other(tmp_path) -> tuple[str, Path, list[str], str]:
    """(family, a hello program built with that family's mpicc, its launcher, its name)."""
    family, wrapper, launcher, name = OTHER.get(mpi_family() or "", (None, None, None, None))
    if family is None or not (shutil.which(wrapper) and shutil.which(launcher[0])):
        pytest.skip(f"no second MPI beside this build's ({mpi_family()}): {wrapper} missing")
    source = tmp_path / "hello.c"
    source.write_text(HELLO)
    program = tmp_path / "hello"
    subprocess.run([wrapper, "-o", str(program), str(source)], check=True, timeout=120)
    return family, program, launcher, name


def test_a_program_of_the_other_mpi_gets_its_own_profiler(cli, tmp_path, other):
    family, program, launcher, name = other
    assert build_parts()[f"profiler for {name}"].built
    result = cli("profile", "--out", str(tmp_path / "out"), "--", *launcher, str(program))
    assert result.code == 0, result.err
    (stored,) = Store(cli.db).profiles(1)
    calls = {c["call"]: c for c in stored["document"]["calls"] if c["region"] == 0}
    assert calls["MPI_Barrier"]["count"] == 2 * 3
    assert (calls["MPI_Send"]["count"], calls["MPI_Send"]["bytes"]) == (1, 4)
    assert (calls["MPI_Recv"]["count"], calls["MPI_Recv"]["bytes"]) == (1, 4)


def test_without_a_profiler_for_that_mpi_the_run_is_refused_first(
    cli, tmp_path, monkeypatch, other
):
    family, program, launcher, name = other
    bin_folder = partial_bin(tmp_path / "bin", {f"profiler for {name}": (family,)})
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(bin_folder))
    out = tmp_path / "out"
    result = cli("profile", "--out", str(out), "--", *launcher, str(program))
    assert result.code == 2
    own = {"openmpi": "Open MPI", "mpich": "MPICH"}[mpi_family()]
    assert result.err == (
        f"perfatlas: this launcher starts {name} programs, and this perfatlas-ipm is built for "
        f"{own} alone (its ranks would load two MPI libraries and abort); rebuild where that "
        f"MPI's compiler wrapper mpicc.{family} is found, or with it as the build's MPI "
        "(docs/install.md)\n"
    )
    assert not out.exists() and not Store(cli.db).runs()  # refused before it started
