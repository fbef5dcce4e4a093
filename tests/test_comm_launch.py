"""Launching MPI benchmarks (perfatlas.launch.launchers): the mpirun command line, options passed
through, and bad input — a pattern that does not fit np, MPI missing, mpirun failing, a rank
crashing — as one sentence, exit status 2, with earlier results kept."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3

import pytest

from perfatlas.common.units import format_cpu_list
from perfatlas.launch.launchers import LaunchOptions, MpirunLauncher, detect_flavour
from perfatlas.launch.native import bin_dir
from perfatlas.machine.topology import Machine

# the launcher under test: mpirun, or another MPI's (make test-mpich sets PERFATLAS_MPIRUN)
MPIRUN = os.environ.get("PERFATLAS_MPIRUN", "mpirun")

FAST = ["samples=3", "min_sample_time=200us", "time_limit=300ms", "warmup=2"]
MEM = ["mem.latency", "bytes=64KiB", "samples=3", "min_sample_time=1ms"]


def count_results(db) -> int:
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM results").fetchone()[0]


def one_sentence(result) -> str:
    lines = result.err.strip().splitlines()
    assert result.code == 2 and len(lines) == 1 and lines[0].startswith("perfatlas: "), result.err
    return lines[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["comm.complement", "np=3"], r"np=3 is odd: the complement pattern pairs rank i"),
        (["comm.pingpong", "np=1"], r"np=1 is too few: a ping-pong needs two ranks"),
        (["comm.hotspot", "np=4", "max_senders=4"], r"max_senders=4 needs np of at least 5"),
        (["comm.pingpong", "np=2", "peer=2"], r"peer=2 is not a rank of np=2"),
        (["comm.allreduce", "np=2", "min_bytes=12", "max_bytes=64"], r"multiple of 8"),
        (["comm.rma", "np=2", "cases=two_same_node"], r"needs np of at least 3"),
        (["comm.barrier", "np=many"], r"np='many' is not a whole number"),
        (["comm.distance", "np=500"], r"give a hostfile"),
    ],
)
def test_a_pattern_that_does_not_fit_np_is_one_sentence(cli, args, message):
    assert cli("measure", *MEM).code == 0
    before = count_results(cli.db)
    line = one_sentence(cli("measure", *args))
    assert re.search(message, line), line
    assert count_results(cli.db) == before


def test_missing_mpirun_says_mpi_is_missing(cli, tmp_path, monkeypatch):
    assert cli("measure", *MEM).code == 0
    monkeypatch.setenv("PATH", str(tmp_path))  # no mpirun anywhere
    line = one_sentence(cli("measure", "comm.pingpong", "np=2", *FAST))
    assert "MPI is missing: install openmpi-bin libopenmpi-dev (or mpich)" in line
    assert count_results(cli.db) == 1


def fake_bin(tmp_path, monkeypatch, pingpong: str | None = None):
    """A bin dir with the real pa-topology and, optionally, a fake pa-comm-pingpong script."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("pa-topology", "pa-mem-latency"):
        (folder / name).symlink_to(bin_dir() / name)
    if pingpong is not None:  # it answers --params as the real one (docs/contract.md)
        script = folder / "pa-comm-pingpong"
        real = bin_dir() / "pa-comm-pingpong"
        shebang, body = pingpong.split("\n", 1)
        script.write_text(f'{shebang}\n[ "$1" = --params ] && exec {real} --params\n{body}')
        script.chmod(0o755)
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(folder))


def test_perfatlas_built_without_mpi_says_mpi_is_missing(cli, tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch)
    line = one_sentence(cli("measure", "comm.pingpong", "np=2", *FAST))
    assert "MPI is missing" in line and "built without MPI" in line


def test_a_crashing_rank_is_one_sentence_and_earlier_results_stay(cli, tmp_path, monkeypatch):
    rank = "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
    fake_bin(tmp_path, monkeypatch, f'#!/bin/sh\n[ "{rank}" = 1 ] && kill -SEGV $$\nsleep 10\n')
    assert cli("measure", *MEM).code == 0
    line = one_sentence(cli("measure", "comm.pingpong", "np=2", *FAST))
    # mpirun names the rank when it reports in time, else relays the signal in its exit status
    crashed = r"(rank 1 of pa-comm-pingpong|a rank of pa-comm-pingpong) crashed( on host \S+)?"
    assert re.search(crashed + r" \(signal 11", line), line
    assert count_results(cli.db) == 1


def test_a_failing_mpirun_is_one_sentence_with_its_reason(cli):
    assert cli("measure", *MEM).code == 0
    result = cli("measure", "comm.pingpong", "np=2", *FAST, "--mpirun-args", "--no-such-option")
    line = one_sentence(result)
    assert line.startswith("perfatlas: mpirun failed (exit status") and "no-such-option" in line
    assert count_results(cli.db) == 1


def test_a_suite_stops_at_a_failing_mpi_step_and_keeps_what_finished(cli, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[[step]]\nbenchmark = "mem.latency"\nbytes = "64KiB"\nsamples = 3\n'
        'min_sample_time = "1ms"\n\n[[step]]\nbenchmark = "comm.pingpong"\nnp = 2\n'
        "samples = 3\n"
    )
    result = cli("run", str(suite), "--out", str(tmp_path), "--mpirun-args", "--no-such-option")
    assert result.code == 2 and "mpirun failed" in result.err.strip().splitlines()[-1]
    status, kept = (
        sqlite3.connect(cli.db)
        .execute("SELECT status, (SELECT COUNT(*) FROM results) FROM runs")
        .fetchone()
    )
    assert status == "failed" and kept == 1


def test_mpirun_args_pass_through_and_the_binding_is_read_back(cli, tmp_path, read_json):
    out = tmp_path / "pp.json"
    result = cli(
        "measure", "comm.pingpong", "np=2", "max_bytes=8", *FAST,
        "--mpirun-args", "--bind-to none", "--json", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    doc = read_json(out)[-1]
    assert "--bind-to none" in doc["launch"]["command"]
    unbound = format_cpu_list(sorted(os.sched_getaffinity(0)))  # what mpirun may use
    assert [rank["cpus_allowed"] for rank in doc["placement"]["ranks"]] == [unbound, unbound]


# -- the mpirun command line ----------------------------------------------------------------------
@pytest.fixture
def machine() -> Machine:
    return Machine.detect()


def prepare(machine, np_: int, options: LaunchOptions | None = None):
    return MpirunLauncher().prepare(
        bin_dir() / "pa-comm-pingpong",
        ["samples=3"],
        {"np": np_},
        machine,
        options or LaunchOptions(),
    )


def test_the_command_puts_extra_arguments_before_the_executable(machine):
    launch = prepare(machine, 2, LaunchOptions(("--bind-to", "none", "--mca", "btl", "self,vader")))
    argv = launch.argv
    exe = argv.index(str(bin_dir() / "pa-comm-pingpong"))
    assert argv[1:3] in (["-np", "2"], ["-n", "2"]) and argv[exe + 1 :] == ["samples=3"]
    assert argv[exe - 5 : exe] == ["--bind-to", "none", "--mca", "btl", "self,vader"]
    assert launch.record()["command"].split()[0].endswith(os.path.basename(MPIRUN))


def test_open_mpi_gets_oversubscribe_beyond_the_cores_and_root_permission(machine):
    if detect_flavour(shutil.which(MPIRUN)).family != "openmpi":
        pytest.skip("Open MPI is not the mpirun here")
    cores = machine.topology["cores"]
    launch = prepare(machine, cores + 2)
    assert "--oversubscribe" in launch.argv
    assert any(f"np={cores + 2} exceeds the {cores} cores" in n for n in launch.notes)
    assert "--oversubscribe" not in prepare(machine, 1).argv
    named = prepare(machine, cores + 2, LaunchOptions(("--host", "a,b")))
    assert "--oversubscribe" not in named.argv  # hosts named: slots are the user's business
    if os.geteuid() == 0:
        assert "--allow-run-as-root" in launch.argv


def test_open_mpi_gives_a_rank_of_threads_that_many_cores(machine):
    """Open MPI binds a rank to one core by default: a rank of 2 OpenMP threads gets 2 cores
    (--map-by slot:PE=2), none where np x threads exceeds the cores, and the user's own mapping
    is left alone."""
    if detect_flavour(shutil.which(MPIRUN)).family != "openmpi":
        pytest.skip("Open MPI is not the mpirun here")
    cores = machine.topology["cores"]

    def argv(np_: int, threads: int, extra: tuple[str, ...] = ()) -> list[str]:
        return MpirunLauncher().prepare(
            bin_dir() / "pa-spmv", [], {"np": np_, "threads": threads}, machine,
            LaunchOptions(extra),
        ).argv  # fmt: skip

    assert "--map-by" not in argv(1, 1) and "--bind-to" not in argv(1, 1)
    if cores >= 2:
        assert argv(1, 2)[-3:-1] == ["--map-by", "slot:PE=2"]
    crowded = argv(1, cores + 1)
    assert crowded[-3:-1] == ["--bind-to", "none"]
    own = argv(1, 2, ("--bind-to", "core"))
    assert "--map-by" not in own and own.count("--bind-to") == 1


def test_the_environment_gives_mpirun_args_and_the_cli_overrides_them(monkeypatch):
    from perfatlas.cli.entry import build_parser
    from perfatlas.cli.options import launch_options

    monkeypatch.setenv("PERFATLAS_MPIRUN_ARGS", "--bind-to none --report-bindings")
    assert LaunchOptions.from_environment().mpirun_args == (
        "--bind-to",
        "none",
        "--report-bindings",
    )
    args = build_parser().parse_args(["measure", "comm.pingpong", "--mpirun-args=--map-by node"])
    assert launch_options(args).mpirun_args == ("--map-by", "node")
    args = build_parser().parse_args(["measure", "comm.pingpong"])
    assert launch_options(args).mpirun_args == ("--bind-to", "none", "--report-bindings")


def test_a_hanging_rank_is_stopped_after_the_launch_timeout(cli, tmp_path, monkeypatch):
    fake_bin(tmp_path, monkeypatch, "#!/bin/sh\nsleep 30\n")
    monkeypatch.setenv("PERFATLAS_LAUNCH_TIMEOUT", "2")
    line = one_sentence(cli("measure", "comm.pingpong", "np=2", *FAST))
    assert "did not finish within 2 s ($PERFATLAS_LAUNCH_TIMEOUT)" in line
