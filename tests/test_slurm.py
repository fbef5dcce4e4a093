"""Cluster execution for real: a three-node Slurm on this machine (../shared/tools/slurm-cluster:
slurmctld, one slurmd per network namespace pa1..pa3, munge), and the same hosts through mpirun
with a hostfile. One cluster serves the whole module; the tests without a cluster (rules, a node
that never writes, bad input) run everywhere."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from netns_hosts import hosts_lock, hosts_unavailable

import perfatlas
from perfatlas.benchmarks import get
from perfatlas.cluster.analysis_nodes import node_groups
from perfatlas.cluster.collect import collect
from perfatlas.cluster.job import batch_script, make_steps
from perfatlas.common.anomaly import is_remeasurement
from perfatlas.launch.launchers import LaunchOptions, SlurmOptions
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Planned
from perfatlas.store.database import Store
from perfatlas.store.result import Result

TOOLS = Path(__file__).resolve().parents[2] / "shared" / "tools"
TOOL = Path(os.environ.get("PERFATLAS_SLURM_CLUSTER", TOOLS / "slurm-cluster"))
LATENCY = ["bytes=16KiB", "samples=5", "min_sample_time=1ms"]
PINGPONG = ["max_bytes=64", "samples=5", "min_sample_time=1ms", "time_limit=1s", "warmup=20"]
SUITE = """
description = "three nodes and one link"
[[step]]
benchmark = "mem.latency"
bytes = "16KiB"
samples = 5
min_sample_time = "1ms"
[[step]]
benchmark = "noise"
duration = "0.2s"
[[step]]
benchmark = "comm.pingpong"
np = {np}
max_bytes = 64
samples = 5
min_sample_time = "1ms"
time_limit = "1s"
warmup = 20
"""
# What the cluster fixture sets for the module, and puts back after it.
SETTINGS = (
    "SLURM_CONF",
    "PERFATLAS_JOB_GRACE",
    "PERFATLAS_POLL_INTERVAL",
    "PERFATLAS_LAUNCH_TIMEOUT",
)
CANCELLED_SUITE = """
description = "cancelled while its second step runs"
[[step]]
benchmark = "mem.latency"
bytes = "16KiB"
samples = 5
min_sample_time = "1ms"
[[step]]
benchmark = "noise"
duration = "60s"
[[step]]
benchmark = "mem.latency"
bytes = "32KiB"
samples = 5
min_sample_time = "1ms"
"""


# -- the cluster ------------------------------------------------------------------------------
class Cluster:
    def __init__(self, folder: Path):
        self.folder = folder
        self.mpirun_args = (folder / "mpirun-args").read_text().strip()  # inside a job
        self.hostfile_args = (folder / "net" / "mpirun-args").read_text().strip()  # no Slurm


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """`slurm-cluster up 3` (it installs slurm-wlm and munge when missing); always taken down.

    The test hosts pa1..pa3 are global, as in test_comm_cluster.py: the same lock keeps the two
    modules from tearing down each other's hosts."""
    why = hosts_unavailable(TOOL)
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("slurm") / "cluster"
    saved = {k: os.environ.get(k) for k in SETTINGS}
    with hosts_lock():
        try:
            up = subprocess.run(
                [str(TOOL), "up", "3", str(folder)], capture_output=True, text=True, timeout=600
            )
            if up.returncode != 0:  # the tool's machine, not perfatlas (a chroot has no munged)
                said = (up.stderr + up.stdout).strip()[-300:] or f"status {up.returncode}"
                pytest.skip(f"the Slurm cluster of {TOOL.name} did not start here: {said}")
            os.environ["SLURM_CONF"] = re.search(r"SLURM_CONF=(\S+)", up.stdout).group(1)
            os.environ.update(
                PERFATLAS_JOB_GRACE="2",
                PERFATLAS_POLL_INTERVAL="0.3",
                PERFATLAS_LAUNCH_TIMEOUT="120",
            )
            yield Cluster(folder)
        finally:
            subprocess.run([str(TOOL), "down", str(folder)], capture_output=True, timeout=120)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def stored(db: Path, run: str = "last") -> tuple[dict, list[Result]]:
    store = Store(db)
    run_id = store.resolve_run(run)
    return store.run(run_id), store.results(run_id)


def hosts_of(results: list[Result], benchmark: str) -> list[str]:
    """The hosts of a benchmark's results, its re-measurements (perfatlas.run.remeasure_anomalies) left out."""
    return sorted(
        r.params["host"]
        for r in results
        if r.benchmark == benchmark and not is_remeasurement(r.document)
    )


# -- end to end through Slurm -----------------------------------------------------------------
def test_a_run_is_one_job_whose_steps_run_on_every_node_and_across_nodes(cli, slurm_cluster):
    suite = cli.db.parent / "nodes.toml"
    suite.write_text(SUITE.format(np=2))
    out = cli.db.parent / "out"
    result = cli(
        "run", str(suite), "--out", str(out), "--launcher", "slurm", "--nodes", "3",
        "--mpirun-args", slurm_cluster.mpirun_args,
    )  # fmt: skip
    assert result.code == 0, result.err
    run, results = stored(cli.db)
    assert run["status"] == "complete"
    # node-level: one result per node, the node read back on the node, never pooled
    assert hosts_of(results, "mem.latency") == ["pa1", "pa2", "pa3"]
    # MPI: rank 0 and rank 1 on two nodes, labelled from the placement the ranks report
    pingpong = [r for r in results if r.benchmark == "comm.pingpong"]
    assert pingpong and {r.document["placement"]["link"] for r in pingpong} == {"inter-node"}
    ranks = pingpong[0].document["placement"]["ranks"]
    assert [r["host"] for r in ranks] == ["pa1", "pa2"]
    # every measurement a step of ONE job, submitted once
    job_folder = cli.db.parent / "perfatlas-jobs" / f"run-{run['id']}"
    job_id = (job_folder / "job-id").read_text().strip()
    assert {r.document["job"]["job_id"] for r in results} == {job_id}
    assert {r.document["job"]["step"] for r in results} == {1, 2, 3}
    script = (job_folder / "job.sh").read_text()
    assert script.count("\nstep /") == 3 and "#SBATCH --nodes=3" in script
    # nodes compared with each other: latency by its median, noise PU by PU by its slowdown
    groups = {g.metric: [f.host for f in g.figures] for g in node_groups(results)}
    assert groups == {"latency_ns": ["pa1", "pa2", "pa3"], "noise slowdown": ["pa1", "pa2", "pa3"]}
    assert f"submitted Slurm job {job_id}" in result.err
    # the report: the nodes section with the per-node table and the link table
    html = (out / f"run-{run['id']}.html").read_text()
    assert 'id="nodes"' in html and "inter-node" in html and "pa3" in html


def test_a_failed_step_is_reported_and_the_steps_that_finished_are_imported(cli, slurm_cluster):
    suite = cli.db.parent / "too-many-ranks.toml"
    suite.write_text(SUITE.format(np=7))  # 3 nodes x 1 slot: Open MPI refuses 7 ranks
    result = cli(
        "run", str(suite), "--launcher", "slurm", "--nodes", "3",
        "--mpirun-args", slurm_cluster.mpirun_args,
    )  # fmt: skip
    assert result.code == 2
    assert "step 3 (comm.pingpong np=7" in result.err and "not enough slots" in result.err
    assert re.search(r"perfatlas: job \d+ ended FAILED.*2 of 3 step\(s\) complete", result.err)
    run, results = stored(cli.db)
    assert run["status"] == "failed"
    assert hosts_of(results, "mem.latency") == ["pa1", "pa2", "pa3"]
    assert not [r for r in results if r.benchmark == "comm.pingpong"]


def _cancel_after_first_step(jobs: Path) -> threading.Thread:
    """scancel the job once its first step has written its status (what a user does)."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ids = list(jobs.glob("run-*/job-id"))
            if ids and list(jobs.glob("run-*/step-001/rep-1/status")):
                subprocess.run(["scancel", ids[0].read_text().strip()], check=True)
                return
            time.sleep(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_cancelled_job_keeps_what_finished_and_marks_the_run_interrupted(cli, slurm_cluster):
    suite = cli.db.parent / "cancelled.toml"
    suite.write_text(CANCELLED_SUITE)
    watcher = _cancel_after_first_step(cli.db.parent / "perfatlas-jobs")
    result = cli("run", str(suite), "--launcher", "slurm", "--nodes", "3")
    watcher.join(timeout=5)
    assert result.code == 2
    assert re.search(r"job \d+ ended CANCELLED: 1 of 3 step\(s\) complete", result.err)
    assert "step 3 (mem.latency bytes=32 KiB" in result.err and "not started" in result.err
    run, results = stored(cli.db)
    assert run["status"] == "interrupted"
    assert hosts_of(results, "mem.latency") == ["pa1", "pa2", "pa3"]  # step 1, on every node
    assert {r.params["bytes"] for r in results} == {16384}
    assert not [r for r in results if r.benchmark == "noise"]


def test_a_job_folder_of_awkward_characters_and_a_time_limit_reach_sbatch_whole(
    cli, slurm_cluster, monkeypatch
):
    """The #SBATCH paths are quoted for sbatch's own word splitting (docs/safety/launch.md):
    job.out lands in the folder as named, and nothing in its name runs."""
    jobs = cli.db.parent / 'jobs a\'b "c" #d %j $(touch pwned) `touch pwned`'
    monkeypatch.setenv("PERFATLAS_JOB_DIR", str(jobs))
    result = cli(
        "measure", "mem.latency", *LATENCY, "--launcher", "slurm", "--nodes", "2",
        "--time", "5:00",
    )  # fmt: skip
    assert result.code == 0, result.err
    run, results = stored(cli.db)
    assert hosts_of(results, "mem.latency") == ["pa1", "pa2"]
    folder = jobs / f"run-{run['id']}"
    assert (folder / "job.out").is_file() and (folder / "job.err").is_file()
    assert not list(cli.db.parent.rglob("pwned"))
    job_id = (folder / "job-id").read_text().strip()
    shown = subprocess.run(
        ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True
    )
    assert "TimeLimit=00:05:00" in shown.stdout, shown.stdout + shown.stderr


def test_an_unknown_partition_is_one_sentence_and_opens_no_run(cli, slurm_cluster):
    result = cli("measure", "mem.latency", *LATENCY, "--launcher", "slurm", "--partition", "nope")
    assert result.code == 2
    assert result.err == "perfatlas: Slurm has no partition 'nope'; its partitions: test (sinfo)\n"
    assert not cli.db.exists() or Store(cli.db).runs() == []


def test_too_many_nodes_and_a_rejected_job_are_one_sentence(cli, slurm_cluster):
    result = cli("measure", "mem.latency", *LATENCY, "--launcher", "slurm", "--nodes", "4")
    assert result.code == 2
    assert result.err == (
        "perfatlas: --nodes 4 asks for more nodes than partition 'test' has (3); "
        "ask for at most 3\n"
    )
    result = cli(
        "measure", "mem.latency", *LATENCY, "--launcher", "slurm", "--sbatch-args", "--mem=999999"
    )
    assert result.code == 2
    last = result.err.strip().splitlines()[-1]
    assert last.startswith("perfatlas: sbatch rejected the job: Memory specification can not")
    run, results = stored(cli.db)
    assert run["status"] == "failed" and results == []


def test_inside_an_allocation_the_steps_launch_directly(tmp_path, slurm_cluster):
    """salloc runs perfatlas on this machine with SLURM_JOB_ID set: no sbatch, srun steps of
    that allocation."""
    db = tmp_path / "inside.db"
    source = str(Path(perfatlas.__file__).resolve().parents[1])  # this perfatlas, not another
    done = subprocess.run(
        ["salloc", "-N", "2", sys.executable, "-m", "perfatlas", "--db", str(db),
         "measure", "mem.latency", *LATENCY, "--launcher", "slurm"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": source},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    allocation = re.search(r"Granted job allocation (\d+)", done.stderr).group(1)
    assert f"inside Slurm allocation {allocation}: the steps start directly" in done.stderr
    _, results = stored(db)
    job_folder = tmp_path / "perfatlas-jobs" / "run-1"
    nodes = (job_folder / "nodes").read_text().split()
    assert len(nodes) == 2 and hosts_of(results, "mem.latency") == sorted(nodes)
    assert {r.document["job"]["job_id"] for r in results} == {allocation}
    assert not (job_folder / "job-id").exists()  # nothing was submitted


def test_without_slurm_a_hostfile_runs_node_level_benchmarks_on_every_host(cli, slurm_cluster):
    result = cli(
        "measure", "mem.latency", *LATENCY, "--launcher", "mpirun",
        "--mpirun-args", slurm_cluster.hostfile_args,
    )  # fmt: skip
    assert result.code == 0, result.err
    _, results = stored(cli.db)
    assert hosts_of(results, "mem.latency") == ["pa1", "pa2", "pa3"]
    command = results[0].document["launch"]["command"]
    assert "--map-by ppr:1:node" in command and "/hostfile" in command
    groups = node_groups(results)
    assert len(groups) == 1 and [f.host for f in groups[0].figures] == ["pa1", "pa2", "pa3"]


def test_doctor_reports_the_scheduler_with_its_partitions(slurm_cluster):
    from perfatlas.cli.doctor import OK, scheduler

    check = scheduler()
    assert check.status == OK
    assert check.detail == "reachable (sinfo): partition test (default): 3 node(s), up"


# -- without a cluster ------------------------------------------------------------------------
def test_doctor_says_the_slurm_tools_are_missing(monkeypatch, tmp_path):
    from perfatlas.cli.doctor import MISSING, scheduler

    monkeypatch.setenv("PATH", str(tmp_path))
    check = scheduler()
    assert check.status == MISSING
    assert check.detail.startswith("no sinfo on PATH: the Slurm client tools")


def test_doctor_says_why_no_controller_answers(monkeypatch, tmp_path):
    from perfatlas.cli.doctor import MISSING, scheduler

    if shutil.which("sinfo") is None:  # at run time: the cluster tests above may install it
        pytest.skip(
            "no sinfo: the Slurm client tools are not installed (the cluster tests "
            "above install slurm-wlm where they run as root)"
        )
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "absent.conf"))
    check = scheduler()
    assert check.status == MISSING
    assert check.detail.startswith(f"Slurm is not reachable: SLURM_CONF names {tmp_path}")


def test_no_sbatch_is_one_sentence(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    result = cli("measure", "mem.latency", *LATENCY, "--launcher", "slurm")
    assert result.code == 2
    assert result.err == (
        "perfatlas: Slurm is not available here: no sbatch on PATH; install the Slurm client "
        "tools, or use --launcher mpirun with a hostfile\n"
    )


def test_slurm_options_need_the_slurm_launcher(cli):
    result = cli("measure", "mem.latency", *LATENCY, "--partition", "test")
    assert result.code == 2
    assert result.err == "perfatlas: --partition applies with --launcher slurm only\n"


def _step_with_three_nodes(tmp_path: Path, repeat: int = 1):
    machine = Machine.detect()
    benchmark = get("mem.latency")
    params = benchmark.resolve(
        {"bytes": "16KiB", "samples": "3", "min_sample_time": "1ms"}, machine
    )
    options = LaunchOptions(launcher="slurm", slurm=SlurmOptions(nodes=3, partition="test"))
    steps = make_steps([Planned(benchmark, params)], repeat, machine, options, tmp_path / "job")
    return steps, options


def test_the_batch_script_has_one_launch_per_repetition(tmp_path):
    steps, options = _step_with_three_nodes(tmp_path, repeat=2)
    script = batch_script(steps, options.slurm, tmp_path / "job", "perfatlas-run-7")
    launches = [line for line in script.splitlines() if line.startswith("step /")]
    assert [shlex.split(line)[1] for line in launches] == [
        str(tmp_path / "job" / "step-001" / "rep-1"),
        str(tmp_path / "job" / "step-001" / "rep-2"),
    ]
    assert all("srun --nodes=3 --ntasks=3 --ntasks-per-node=1 --whole sh -c" in x for x in launches)
    assert "#SBATCH --partition=test" in script and "#SBATCH --job-name=perfatlas-run-7" in script


def test_a_node_that_never_writes_is_named_and_the_others_are_kept(tmp_path):
    """The folder a killed node leaves: pa1 and pa2 wrote real documents, pa3 nothing."""
    steps, _ = _step_with_three_nodes(tmp_path)
    folder = steps[0].folders[0]
    folder.mkdir(parents=True)
    document = subprocess.run(
        [str(executable("pa-mem-latency")), "bytes=16384", "samples=3", "min_sample_time=0.001"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for host in ("pa1", "pa2"):
        (folder / f"{host}.json").write_text(document)
        (folder / f"{host}.err").write_text("")
        (folder / f"{host}.status").write_text("0\n")
    (folder / "stderr").write_text("srun: error: pa3: task 2: Killed\n")
    (folder / "status").write_text("1\n")
    collected = collect(steps[0], ["pa1", "pa2", "pa3"], {"scheduler": "slurm", "job_id": "42"})
    assert collected.failures == [
        "step 1 (mem.latency bytes=16 KiB chain=page cpus=0 node=local page=4 KiB): node pa3: "
        "wrote no result: its task never started, or was killed before it wrote anything"
    ]
    kept = [d for d, _ in collected.stored]
    assert [d["params"]["host"] for d in kept] == ["pa1", "pa2"]
    assert all(d["job"] == {"scheduler": "slurm", "job_id": "42", "step": 1} for d in kept)
    assert json.loads(document)["samples"] == kept[0]["samples"]


def _result(host: str, median: float, lo: float, hi: float, metric: str = "latency_ns") -> Result:
    params = {"bytes": 16384, "host": host}
    return Result(
        0, 1, "mem.latency", params, metric, "ns", [median], 1, median, lo, hi, lo, hi, None, [], {}
    )


def test_a_node_is_flagged_only_far_outside_the_others_interval_and_beyond_10_percent():
    typical = [_result("pa1", 1.00, 0.98, 1.02), _result("pa2", 1.01, 0.99, 1.03)]
    typical.append(_result("pa3", 0.99, 0.97, 1.01))
    slow = node_groups([*typical, _result("pa4", 1.50, 1.45, 1.55)])[0]
    assert list(slow.flagged) == ["pa4"] and slow.flagged["pa4"] == pytest.approx(0.5)
    assert slow.median == pytest.approx(1.005)
    assert slow.slowdown(slow.figures[3]) == pytest.approx(
        (1.5 / 1.005, 1.45 / 1.005, 1.55 / 1.005)
    )
    # its interval overlaps that of the others' samples pooled (0.99 .. 1.01)
    wide = node_groups([*typical, _result("pa4", 1.50, 1.00, 1.55)])[0]
    assert wide.flagged == {}
    close = node_groups([*typical, _result("pa4", 1.08, 1.075, 1.085)])[0]  # far, but 8 %
    assert close.flagged == {}
    two = node_groups(typical[:1] + [_result("pa4", 1.50, 1.45, 1.55)])[0]
    assert not two.judged and two.flagged == {}


def test_bandwidth_slowdown_is_the_median_over_the_node():
    rows = [_result(f"pa{i}", 10e9, 9.9e9, 10.1e9, "bandwidth_Bps") for i in (1, 2, 3)]
    group = node_groups([*rows, _result("pa4", 5e9, 4.9e9, 5.1e9, "bandwidth_Bps")])[0]
    assert not group.higher_is_worse and list(group.flagged) == ["pa4"]
    assert group.slowdown(group.figures[3])[0] == pytest.approx(2.0)
