"""One launch path on a real cluster (the three-node Slurm of test_slurm.py and the same hosts
through mpirun with a hostfile): a sweep (threads x binding x memory policy) through each cluster
executor, a PARbench scenario on a compute node, and hosts that do not answer, named before a run
is opened. `measure` and `run` through both executors are test_slurm.py's."""

from __future__ import annotations

import json
import os
import shlex

import pytest
import test_slurm
from test_slurm import Cluster, hosts_of, stored

from perfatlas.launch.native import bin_dir
from perfatlas.store.database import Store

slurm_cluster = test_slurm.slurm_cluster  # its module-scoped fixture, here as well

SWEEP = [
    "sweep", "mem.bandwidth", "op=triad", "bytes=16MiB", "samples=3", "min_sample_time=1ms",
    "--threads", "1,2", "--bind", "close", "--mempolicy", "local,interleave", "--repeat", "1",
]  # fmt: skip
# A write fraction alone: reachable on every machine from the kernels' declared bytes (with a
# transfer rate such as "50%" it depends on the CPU's relative kernel rates: test_scenario.py).
SCENARIO = """\
name = "short"
cpus = "0-1"
[[job]]
name = "stream"
count = 2
runtime = "1s"
kernels = ["triad", "dot", "polynomial"]
bytes = ["240kB"]
target = { write_fraction = 0.2 }
"""


def _check_sweep(results, nodes: list[str]) -> None:
    assert hosts_of(results, "mem.bandwidth") == sorted(nodes * 4)  # 2 threads x 2 policies
    documents = [r.document for r in results]
    assert {(d["params"]["threads"], d["params"]["mempolicy"]) for d in documents} == {
        (1, "local"), (2, "local"), (1, "interleave"), (2, "interleave"),
    }  # fmt: skip
    for document in documents:  # what the placement obtained, read back on the node
        assert document["sweep"]["obtained"]["cpus"]
        assert document["params"]["cpus"] == ([0] if document["params"]["threads"] == 1 else [0, 1])


def test_a_sweep_runs_as_steps_of_one_slurm_job(cli, slurm_cluster: Cluster):
    result = cli(*SWEEP, "--launcher", "slurm", "--nodes", "2", "--out", str(cli.db.parent))
    assert result.code == 0, result.err
    run, results = stored(cli.db)
    assert run["status"] == "complete"
    _check_sweep(results, ["pa1", "pa2"])
    assert {r.document["job"]["step"] for r in results} == {1, 2, 3, 4}


def test_a_sweep_runs_on_every_host_of_a_hostfile(cli, slurm_cluster: Cluster):
    result = cli(
        *SWEEP, "--launcher", "mpirun", "--mpirun-args", slurm_cluster.hostfile_args,
        "--out", str(cli.db.parent),
    )  # fmt: skip
    assert result.code == 0, result.err
    run, results = stored(cli.db)
    assert run["status"] == "complete"
    _check_sweep(results, ["pa1", "pa2", "pa3"])
    assert all("--map-by ppr:1:node" in r.document["launch"]["command"] for r in results)


def test_a_scenario_runs_on_a_compute_node_and_comes_back_whole(cli, slurm_cluster: Cluster):
    path = cli.db.parent / "short.toml"
    path.write_text(SCENARIO)
    saved = cli.db.parent / "short.json"
    result = cli(
        "scenario", "run", str(path), "--launcher", "slurm", "--json", str(saved),
        "--out", str(cli.db.parent / "out"),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "perfatlas runs on a compute node" in result.err
    run, results = stored(cli.db)
    assert run["host"] in ("pa1", "pa2", "pa3") and run["suite"] == "scenario short"
    assert run["status"] == "complete"
    store = Store(cli.db)
    [scenario] = store.scenarios(run["id"])
    assert sorted(job["job"] for job in scenario["jobs"]) == ["stream#1", "stream#2"]
    assert all(job["accounting"]["ok"] for job in scenario["jobs"])
    base = [r for r in store.runs() if r["suite"] == "parbench-base"]
    assert len(base) == 1 and store.run(base[0]["id"])["host"] == run["host"]
    assert json.loads(saved.read_text())["jobs"][0]["dedicated_s"] > 0
    assert (cli.db.parent / "out" / f"run-{run['id']}.html").is_file()


def test_a_profile_runs_in_a_slurm_allocation(cli, slurm_cluster: Cluster, tmp_path):
    """perfatlas profile -- mpirun ...: the profiled mpirun starts inside the job, where Slurm
    gives it the hosts."""
    program = bin_dir() / "pa-ipm-exact"
    if not program.is_file():
        pytest.skip("perfatlas-ipm was built without MPI")
    mpirun = ["mpirun", "-np", "2", "--oversubscribe", *shlex.split(slurm_cluster.mpirun_args)]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    out = tmp_path / "profile"
    result = cli(
        "profile", "--launcher", "slurm", "--nodes", "2", "--out", str(out), "--",
        *mpirun, str(program), str(tmp_path),  # its files go to tmp_path
    )  # fmt: skip
    assert result.code == 0, result.err
    run, _ = stored(cli.db)
    assert run["suite"] == "profile" and run["host"] in ("pa1", "pa2")
    [profile] = Store(cli.db).profiles(run["id"])
    assert not profile["partial"] and len(profile["document"]["ranks"]) == 2
    assert f"stored as run {run['id']}" in result.out and (out / "report.html").is_file()


def test_a_host_that_does_not_answer_is_named_before_a_run_is_opened(cli, slurm_cluster):
    words = shlex.split(slurm_cluster.hostfile_args)
    hostfile = cli.db.parent / "hostfile"
    hostfile.write_text("pa1 slots=4\npa9 slots=4\n")  # pa9 is no host of the cluster
    words[words.index("--hostfile") + 1] = str(hostfile)
    result = cli(
        "measure", "mem.latency", "bytes=16KiB", "--launcher", "mpirun",
        "--mpirun-args", shlex.join(words),
    )  # fmt: skip
    assert result.code == 2
    assert result.err.startswith(
        "perfatlas: mpirun cannot start a process on every host (pa1, pa9 did not answer): "
        'Cannot open network namespace "pa9"'
    )
    assert not cli.db.exists() or Store(cli.db).runs() == []
