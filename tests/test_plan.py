"""Plans (perfatlas.plan.measurement_plan): run --plan and sweep --plan on this machine; the time model."""

from __future__ import annotations

import json

import pytest

from perfatlas.benchmarks import get
from perfatlas.machine.topology import Machine
from perfatlas.plan import suite as suites
from perfatlas.plan.measurement_plan import suite_plan
from perfatlas.plan.suite import suite_names
from perfatlas.plan.time_estimate import LAUNCH_S, MPI_START_S, launch_seconds
from perfatlas.store.database import Store

TINY = """
[[step]]
benchmark = "mem.latency"
chain = "page"
bytes = ["16KiB", "64KiB"]
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "noise"
cpus = "0"
duration = "0.2s"

[[step]]  # a sweep step: 1 thread, close binding, launched twice
benchmark = "mem.bandwidth"
op = "read"
bytes = "64KiB"
threads = 1
bind = "close"
launches = 2
samples = 3
min_sample_time = "1ms"
"""


@pytest.fixture(scope="module")
def machine() -> Machine:
    return Machine.detect()


@pytest.mark.parametrize("name", suite_names())
def test_every_shipped_suite_plans_here_and_stores_nothing(name, cli):
    result = cli("run", name, "--plan")
    assert result.code == 0, result.err
    steps = len(suites.load(name)["step"])
    for number in range(1, steps + 1):
        assert f"\nstep {number}: " in result.out
    assert "estimated wall time" in result.out and "nothing was measured" in result.out
    assert not cli.db.exists()


def test_what_is_planned_is_what_run_measures(cli, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY)
    plan = json.loads(cli("run", str(suite), "--plan", "--json").out)
    assert plan["schema"] == "perfatlas.plan.measurement_plan/1"
    planned = [(launch["benchmark"], launch["bytes"]) for launch in plan["launches"]]
    assert planned == [
        ("mem.latency", [16384, 65536]),  # a size series: one launch (docs/sizing.md)
        ("noise", None),
        ("mem.bandwidth", 65536),
        ("mem.bandwidth", 65536),
    ]
    assert plan["launches"][2]["note"] == "repetition 1/2"
    assert plan["launches"][2]["cpu_list"] == [0]
    assert not cli.db.exists()
    result = cli("run", str(suite), "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    store = Store(cli.db)
    documents = list(store.result_documents(store.resolve_run("last")))
    measured = [(d["benchmark"], d["params"].get("bytes")) for d in documents]
    points = [
        (name, size)
        for name, sizes in planned
        for size in (sizes if isinstance(sizes, list) else [sizes])
    ]
    assert measured == points


def test_json_needs_plan(cli):
    result = cli("run", "quick", "--json")
    assert result.code == 2 and "--json applies with --plan only" in result.err


def test_a_sweep_plan_is_the_interleaved_schedule(cli, machine):
    threads = "1,2" if len(machine.pus) >= 2 else "1"
    result = cli(
        "sweep", "mem.bandwidth", "op=read", "bytes=64KiB", "--threads", threads,
        "--bind", "close,spread", "--repeat", "2", "--plan", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    launches = json.loads(result.out)["launches"]
    points = len(threads.split(",")) * 2
    assert len(launches) == 2 * points
    first = [(launch["placement"], launch["cpus"]) for launch in launches[:points]]
    second = [(launch["placement"], launch["cpus"]) for launch in launches[points:]]
    assert second == first[1:] + first[:1]  # round 2 is round 1 rotated by one place
    assert not cli.db.exists()


def test_the_time_model_follows_its_parameters(machine):
    latency = get("mem.latency")
    short = latency.resolve({"bytes": "16KiB", "samples": "3"}, machine)
    longer = latency.resolve({"bytes": "16KiB", "samples": "30"}, machine)
    assert LAUNCH_S < launch_seconds("mem.latency", short, machine, False)
    assert launch_seconds("mem.latency", short, machine, False) < launch_seconds(
        "mem.latency", longer, machine, False
    )
    noise = get("noise").resolve({"duration": "3s", "cpus": "0"}, machine)
    assert launch_seconds("noise", noise, machine, False) == pytest.approx(3 + LAUNCH_S)
    pingpong = get("comm.pingpong").resolve({"np": "2"}, machine)
    local = launch_seconds("comm.pingpong", pingpong, machine, False)
    assert launch_seconds("comm.pingpong", pingpong, machine, True) == pytest.approx(
        local + MPI_START_S
    )
    once = suite_plan("quick", suites.load("quick"), machine)
    thrice = suite_plan("quick", suites.load("quick"), machine, repeat=3)
    assert thrice.seconds == pytest.approx(3 * once.seconds)


def test_every_benchmark_declares_its_time_estimate(machine):
    """Knowledge on the benchmark: each declares Benchmark.estimate; none inherits a fallback,
    and the framework's own says which benchmark lacks one."""
    from perfatlas.benchmarks import all_benchmarks
    from perfatlas.benchmarks.benchmark import Benchmark

    for benchmark in all_benchmarks():
        assert type(benchmark).estimate is not Benchmark.estimate, benchmark.name
    with pytest.raises(NotImplementedError, match="example.sum declares no time estimate"):
        Benchmark.estimate(get("example.sum"), {}, machine)


def test_each_family_s_estimate_counts_what_its_launch_measures(machine):
    """The models' counts: ping-pong message sizes, hotspot senders, core-to-core pairs."""
    pingpong = get("comm.pingpong")
    sizes = {"min_bytes": 1, "max_bytes": 8, "samples": 4, "min_sample_time": 0.001}
    four = pingpong.estimate(sizes, machine)  # 1, 2, 4, 8 bytes
    assert pingpong.estimate({**sizes, "min_bytes": 0}, machine) == pytest.approx(5 / 4 * four)
    hotspot = get("comm.hotspot")
    assert hotspot.estimate({"np": 5}, machine) == pytest.approx(
        2 * hotspot.estimate({"np": 5, "max_senders": 2}, machine)
    )
    pairs = get("cpu.core_to_core")
    all_pairs = pairs.estimate({"cpus": [0, 1, 2, 3]}, machine)  # 6 pairs
    assert pairs.estimate({"cpus": [0, 1, 2, 3], "pairs": "first"}, machine) == pytest.approx(
        all_pairs / 2
    )
