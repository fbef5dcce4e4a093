"""The executors without a cluster: the registry the command line picks from, the one place a
launch is prepared, the import graph (the runner is imported by nothing that it runs), hosts that
do not answer, and the import of runs a node measured."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import perfatlas
from perfatlas.benchmarks import get
from perfatlas.benchmarks.prepare_launch import prepare_launch
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.launch.native import executable
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.run.executor import executor_for, executor_names, get_executor
from perfatlas.store.database import Store
from perfatlas.store.run_import import import_runs, newest_run, snapshot

A_WARNING = WarningRecord(Kind.LEGACY, "a warning", "its fix")

PACKAGE = Path(perfatlas.__file__).resolve().parent


def test_the_launcher_word_picks_the_executor_and_unknown_names_are_one_sentence():
    assert executor_names() == ["hosts", "local", "slurm"]
    picked = {word: executor_for(LaunchOptions(launcher=word)).name for word in (None, "local")}
    assert picked == {None: "local", "local": "local"}
    assert executor_for(LaunchOptions(launcher="mpirun")).name == "hosts"
    assert executor_for(LaunchOptions(launcher="slurm")).name == "slurm"
    hosts = executor_for(LaunchOptions(("--bind-to", "none"), launcher="mpirun"))
    assert hosts.options.mpirun_args == ("--bind-to", "none")  # handed in, not read globally
    with pytest.raises(
        perfatlas.common.errors.UserError, match="unknown executor 'pbs'; known: hosts"
    ):
        get_executor("pbs")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


@pytest.mark.parametrize("package", ["cluster", "executors"])
def test_nothing_the_runner_hands_work_to_imports_the_runner(package):
    for path in sorted((PACKAGE / package).glob("*.py")):
        assert "perfatlas.run.runner" not in _imports(path), f"{path.name} imports the runner"


def test_no_launch_setting_travels_in_a_context_variable():
    for path in PACKAGE.rglob("*.py"):
        assert "contextvars" not in path.read_text(), f"{path.relative_to(PACKAGE)}"


def test_one_preparation_applies_binding_and_memory_policy_for_every_executor():
    """What a sweep point asks of a benchmark that does not place its threads itself
    (app.spsolve: OpenMP and OpenBLAS threads): OMP binding and numactl, here and on a node."""
    if shutil.which("numactl") is None:
        pytest.skip("numactl is not installed")
    machine = Machine.detect()
    benchmark = get("app.spsolve")
    params = benchmark.resolve({"solver": "cholmod", "problem": "laplace2d", "n": "32"}, machine)
    placement = Placement("spread", "interleave")
    for launcher in (None, "local"):  # local executor, and the per-node command of hosts/slurm
        launch, used = prepare_launch(
            benchmark, params, machine, LaunchOptions(), placement, launcher
        )
        assert used.name == "local"
        assert launch.env["OMP_PROC_BIND"] == "spread" and launch.env["OMP_PLACES"] == "cores"
        at = launch.argv.index(str(executable("pa-spsolve")))
        assert launch.argv[at - 2 : at] == [shutil.which("numactl"), "--interleave=all"]


def test_a_hostfile_host_that_does_not_answer_stops_before_a_run_is_opened(cli, tmp_path):
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("perfatlas-no-such-host slots=1\n")
    result = cli(
        "measure", "mem.latency", "bytes=16KiB", "--launcher", "mpirun",
        "--hostfile", str(hostfile),
    )  # fmt: skip
    assert result.code == 2
    assert result.err.startswith(
        "perfatlas: mpirun cannot start a process on every host (perfatlas-no-such-host did "
        "not answer): "
    )
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert not cli.db.exists() or Store(cli.db).runs() == []


def _stored_run(store: Store, host_document: dict) -> int:
    machine = Machine.detect()
    run_id = store.start_run(
        fingerprint=machine.fingerprint,
        topology=machine.topology,
        context={},
        suite="scenario short",
        argv=["perfatlas"],
        software={},
    )
    store.add_document(run_id, host_document, [A_WARNING])
    store.add_scenario(run_id, "scenario", "short", {"cpus": [0]}, [_job_row()])
    store.finish_run(run_id, "complete")
    return run_id


def _job_row() -> dict:
    return {
        "job": "seq#1", "threads": 1, "start_s": 0.0, "end_s": 1.0, "wall_s": 1.0,
        "dedicated_s": 0.9, "user_s": 0.9, "system_s": 0.01, "waiting_s": 0.1, "migrations": 2,
    }  # fmt: skip


def test_runs_a_node_stored_come_back_whole_and_only_the_new_ones(tmp_path):
    document = {
        "schema": "perfatlas.result/1",
        "benchmark": "scenario.job",
        "params": {"scenario": "short", "job": "seq#1", "threads": 1},
        "samples": {"wall_s": [1.0]},
        "units": {"wall_s": "s"},
    }
    front = Store(tmp_path / "front.db")
    old = _stored_run(front, document)
    snapshot(front, tmp_path / "copy.db")
    node = Store(tmp_path / "copy.db")
    new = _stored_run(node, document)
    node.db.execute("UPDATE runs SET host = 'pa1' WHERE id = ?", (new,))
    node.db.commit()
    node.close()
    [imported] = import_runs(tmp_path / "copy.db", front, after=old)
    assert imported == newest_run(front) == old + 1
    run = front.run(imported)
    assert run["host"] == "pa1" and run["status"] == "complete" and run["suite"] == "scenario short"
    [result] = front.results(imported)
    assert result.samples == [1.0] and result.warnings == [A_WARNING]
    [scenario] = front.scenarios(imported)
    assert scenario["cpus"] == [0] and scenario["jobs"][0]["migrations"] == 2
