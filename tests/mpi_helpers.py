"""The MPI launcher the test files start their ranks with, and the sentence a program says
among its launcher's banners."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from perfatlas.launch.launchers import detect_flavour


def mpirun(np_: int) -> list[str]:
    """The launcher for np_ ranks: Open MPI's mpirun (root permission, oversubscribed: 2 cores
    here), or the launcher of $PERFATLAS_MPIRUN (make test-mpich: hydra's mpiexec)."""
    launcher = shutil.which(os.environ.get("PERFATLAS_MPIRUN") or "mpirun")
    if launcher is None:
        pytest.skip("no mpirun")
    family = detect_flavour(launcher).family
    if family == "openmpi":
        return [launcher, "--allow-run-as-root", "--oversubscribe", "-np", str(np_)]
    return [launcher, "-n" if family == "mpich" else "-np", str(np_)]


def own_sentence(done: subprocess.CompletedProcess, program: str) -> str:
    """The program's own sentence on stderr ("pa-x: ..."; mpirun adds its banners around it)."""
    own = [line for line in done.stderr.splitlines() if line.startswith(f"{program}: ")]
    assert own, done.stderr
    return own[0]
