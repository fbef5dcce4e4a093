"""perfatlas sweep: the cross product, interleaved; binding and memory policy applied and read back;
speedup, efficiency and variability computed from the stored launches; comparison of two runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from perfatlas.common.stats import Ratio
from perfatlas.experiments.analysis_comparison import PointRatio, geometric_mean_ratio, point_ratios
from perfatlas.experiments.analysis_param_sweep import scaling, sweep_points
from perfatlas.machine.placement import Placement
from perfatlas.plan.sweep_grid import plan, schedule
from perfatlas.store.database import Store
from perfatlas.store.result import Result, pool_launches

SPSOLVE = ["app.spsolve", "problem=laplace2d", "n=12", "repeat=3", "warmup=0"]


def stored(db: Path) -> list[dict]:
    """Every stored result row of the first metric of each launch, in the order stored."""
    rows = sqlite3.connect(db).execute(
        "SELECT document FROM results WHERE metric = 'numeric_s' ORDER BY id"
    )
    return [json.loads(text) for (text,) in rows]


# -- the plan -------------------------------------------------------------------------------------
def test_plan_is_the_cross_product_and_every_round_runs_every_point_once():
    points = plan([1, 2], ["none", "close", "spread"], ["local", "interleave"])
    assert len(points) == 12 and len(set(points)) == 12
    order = schedule(points, 3)
    assert [slot.position for slot in order] == list(range(36))
    for repetition in range(3):
        round_ = [slot.point for slot in order if slot.repetition == repetition]
        assert sorted(map(str, round_)) == sorted(map(str, points))
        assert round_[0] == points[repetition]  # rotated by one place per round
    # interleaved: no point is launched twice in a row
    assert all(a.point != b.point for a, b in zip(order, order[1:]))
    assert len(plan([1, 1, 2], ["close", "close"], ["local"])) == 2  # duplicates once


# -- analysis of stored launches -----------------------------------------------------------------
def launch(threads: int, samples: list[float], bind="close", unit="s", metric="numeric_s"):
    params = {"problem": "x", "threads": threads, "bind": bind, "mempolicy": "local"}
    return Result(
        0, 1, "app.spsolve", params, metric, unit, samples, len(samples), *[None] * 5,
        None, [], {"sweep": {"obtained": {"migrations": 3, "remote_fraction": 0.0}}},
    )  # fmt: skip


def test_speedup_efficiency_and_variability_follow_their_definitions():
    results = [
        launch(1, [4.0, 4.0, 4.0]),
        launch(1, [4.0, 4.0, 4.0]),
        launch(2, [2.0, 2.0, 2.0]),
        launch(2, [3.0, 3.0, 3.0]),
        launch(4, [1.0, 1.0, 1.0]),
    ]
    points = sweep_points(results)
    assert [(p.threads, len(p.launches)) for p in points] == [(1, 2), (2, 2), (4, 1)]
    two = points[1]
    assert two.launch_medians.tolist() == [2.0, 3.0]
    assert two.cv == pytest.approx(0.7071067811865476 / 2.5)  # sd(2, 3) / mean
    assert two.spread == pytest.approx(1.0 / 2.5)
    assert points[0].cv == 0.0 and points[2].cv is None  # one launch: no run-to-run figure
    by_threads = {s.point.threads: s for s in scaling(points)}
    assert by_threads[1].speedup.median == 1.0
    assert by_threads[2].speedup.median == pytest.approx(4.0 / 2.5)
    assert by_threads[4].speedup.median == 4.0 and by_threads[4].efficiency == 1.0
    assert by_threads[2].efficiency == pytest.approx(0.8)


def test_rates_speed_up_upwards_and_the_base_is_the_fewest_threads():
    points = sweep_points(
        [launch(2, [10.0] * 3, unit="flop/s"), launch(4, [15.0] * 3, unit="flop/s")]
    )
    (two, four) = sorted(scaling(points), key=lambda s: s.point.threads)
    assert two.base.threads == 2 and four.speedup.median == 1.5
    assert four.efficiency == pytest.approx(1.5 * 2 / 4)


def test_pooled_launches_keep_every_sample_in_order():
    a, b = launch(1, [1.0, 2.0]), launch(1, [3.0])
    (pooled,) = pool_launches([a, b])
    assert pooled.samples == [1.0, 2.0, 3.0] and pooled.n == 3 and pooled.median == 2.0


def test_geometric_mean_of_ratios_and_verdicts_against_an_expected_ratio():
    assert geometric_mean_ratio([2.0, 8.0]).median == pytest.approx(4.0)
    point = PointRatio(launch(1, [1.0]), launch(1, [1.3]), Ratio(1.3, 1.25, 1.36))
    assert point.verdict(None) == "higher"
    assert point.verdict(1.333) == "as expected"
    assert point.verdict(1.5) == "below expected"
    a = [launch(1, [1.0, 1.0]), launch(1, [1.0, 1.0])]
    b = [launch(1, [2.0, 2.0, 2.0])]
    (pr,) = point_ratios(a, b)
    assert pr.ratio.median == 2.0 and pr.a.n == 4


def test_placement_parameters_for_benchmarks_that_place_themselves():
    from perfatlas.benchmarks import get
    from perfatlas.common.errors import UserError
    from perfatlas.machine.topology import Machine

    machine = Machine.detect()
    bandwidth = get("mem.bandwidth")
    raw = Placement("close", "node:0").params_for(bandwidth, {"op": "triad"}, 1, machine)
    assert raw["cpus"] == str(machine.pus[0]) and raw["node"] == "0" and raw["threads"] == "1"
    with pytest.raises(UserError, match="pins every thread itself"):
        Placement("none", "local").params_for(bandwidth, {}, 1, machine)


# -- end to end ------------------------------------------------------------------------------------
def test_sweep_runs_the_cross_product_interleaved_and_records_what_it_obtained(cli, tmp_path):
    result = cli(
        "sweep", *SPSOLVE, "--threads", "1,2", "--bind", "none,close",
        "--mempolicy", "local,interleave", "--repeat", "2", "--out", str(tmp_path),
    )  # fmt: skip
    assert result.code == 0, result.err
    documents = stored(cli.db)
    assert len(documents) == 16  # 2 threads x 2 binds x 2 policies x 2 repetitions
    assert [d["sweep"]["position"] for d in documents] == list(range(16))
    assert [d["sweep"]["repetition"] for d in documents] == [0] * 8 + [1] * 8
    points = {
        (d["params"]["threads"], d["params"]["bind"], d["params"]["mempolicy"]) for d in documents
    }
    assert len(points) == 8
    for d in documents:
        got, command = d["sweep"]["obtained"], d["launch"]["command"]
        policy = {"local": "--localalloc", "interleave": "--interleave=all"}
        assert f"numactl {policy[d['params']['mempolicy']]}" in command
        assert sum(got["pages_on_node"].values()) == pytest.approx(1.0)
        assert got["remote_fraction"] is not None and "estimated" in got["remote_fraction_method"]
        threads = d["execution"]["threads"]
        pinned = [
            t for t in threads if "," not in t["cpus_allowed"] and "-" not in t["cpus_allowed"]
        ]
        if d["params"]["bind"] == "close":
            assert d["launch"]["env"]["OMP_PROC_BIND"] == "close"
            assert len(pinned) >= d["params"]["threads"], threads
        else:
            assert d["launch"]["env"]["OMP_PROC_BIND"] == "false" and not pinned
    assert "speedup" in result.out and "launch CV" in result.out
    html = next(tmp_path.glob("run-*.html")).read_text()
    assert "Sweeps: threads, binding, memory placement" in html and "<svg" in html


def test_a_sweep_binds_memory_benchmarks_through_their_own_parameters(cli, tmp_path):
    result = cli(
        "sweep", "mem.bandwidth", "op=triad", "bytes=64KiB", "samples=3", "min_sample_time=1ms",
        "--threads", "1", "--bind", "close,spread", "--mempolicy", "node:0", "--repeat", "1",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = sqlite3.connect(cli.db).execute("SELECT document FROM results").fetchall()
    for (text,) in rows:
        document = json.loads(text)
        assert "numactl" not in document["launch"]["command"]
        assert document["params"]["node"] == 0 and document["placement"]["pages_on_node"] == {
            "0": 1.0
        }


def test_a_sweep_says_how_many_findings_it_stored_as_run_does(cli, tmp_path):
    """The count line `perfatlas run` ends its summary with, for the run the sweep stored."""
    result = cli(
        "sweep", "mem.bandwidth", "op=triad", "bytes=64KiB", "samples=3", "min_sample_time=1ms",
        "--threads", "1", "--repeat", "1", "--out", str(tmp_path),
    )  # fmt: skip
    assert result.code == 0, result.err
    store = Store(cli.db)
    run_id = store.runs()[-1]["id"]
    found = store.findings(run_id)["findings"]
    worth = sum(f["severity"] != "info" for f in found)
    said = (
        f"{len(found)} finding(s), {worth} worth a look: 'perfatlas show {run_id}' lists them, "
        f"'perfatlas export {run_id} --format findings-csv' writes them"
    )
    assert found and said in " ".join(result.out.split())  # the console wraps at its width


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bind", "tight"], "--bind 'tight' is not one of none, close, spread"),
        (["--mempolicy", "node:7"], "NUMA node 7 does not exist"),
        (["--mempolicy", "far"], "is not local, interleave or node:K"),
        (["--threads", "64"], "threads=64 exceeds"),
        (["threads=2"], "give threads through the sweep's axes"),
    ],
)
def test_bad_sweeps_are_one_sentence_and_lose_nothing(cli, tmp_path, args, message):
    assert cli("measure", "mem.latency", "bytes=64KiB", "samples=3").code == 0
    before = sqlite3.connect(cli.db).execute("SELECT COUNT(*) FROM results").fetchone()[0]
    result = cli("sweep", *SPSOLVE, *args, "--out", str(tmp_path))
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.err
    db = sqlite3.connect(cli.db)
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == before
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1  # no run was opened


def test_a_benchmark_without_threads_cannot_be_swept(cli, tmp_path):
    result = cli("sweep", "mem.latency", "--out", str(tmp_path))
    assert result.code == 2 and "takes no threads parameter" in result.err


def test_compare_pools_launches_and_holds_points_against_the_expected_ratio(cli, tmp_path):
    for _ in range(2):
        sweep = cli("sweep", *SPSOLVE, "--threads", "1,2", "--repeat", "2", "--out", str(tmp_path))
        assert sweep.code == 0, sweep.err
    report = tmp_path / "compare.html"
    result = cli("compare", "1", "2", "--expect", "1.333", "--report", str(report))
    assert result.code == 0, result.err
    assert "expected" in result.out and "numeric_s" in result.out
    html = report.read_text()
    assert "Comparison of two runs" in html and "geometric mean" in html and "<svg" in html
    assert cli("compare", "1", "2", "--expect", "-1").code == 2


def test_suite_steps_with_bind_or_mempolicy_are_interleaved_sweeps(cli, tmp_path):
    from perfatlas.machine.topology import Machine
    from perfatlas.plan.suite import expand, load

    machine = Machine.detect()
    shipped = expand(load("spsolve"), machine)
    sweeps = [m for m in shipped if m.slots]
    assert len(sweeps) == 2 and all(len(m.slots) == 2 * 2 * 3 for m in sweeps)
    assert len(shipped) - len(sweeps) == 4 + 2  # MUMPS np x ordering, laplace2d orderings
    suite = tmp_path / "tiny.toml"
    suite.write_text(
        'description = "a sweep step"\n[[step]]\nbenchmark = "app.spsolve"\n'
        'problem = "laplace2d"\nn = 12\nrepeat = 3\nwarmup = 0\nthreads = [1, 2]\n'
        'bind = ["none", "close"]\nlaunches = 2\n'
    )
    result = cli("run", str(suite), "--out", str(tmp_path))
    assert result.code == 0, result.err
    documents = stored(cli.db)
    assert [d["sweep"]["position"] for d in documents] == list(range(8))
    assert {d["params"]["mempolicy"] for d in documents} == {"local"}
    assert "speedup" in result.out


def test_mpi_ranks_get_cores_for_their_bound_threads_and_none_when_unbound(cli, tmp_path):
    """MUMPS on one rank of two threads: bound threads get a rank bound to two cores of its own
    (Open MPI binds a rank to one core by default), unbound threads a rank bound to nothing."""
    mumps = ["app.spsolve", "problem=laplace2d", "n=12", "repeat=2", "warmup=0", "solver=mumps"]
    result = cli("sweep", *mumps, "--threads", "2", "--bind", "close,none", "--repeat", "1",
                 "--out", str(tmp_path))  # fmt: skip
    if result.code != 0 and "not available" in result.err:
        pytest.skip("pa-spsolve built without MUMPS")
    assert result.code == 0, result.err
    commands = {d["params"]["bind"]: d["launch"]["command"] for d in stored(cli.db)}
    assert "--map-by slot:PE=2 --bind-to core" in commands["close"]
    assert "--bind-to none" in commands["none"] and "PE=" not in commands["none"]
