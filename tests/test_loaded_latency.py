"""mem.loaded_latency: a delay series measured in one launch and stored point by point, idle
and loaded samples paired, the injected bandwidth bounded by the delay (how much the latency
rises and the bandwidth falls is measured by bench/loaded_latency_effects.py), the chase's and
the injectors' checks, memory placement (node, inject_node; the NUMA guest's test is in
test_numa_vm.py), bad input, and the one-CPU machine."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace

import pytest

from perfatlas.benchmarks import get
from perfatlas.common.stats import summarize
from perfatlas.launch.isa import emulated
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.mem.analysis_loaded_latency import loaded_curves
from perfatlas.mem.bench_loaded_latency import NEEDS_TWO_CPUS
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_summary import print_summary

LINE = 64
CHUNK = 64  # accesses between two publications of an injector's count (loaded_latency.c)


def launch(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(executable("pa-mem-loaded-latency")), *words], capture_output=True, text=True
    )


def documents(*words: str) -> list[dict]:
    proc = launch(*words)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    return found if isinstance(found, list) else [found]


def test_parameters_come_from_the_native_table():
    params = {p.name: p for p in get("mem.loaded_latency").params}
    assert params["delay"].series and params["delay"].default == [0, 100, 400, 1600]
    assert params["mix"].choices == ("read", "write", "1:1", "2:1")
    assert params["injectors"].default is None and params["bytes"].default == 0


TIMINGS_REAL = pytest.mark.skipif(
    bool(emulated()), reason="timings under emulation (qemu-user) are not the machine's"
)


def test_idle_and_loaded_samples_are_paired_and_the_injection_is_counted():
    """Every sample of a point has its idle twin, measured right before it (so that a machine's
    drift hits both alike), and the injectors' bandwidth beside it. How much the latency rises is
    a hardware effect: bench/loaded_latency_effects.py measures it (a sign test over the pairs)."""
    [doc] = documents(
        "delay=0", "bytes=2MiB", "inject_bytes=1MiB", "samples=7", "min_sample_time=1ms"
    )
    samples = doc["samples"]
    assert len(samples["idle_latency_ns"]) == len(samples["latency_ns"]) == 7
    assert len(samples["injected_Bps"]) == 7
    assert all(value > 0 for value in samples["idle_latency_ns"] + samples["latency_ns"])
    assert all(value >= 0 for value in samples["injected_Bps"])


@TIMINGS_REAL
def test_the_delay_bounds_the_injected_accesses():
    """Every access is followed by `delay` ns of pause, so no sample holds more than its time
    over the delay (plus the chunk counted at once), and the samples' counts add up to the
    point's total: properties of the injector's loop that hold however busy the machine is.
    That the bandwidth falls as the delay grows is measured by bench/loaded_latency_effects.py."""
    delays = [0, 1000, 20000]
    docs = documents(
        "delay=" + ",".join(map(str, delays)),
        "bytes=8MiB",
        "inject_bytes=16MiB",
        "samples=5",
        "min_sample_time=5ms",
        "injectors=1",
        "mix=2:1",
    )
    assert [d["params"]["delay"] for d in docs] == delays
    for doc, delay in zip(docs, delays):
        bandwidth, seconds = doc["samples"]["injected_Bps"], doc["sample_seconds"]
        accesses = [b * s / LINE for b, s in zip(bandwidth, seconds)]
        if delay:
            assert all(a <= s / (delay * 1e-9) + 2 * CHUNK for a, s in zip(accesses, seconds))
        assert sum(accesses) == pytest.approx(doc["derived"]["injected_accesses"], rel=1e-9)
        assert doc["derived"]["verified"] and doc["derived"]["reads_per_period"] == 2


def test_the_chase_visits_every_line_and_the_injectors_check_their_sums():
    # Under qemu-user an injector's chunk of accesses outlasts a 1 ms sample: none would be counted
    sample_time = "min_sample_time=20ms" if emulated() else "min_sample_time=1ms"
    for mix in ("read", "write", "1:1"):
        [doc] = documents(
            "delay=0", "bytes=2MiB", "inject_bytes=1MiB", "samples=2", sample_time, f"mix={mix}"
        )
        derived = doc["derived"]
        assert derived["lines"] == (2 << 20) // derived["line_bytes"]
        assert derived["verified"] and derived["injected_accesses"] > 0
        assert derived["writes_per_period"] == {"read": 0, "write": 1, "1:1": 1}[mix]


def test_cli_stores_a_series_with_its_section_and_table(cli, tmp_path, capsys):
    result = cli(
        "measure",
        "mem.loaded_latency",
        "delay=0,3000",
        "bytes=4MiB",
        "inject_bytes=4MiB",
        "samples=3",
        "min_sample_time=2ms",
    )
    assert result.code == 0, result.err
    store = Store(cli.db)
    run_id = store.resolve_run("last")
    stored = store.results(run_id)
    assert {(r.params["delay"], r.metric) for r in stored} == {
        (d, m) for d in (0, 3000) for m in ("latency_ns", "idle_latency_ns", "injected_Bps")
    }
    assert all(r.params["injectors"] == [p for p in Machine.detect().pus if p != 0] for r in stored)
    report = tmp_path / "report.html"
    assert cli("report", "last", "-o", str(report)).code == 0
    assert "Loaded latency (mem.loaded_latency)" in report.read_text()
    capsys.readouterr()
    print_summary(RunData.load(store, run_id))
    assert "loaded latency: latency vs injected bandwidth" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words, says",
    [
        (["injectors=0"], "injectors lists PU 0, the chasing thread's cpu"),
        (["delay=-5"], "delay=-5 is below the minimum 0"),
        (["delay=0,fast"], "delay='fast' is not a whole number"),
        (["mix=3:1"], "mix='3:1' is not one of read, write, 1:1, 2:1"),
        (["injectors=4096"], "4096"),
        (["inject_node=near"], "inject_node='near' must be same, local, remote, interleave"),
        (["node=4095"], "NUMA node 4095 does not exist"),
        (["inject_node=4095"], "NUMA node 4095 does not exist"),
    ],
)
def test_bad_input_is_one_sentence(cli, words, says):
    result = cli("measure", "mem.loaded_latency", *words)
    assert result.code == 2 and says in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "words, says",
    [
        (["cpu=0", "injectors=0"], "injectors lists PU 0, the chasing thread's cpu"),
        (["delay=0,x"], "delay=x is not an integer"),
        (["delay=0,,9"], "delay=0,,9 is not an integer or a comma-separated list of integers"),
        (["delay=2000000000"], "delay=2000000000 is out of range"),
        (["inject_node=near"], "inject_node=near is not 'local', 'interleave' or a NUMA node"),
    ],
)
def test_native_refuses_bad_input(words, says):
    proc = launch(*words)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


PLACED = ["delay=0", "bytes=1MiB", "inject_bytes=1MiB", "samples=2", "min_sample_time=1ms"]


@pytest.mark.skipif(
    bool(emulated()), reason="qemu-user has no NUMA system calls: nothing is bound to read back"
)
def test_node_binds_the_chase_and_inject_node_the_injectors():
    """Bound to this machine's first node (both buffers, read back by move_pages), or the chase
    bound and the injectors' first touch; the default inject_node follows node."""
    node = Machine.detect().numa_nodes[0]
    for inject, policy in (("same", f"bind {node}"), ("local", "local")):
        [doc] = documents(*PLACED, f"node={node}", f"inject_node={inject}")
        assert doc["params"]["node"] == node and doc["params"]["inject_node"] == inject
        assert doc["placement"]["mempolicy_applied"] == f"bind {node}"
        assert doc["placement"]["pages_on_node"] == {str(node): 1.0}
        injected = doc["inject_placement"]
        assert injected["mempolicy_applied"] == policy
        assert sum(injected["pages_on_node"].values()) == pytest.approx(1.0)
        assert doc["derived"]["verified"]


def test_remote_on_one_node_is_stored_not_measurable(cli):
    if len(Machine.detect().numa_nodes) > 1:
        pytest.skip("this machine has a remote node (tests/test_numa_vm.py measures one)")
    for placed in (["node=remote"], ["node=0", "inject_node=remote"]):
        result = cli("measure", "mem.loaded_latency", *PLACED, *placed)
        assert result.code == 0, result.err
        stored = Store(cli.db).results(Store(cli.db).resolve_run("last"))
        assert {r.metric for r in stored} == {"latency_ns", "idle_latency_ns", "injected_Bps"}
        assert all(
            r.document["not_measurable"]
            == "remote NUMA is not measurable here: this machine has 1 NUMA node(s)"
            for r in stored
        )


def test_one_cpu_is_not_measurable():
    machine = Machine.detect()
    topology = dict(machine.topology, pus=machine.topology["pus"][:1])
    one = replace(machine, topology=topology)
    benchmark = get("mem.loaded_latency")
    params = benchmark.resolve({"delay": "0,100", "bytes": "4MiB"}, one)
    assert params["injectors"] == []
    docs = benchmark.run(params, one)
    assert [d["params"]["delay"] for d in docs] == [0, 100]
    assert all(d["not_measurable"] == NEEDS_TWO_CPUS for d in docs)


# -- the analysis, on results made up to know the answer --------------------------------------------
class MadeUpRun:
    """What loaded_curves reads of a RunData: the measured results."""

    def __init__(self, points: dict[int, tuple[float, float, float]]):
        self.found = [
            made_up_result(delay, metric, value)
            for delay, values in points.items()
            for metric, value in zip(("latency_ns", "idle_latency_ns", "injected_Bps"), values)
        ]

    def measured(self, benchmark: str) -> list[Result]:
        return [r for r in self.found if r.benchmark == benchmark]


def made_up_result(delay: int, metric: str, value: float) -> Result:
    samples = [value * (1 + k / 1000) for k in range(-5, 6)]  # 11 samples, +-0.5 %
    s = summarize(samples)
    params = {"delay": delay, "mix": "read", "cpu": 0, "injectors": [1, 2, 3]}
    return Result(
        0, 1, "mem.loaded_latency", params, metric, "", samples, s.n, s.median, s.ci_lo,
        s.ci_hi, s.min, s.max, None, [], {},
    )  # fmt: skip


def test_saturation_is_the_first_point_whose_latency_doubled():
    # delay: (loaded ns, idle ns, injected byte/s); the 100 ns point is 1.9x: not yet
    run = MadeUpRun(
        {800: (110, 100, 5e9), 400: (150, 100, 10e9), 100: (190, 100, 20e9), 0: (400, 100, 25e9)}
    )
    [curve] = loaded_curves(run)
    assert [p.delay_ns for p in curve.points] == [800, 400, 100, 0]  # by bandwidth
    assert curve.idle.median == pytest.approx(100)
    assert curve.saturation is not None and curve.saturation.delay_ns == 0
    assert curve.peak.slowdown.median == pytest.approx(4.0)
    calm = MadeUpRun({800: (110, 100, 5e9), 0: (150, 100, 25e9)})
    assert loaded_curves(calm)[0].saturation is None


def test_curves_of_other_placements_are_apart_and_say_their_nodes():
    run = MadeUpRun({800: (110, 100, 5e9), 0: (150, 100, 25e9)})
    placed = [replace(r, params={**r.params, "node": 0, "inject_node": "1"}) for r in run.found]
    run.found += placed
    assert {c.label for c in loaded_curves(run)} == {
        "mix=read, cpu 0, 3 injector(s)",
        "mix=read, cpu 0, 3 injector(s), chased memory 0, injected 1",
    }
