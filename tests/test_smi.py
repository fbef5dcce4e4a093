"""libpa-smi (native/smi): every operation's exact result, the mutex's mutual exclusion and every
bad call's code and sentence at np = 1, 2, 4, node-aware and RMA only (pa-smi-exact, under
Open MPI, and under MPICH through make test-mpich); the same across the netns-cluster hosts,
where a node's shared window cannot reach the other host; and the guide's example program,
compiled here by the MPI's own compiler wrapper against the installed header and library."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from mpi_helpers import mpirun
from netns_hosts import hosts_lock, hosts_unavailable, hosts_up

from perfatlas.launch.launchers import detect_flavour
from perfatlas.launch.native import bin_dir, executable

ROOT = Path(__file__).resolve().parents[1]
TOOL = Path(
    os.environ.get(
        "PERFATLAS_NETNS_CLUSTER",
        Path(__file__).resolve().parents[2] / "shared" / "tools" / "netns-cluster",
    )
)


def exact(
    launcher: list[str], *words: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    argv = [*launcher, str(executable("pa-smi-exact")), *words]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=180, env={**os.environ, **(env or {})}
    )


def passed(done: subprocess.CompletedProcess, mode: str, np_: int) -> str:
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    line = [s for s in done.stdout.splitlines() if "checks passed" in s]
    assert line and f"({mode}, " in line[0] and f"np={np_}," in line[0], done.stdout
    return line[0]


# The sentences of the bad calls, as pa-smi-exact's rank 0 prints them.
SAID = [
    "pa_smi_get: element 10 is outside the region of 10 elements",
    "pa_smi_get_block: elements 8 .. 10 are outside the region of 10 elements",
    "pa_smi_release: the region is not replicated: a release needs a pa_smi_replicate before it",
    "pa_smi_combine: the copies are combined as double but the region holds int64",
    "pa_smi_free: the region is in use: it is replicated on this process (pa_smi_release or "
    "pa_smi_combine first)",
    "pa_smi_create: the partition must start at 0 and end at n = 10 (first[0] = 0, "
    "first[{np}] = 9)",
    "pa_smi_mutex_unlock: this process does not hold the mutex",
]


def all_passed(done: subprocess.CompletedProcess, np_: int) -> str:
    """Operations, mutex and bad calls passed; each bad call's sentence said."""
    line = passed(done, "all", np_)
    said = {line.removeprefix("pa-smi-exact: said: ") for line in done.stdout.splitlines()}
    for sentence in SAID:
        assert sentence.format(np=np_) in said, done.stdout
    return line


@pytest.mark.parametrize("np_", [1, 2, 4])
@pytest.mark.parametrize("path", ["node-aware", "rma"])
def test_every_operation_is_exact_the_mutex_excludes_and_bad_calls_say_so(np_, path):
    words = ["rma"] if path == "rma" else []
    line = all_passed(exact(mpirun(np_), *words), np_)
    assert ("rma only" if path == "rma" else "node-aware") in line
    assert "4-byte record offsets" in line  # parts of fewer than 2^32 elements


def test_combine_records_with_wide_offsets_are_exact_too():
    """Parts of fewer than 2^32 elements send 4-byte offsets in combine's records (12 bytes a
    double: the test above); larger parts 8-byte ones, forced here by
    PA_SMI_RECORD_OFFSET_BYTES=8 (a part of 2^32 elements is 16 GiB): the same exact results."""
    env = {"PA_SMI_RECORD_OFFSET_BYTES": "8"}
    wide = passed(exact(mpirun(4), "operations", env=env), "operations", 4)
    assert "8-byte record offsets" in wide


def test_an_unknown_mode_is_one_sentence_and_status_2():
    done = exact(mpirun(1), "combine")
    assert done.returncode == 2
    assert "pa-smi-exact: mode 'combine' is not one of all, operations, mutex, bad" in done.stderr


def mpicc() -> str:
    """The compiler wrapper of the launcher's MPI (make test-mpich: MPICH's)."""
    launcher = shutil.which(os.environ.get("PERFATLAS_MPIRUN") or "mpirun") or "mpirun"
    name = "mpicc.mpich" if detect_flavour(launcher).family == "mpich" else "mpicc"
    if not shutil.which(name):
        pytest.skip(f"{name} is not installed")
    return name


def test_the_guides_example_builds_against_the_installed_library_and_runs(tmp_path):
    library = bin_dir()
    assert (library / "pa_smi.h").is_file() and (library / "libpa-smi.so").is_file()
    program = tmp_path / "smi_example"
    source = ROOT / "native" / "smi" / "example" / "smi_example.c"
    build = [mpicc(), str(source), "-I", str(library), "-L", str(library), "-lpa-smi"]
    build += [f"-Wl,-rpath,{library}", "-o", str(program)]
    compiled = subprocess.run(build, capture_output=True, text=True, timeout=120)
    assert compiled.returncode == 0, compiled.stderr
    done = subprocess.run([*mpirun(3), str(program)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "sum of x read through the copy: 499500 (expected 499500)" in out
    assert "bins: 100 100 100 100 100 100 100 100 100 100 (expected 100 each)" in out
    assert "bin 0 after every rank added its rank: 103 (expected 103)" in out
    assert "a bad call returned 3: pa_smi_release: the region is not replicated" in out


# -- across hosts ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    """Hosts pa1, pa2 (../shared/tools/netns-cluster): Open MPI's mpirun arguments, with the
    osc components that work over TCP (sm for each host's shared window, pt2pt for RMA)."""
    why = hosts_unavailable(TOOL)
    if why:
        pytest.skip(why)
    if os.environ.get("PERFATLAS_MPIRUN"):
        pytest.skip("the netns hosts are launched by Open MPI's rsh agent")
    folder = tmp_path_factory.mktemp("hosts")
    with hosts_lock():
        try:
            hosts_up(TOOL, 2, folder)
            args = shlex.split((folder / "mpirun-args").read_text())
            yield [*args, "--map-by", "node", "--mca", "osc", "sm,pt2pt"]
        finally:
            subprocess.run([str(TOOL), "down", str(folder)], capture_output=True, timeout=120)


def test_across_hosts_other_nodes_go_through_rma(two_hosts):
    """Four node-aware processes, two per host: each host's pair by loads and stores, the other
    host by RMA; pa-smi-exact checks which path each part took. Small sizes (n=9, 3 critical
    sections each): every element operation crosses TCP."""
    line = all_passed(exact([*mpirun(4), *two_hosts], "n=9", "rounds=3"), 4)
    assert "node-aware" in line and "several nodes" in line


def test_the_guide_shows_the_example_program_itself():
    guide = (ROOT / "docs" / "guide" / "smi.md").read_text()
    source = (ROOT / "native" / "smi" / "example" / "smi_example.c").read_text()
    assert f"```c\n{source}```" in guide
