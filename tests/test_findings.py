"""Findings as data (perfatlas.findings, schema perfatlas.findings/1): each analysis's findings on
synthetic results with known answers, the schema on the findings of real measured runs, the store
(round trip, migration of older databases), and show / export / measure."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import replace
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from mpi_helpers import mpirun

from perfatlas.common.stats import summarize
from perfatlas.findings.compute import compute_findings, run_findings, store_findings
from perfatlas.findings.model import Finding, Interval, Sources
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData
from perfatlas.store.schema import SCHEMA_VERSION

DATA = Path(__file__).parent / "data"
SCHEMA = json.loads(
    (resources.files("perfatlas.findings") / "findings.schema.json").read_text(encoding="utf-8")
)
TOPOLOGY = {
    "caches": [
        {"level": 1, "type": "data", "size_bytes": 32 * 1024},
        {"level": 2, "type": "unified", "size_bytes": 1024 * 1024},
    ]
}


def validate(document: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


def result(id_: int, benchmark: str, params: dict, metric: str, samples, unit: str = "ns", **doc):
    """A stored result as the store reads it back, its statistics from stats.summarize."""
    samples = [float(x) for x in samples]
    s = summarize(samples)
    document = {"benchmark": benchmark, "params": params, **doc}
    return Result(
        id_, 1, benchmark, params, metric, unit, samples, s.n, s.median, s.ci_lo, s.ci_hi,
        s.min, s.max, None, [], document,
    )  # fmt: skip


def run_data(results: list[Result], scenarios: list[dict] | None = None) -> RunData:
    run = {"id": 1, "topology": TOPOLOGY, "status": "complete"}
    return RunData(run, results, [], scenarios=scenarios or [])


def of_kind(found: list[Finding], kind: str) -> list[Finding]:
    return [f for f in found if f.kind == kind]


def noisy(median: float, n: int = 9, seed: int = 0, spread: float = 0.005) -> np.ndarray:
    return median * (1 + spread * np.random.default_rng(seed).standard_normal(n))


# -- each analysis, known answers ------------------------------------------------------------------
def test_noise_slowdown_and_its_line_from_a_planted_periodic_detour():
    """FWQ quanta of 10 us, every 10th one 5 us longer: 5 % slowdown by construction, recurring
    every 10 quanta (105 us: 9524 Hz)."""
    quanta = np.full(20_000, 10_000.0)
    quanta[::10] += 5_000.0
    params = {"method": "fwq", "cpus": [0], "cpu": 0, "duration": 0.2, "quantum": 1e-5}
    noise = result(7, "noise", params, "quantum_ns", quanta, timer={"resolution_ns": 20.0})
    found = compute_findings(run_data([noise]))
    (slowdown,) = of_kind(found, "noise.slowdown")
    assert slowdown.value == pytest.approx(5.0) and slowdown.unit == "%"
    assert slowdown.interval.low <= 5.0 <= slowdown.interval.high
    assert slowdown.sources == Sources((7,))
    lines = of_kind(found, "noise.line")
    assert lines and lines[0].value == pytest.approx(1e9 / 105_000, rel=0.01)
    assert lines[0].details["share"] > 0.5 and lines[0].interval is None
    assert of_kind(found, "noise.bsp_slowdown")


def comm_distance(peer: int, median: float, hosts: list[str], id_: int) -> Result:
    ranks = [{"rank": r, "host": h} for r, h in enumerate(hosts)]
    return result(
        id_,
        "comm.distance",
        {"np": len(hosts), "peer": peer, "latency_bytes": 8},
        "latency_ns",
        noisy(median, seed=peer),
        placement={"ranks": ranks, "link": "inter-node"},
    )


def test_a_slow_host_gives_an_anomaly_and_a_suspect_host():
    hosts = [f"h{i}" for i in range(6)]
    slow = 4
    results = [comm_distance(p, 9000.0 if p == slow else 2000.0, hosts, p) for p in range(1, 6)]
    found = compute_findings(run_data(results))
    (anomaly,) = of_kind(found, "comm.anomaly")
    assert anomaly.subject.startswith("rank 4") and anomaly.severity == "warning"
    assert anomaly.value == pytest.approx(9.0, rel=0.02) and anomaly.unit == "us"
    assert anomaly.interval.low <= anomaly.value <= anomaly.interval.high
    assert anomaly.sources == Sources((slow,))
    (suspect,) = of_kind(found, "comm.suspect_host")
    assert suspect.subject.startswith("host h4") and suspect.sources == Sources((slow,))
    assert not of_kind(found, "comm.no_anomaly")


def test_a_uniform_set_of_links_is_said_to_have_no_anomaly():
    hosts = [f"h{i}" for i in range(6)]
    found = compute_findings(run_data([comm_distance(p, 2000.0, hosts, p) for p in range(1, 6)]))
    (clean,) = of_kind(found, "comm.no_anomaly")
    assert clean.verdict == "no anomaly" and clean.value == 5
    assert not of_kind(found, "comm.anomaly")


def test_a_slow_hotspot_sender_is_an_anomaly_with_its_own_interval():
    """Sender rank 3 of 5 gets half the others' bandwidth: its anomaly carries the interval of
    its own share of the result's samples (samples are sender-major), with its coverage."""
    senders = [1, 2, 3, 4, 5]
    shares = [noisy(5e8 if s == 3 else 1e9, seed=s) for s in senders]
    hotspot = result(
        9,
        "comm.hotspot",
        {"np": 6, "senders": 5, "bytes": 16384},
        "bandwidth_per_sender_Bps",
        np.concatenate(shares),
        unit="byte/s",
        derived={"sender_ranks": senders},
        placement={"ranks": [{"rank": r, "host": f"h{r}"} for r in range(6)]},
    )
    (anomaly,) = of_kind(compute_findings(run_data([hotspot])), "comm.anomaly")
    assert anomaly.subject.startswith("sender rank 3") and anomaly.unit == "GB/s"
    assert anomaly.interval.low <= anomaly.value <= anomaly.interval.high
    assert anomaly.interval.confidence >= 0.95  # 9 samples of its own
    assert anomaly.value == pytest.approx(float(np.median(shares[2])) * 1e-9)
    assert anomaly.details["figures_checked"] == 5 and anomaly.details["groups_checked"] == 1


def test_collective_growth_logarithmic_with_its_slope():
    """latency = 1000 + 3000 log2 P ns over P = 2 .. 32: logarithmic, 3 us per doubling."""
    results = [
        result(
            p,
            "comm.allreduce",
            {"np": 32, "processes": p, "bytes": 8},
            "latency_ns",
            [1000 + 3000 * np.log2(p)] * 7,
        )
        for p in (2, 4, 8, 16, 32)
    ]
    (growth,) = of_kind(compute_findings(run_data(results)), "comm.collective_growth")
    assert growth.verdict.startswith("logarithmic")
    assert growth.value == pytest.approx(3.0) and growth.unit == "us per doubling of P"
    assert growth.sources == Sources((2, 4, 8, 16, 32))


def test_node_asymmetry_names_the_slow_node_only():
    results = [
        result(
            i,
            "mem.bandwidth",
            {"op": "read", "bytes": 1 << 28, "threads": 1, "host": f"n{i}"},
            "bandwidth_Bps",
            noisy(5e9 if i == 3 else 10e9, seed=i),
            unit="byte/s",
        )
        for i in range(1, 5)
    ]
    found = of_kind(compute_findings(run_data(results)), "cluster.node_slowdown")
    assert len(found) == 4
    flagged = {f.subject.split(":")[0]: f for f in found if f.severity == "warning"}
    assert list(flagged) == ["host n3"] and flagged["host n3"].value == pytest.approx(2, rel=0.05)
    assert all(f.severity == "info" for f in found if f not in flagged.values())


def test_memory_levels_and_peak_bandwidth():
    """Latency 1 ns up to 32 KiB, 4 ns up to 1 MiB, 80 ns beyond: L1, L2 and memory; the peak
    bandwidth is the working set with the highest median."""
    sizes = [4096 * 2**k for k in range(13)]  # 4 KiB .. 16 MiB
    latency = [1.0 if s <= 32768 else 4.0 if s <= 1 << 20 else 80.0 for s in sizes]
    results = [
        result(
            i + 1,
            "mem.latency",
            {"bytes": s, "chain": "page", "cpus": [0]},
            "latency_ns",
            noisy(v, seed=i),
        )
        for i, (s, v) in enumerate(zip(sizes, latency))
    ]
    results += [
        result(
            100 + k,
            "mem.bandwidth",
            {"op": "triad", "bytes": s, "threads": 1},
            "bandwidth_Bps",
            noisy(v, seed=k),
            unit="byte/s",
        )
        for k, (s, v) in enumerate([(16384, 40e9), (262144, 60e9), (1 << 26, 12e9)])
    ]
    found = compute_findings(run_data(results))
    levels = {f.subject.split(" ")[0]: f for f in of_kind(found, "memory.level")}
    assert set(levels) == {"L1", "L2d", "L2", "memory"} - {"L2d"}
    assert levels["L1"].value == pytest.approx(1.0, rel=0.02)
    assert levels["L2"].value == pytest.approx(4.0, rel=0.02)
    assert levels["memory"].value == pytest.approx(80.0, rel=0.02)
    assert levels["L2"].interval.low <= 4.0 <= levels["L2"].interval.high
    (peak,) = of_kind(found, "memory.peak_bandwidth")
    assert peak.value == pytest.approx(60.0, rel=0.01) and peak.sources == Sources((101,))


@pytest.mark.parametrize("curve", sorted(p.name for p in (DATA / "latency-curves").glob("*.json")))
def test_memory_levels_of_recorded_curves_are_the_expected_ones(curve):
    """The latency curves of tests/data/latency-curves (their expected levels written beside
    them): one memory.level finding per level, at its latency."""
    recorded = json.loads((DATA / "latency-curves" / curve).read_text())
    series = recorded["series"][0]
    results = [
        result(i + 1, "mem.latency", {"bytes": b, "chain": "page", "cpus": [0]}, "latency_ns", [v])
        for i, (b, v) in enumerate(zip(series["sizes"], series["ns"]))
    ]
    data = run_data(results)
    data.run["topology"] = {"caches": recorded["hwloc_caches"]}
    found = {
        f.subject.split(" (")[0]: f
        for f in of_kind(compute_findings(data), "memory.level")
        if f.value is not None
    }
    expected = {level["name"]: level for level in series["expected_levels"]}
    assert set(found) == set(expected)
    for name, level in expected.items():
        assert found[name].value == pytest.approx(level["latency_ns"], rel=level["latency_rel"])


def test_loaded_latency_names_where_the_latency_doubled():
    """Idle 100 ns; loaded 110, 150, 400 ns at 5, 10, 25 GB/s injected: 4x at the peak, doubled
    first at 25 GB/s."""
    results, id_ = [], 0
    for delay, (loaded, injected) in {800: (110, 5e9), 400: (150, 10e9), 0: (400, 25e9)}.items():
        params = {"delay": delay, "mix": "read", "cpu": 0, "injectors": [1]}
        for metric, value in (
            ("latency_ns", loaded),
            ("idle_latency_ns", 100),
            ("injected_Bps", injected),
        ):
            id_ += 1
            results.append(
                result(id_, "mem.loaded_latency", params, metric, noisy(value, seed=id_))
            )
    (found,) = of_kind(compute_findings(run_data(results)), "memory.loaded_latency")
    assert found.value == pytest.approx(4.0, rel=0.02) and found.severity == "notice"
    assert found.verdict == "latency doubled from 25 GB/s injected"
    assert found.sources == Sources((7, 8, 9))


def test_core_to_core_levels_match_the_hwloc_objects_they_were_made_from(monkeypatch):
    """A matrix generated from a 4-socket, 2-core, 2-thread topology (test_core_to_core): every
    level found matches an hwloc object, at 8 ns x 2^k."""
    from test_core_to_core import ZOO_DIR, _synthetic

    from perfatlas.machine.topology import Machine

    monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / "16em64t-4s2c2t.xml"))
    monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
    topology = Machine.detect().topology
    directed = _synthetic(topology, seed=3).directed.values()
    results = [replace(r, id=i + 1) for i, r in enumerate(directed)]
    data = run_data(results)
    data.run["topology"] = topology
    found = of_kind(compute_findings(data), "cpu.core_to_core_level")
    assert len(found) == 3  # core (its 2 PUs), package, machine
    assert all(f.verdict.startswith("matches hwloc") and f.severity == "info" for f in found)
    for k, f in enumerate(found):
        assert f.value == pytest.approx(8.0 * 2**k, rel=0.1)


def test_peak_flops_per_precision_isa_and_threads():
    derived = {
        "operations": "fma",
        "lanes": 4,
        "nominal_clock_hz": 2e9,
        "nominal_clock_source": "x",
    }
    results = [
        result(
            t,
            "cpu.peakflops",
            {"precision": "double", "isa": "avx2", "threads": t},
            "flop_rate",
            noisy(32e9 * t, seed=t),
            unit="flop/s",
            derived={**derived, "threads": t},
        )
        for t in (1, 2)
    ]
    found = of_kind(compute_findings(run_data(results)), "cpu.peakflops")
    assert [f.subject for f in found] == ["double avx2 fma, 1 thread", "double avx2 fma, 2 threads"]
    assert [round(f.value) for f in found] == [32, 64] and found[0].unit == "Gflop/s"
    assert found[0].details["flop_per_cycle"] == pytest.approx(16, rel=0.01)


def matrix(slowdown: list[list[float]], intervals=None) -> dict:
    document = {
        "id": 3,
        "kind": "matrix",
        "name": "interference matrix",
        "classes": ["stream", "compute"],
        "kernels": {"stream": "triad", "compute": "dgemm"},
        "bytes": 240_000,
        "cpu_list": "0,1",
        "slowdown": slowdown,
        "jobs": [],
    }
    if intervals is not None:
        document["slowdown_ci"] = intervals
    return document


def test_interference_cells_with_and_without_intervals():
    found = of_kind(
        compute_findings(run_data([], [matrix([[1.5, 1.0], [0.9, 1.02]])])),
        "scenario.interference",
    )
    assert [f.value for f in found] == [1.5, 1.0, 0.9, 1.02]
    assert all(f.interval is None and f.interval_reason for f in found)
    assert found[0].verdict == "1.50x slower together (one measurement)"
    assert found[0].severity == "notice" and found[2].severity == "info"
    assert found[0].sources == Sources(scenarios=(3,))
    cis = [[[1.4, 1.6], [0.95, 1.05]], [[0.8, 0.85], [1.01, 1.06]]]
    document = matrix([[1.5, 1.0], [0.82, 1.03]], cis)
    found = of_kind(compute_findings(run_data([], [document])), "scenario.interference")
    assert [f.verdict for f in found] == [
        "slower",
        "no measurable interference",
        "faster",
        "measurable, under 10%",
    ]
    assert [f.severity for f in found] == ["notice", "info", "info", "info"]
    # the matrix's own verdicts, where it stored them, are the findings'
    document["verdicts"] = [["a", "b"], ["c", "d"]]
    found = of_kind(compute_findings(run_data([], [document])), "scenario.interference")
    assert [f.verdict for f in found] == ["a", "b", "c", "d"]


def test_a_model_is_judged_against_the_measured_interval():
    from perfatlas.app.findings_apps import model_verdict
    from perfatlas.common.stats import Ratio

    measured = Ratio(0.8, 0.75, 0.85)
    assert model_verdict(0.82, measured).startswith("the model's 0.82 lies in")
    assert model_verdict(0.95, measured).startswith("the model over-predicts")
    assert model_verdict(0.5, measured).startswith("the model under-predicts")


def test_a_finding_without_interval_needs_a_reason_and_never_holds_nan():
    with pytest.raises(ValueError, match="no interval and no reason"):
        Finding("x.y", "s", 1.0, "", "m", Sources())
    with pytest.raises(ValueError, match="value"):
        Finding("x.y", "s", float("nan"), "", "m", Sources(), interval=Interval(0, 1))
    f = Finding("x.y", "s", 1.0, "", "m", Sources(), Interval(0, 2), details={"z": float("inf")})
    assert f.as_dict()["details"] == {"z": None}
    odd = {"n": np.int64(3), "x": [np.float64("nan"), np.float32(0.5)]}
    shown = Finding("x.y", "s", 1.0, "", "m", Sources(), Interval(0, 2), details=odd).as_dict()
    assert json.loads(json.dumps(shown, allow_nan=False))["details"] == {"n": 3, "x": [None, 0.5]}
    assert Finding.from_dict(f.as_dict()) == Finding(
        "x.y", "s", 1.0, "", "m", Sources(), Interval(0, 2), details={"z": None}
    )


def test_the_findings_table_states_each_interval_s_coverage_or_why_there_is_none():
    """A median of 9 samples: its order-statistic interval with its exact coverage (96.1 %); of
    3: the full range, 75 %; of one: no interval, and why; a bootstrap ratio: 95 %. The table
    states each; the coverage and the count of samples survive the document and its schema."""
    from rich.console import Console

    from perfatlas.common.stats import Ratio
    from perfatlas.findings.compute import RunFindings
    from perfatlas.findings.model import median_of, ratio_of
    from perfatlas.terminal.findings_table import findings_table

    def figure(subject: str, value: float | None, interval: dict) -> Finding:
        return Finding("x.figure", subject, value, "ns", "m", Sources(), **interval)

    found = [
        figure(f"n={n}", *median_of(result(n, "b", {}, "latency_ns", noisy(100.0, n))))
        for n in (9, 3, 1)
    ]
    found.append(figure("ratio", *ratio_of(Ratio(1.5, 1.4, 1.6))))
    document = RunFindings(1, "stored", "test", found).document()
    validate(document)
    assert [Finding.from_dict(f) for f in document["findings"]] == found
    assert [f["interval"] and f["interval"]["samples"] for f in document["findings"]] == [
        9,
        3,
        None,
        None,
    ]
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(
        findings_table(RunFindings(1, "stored", "test", found))
    )
    lines = buffer.getvalue().splitlines()
    for subject, coverage in {
        "n=9": "96.1 % CI",
        "n=3": "75 %, 3 samples",
        "n=1": "one sample",
        "ratio": "95 % CI",
    }.items():
        line = " ".join(next(line for line in lines if f" {subject} " in line).split())
        assert f" {coverage} " in line, line


# -- real runs: schema, determinism, store ---------------------------------------------------------
def test_the_findings_of_a_real_run_follow_the_schema_and_cite_its_results(small_run):
    store = Store(small_run.db, read_only=True)
    data = RunData.load(store, small_run.run_id)
    found = run_findings(data)
    assert found.origin == "stored"  # `perfatlas run` stored them as the run ended
    document = found.document()
    validate(document)
    kinds = {f["kind"] for f in document["findings"]}
    assert {"memory.level", "memory.peak_bandwidth", "memory.contention"} <= kinds
    assert "noise.slowdown" in kinds
    ids = {r.id for r in data.launches}
    assert all(set(f["sources"]["results"]) <= ids for f in document["findings"])
    # deterministic: recomputed from the stored results, the same findings
    data.stored_findings = None
    data.memo.clear()  # run_findings computes once per RunData
    recomputed = run_findings(data)
    assert recomputed.origin == "recomputed"
    assert [f.as_dict() for f in recomputed.findings] == document["findings"]


def test_the_report_states_each_finding_s_coverage_as_the_terminal_does(small_run):
    from perfatlas.findings.render import coverage_text, value_text
    from perfatlas.report.blocks import Details
    from perfatlas.report.section_findings import findings_section

    data = RunData.load(Store(small_run.db, read_only=True), small_run.run_id)
    found = run_findings(data).findings
    (every,) = [b.blocks[0] for b in findings_section(data) if isinstance(b, Details)]
    coverage = every.columns.index("coverage")
    assert [row[coverage] for row in every.rows] == [coverage_text(f) for f in found]
    assert [row[every.columns.index("value [interval]")] for row in every.rows] == [
        value_text(f) for f in found
    ]
    assert any(f.interval is None for f in found) and any(f.interval for f in found)


def test_findings_round_trip_and_an_older_database_is_migrated_without_loss(small_run, tmp_path):
    old = tmp_path / "v5.db"
    with sqlite3.connect(small_run.db) as source, sqlite3.connect(old) as copy:
        source.backup(copy)
    with sqlite3.connect(old) as db:  # as perfatlas wrote it before findings were stored
        db.execute("DROP TABLE findings")
        db.execute("UPDATE schema_version SET version = 5")
        before = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    store = Store(old)
    assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert store.db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == before
    assert store.findings(small_run.run_id) is None
    assert run_findings(RunData.load(store, small_run.run_id)).origin == "recomputed"
    stored = store_findings(store, RunData.load(store, small_run.run_id))
    assert store.findings(small_run.run_id) == stored.document()
    store_findings(store, RunData.load(store, small_run.run_id))  # replaced, not added
    assert store.db.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 1
    store.close()
    again = Store(old, read_only=True)
    assert run_findings(RunData.load(again, small_run.run_id)).origin == "stored"


def test_a_schema_3_store_is_migrated_and_its_findings_recomputed(tmp_path):
    """tests/data/store-v3.sql, made by perfatlas at schema version 3: opened, it is migrated
    with every row kept, and its runs' findings are recomputed from their results."""
    path = tmp_path / "v3.db"
    with sqlite3.connect(path) as db:
        db.executescript((DATA / "store-v3.sql").read_text())
        counts = [
            db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "results")
        ]
    store = Store(path, read_only=True)  # read-only: upgraded first, as show and export do
    assert [len(store.runs()), sum(len(store.results(r["id"])) for r in store.runs())] == counts
    for run in store.runs():
        assert store.findings(run["id"]) is None
        found = run_findings(RunData.load(store, run["id"]))
        assert found.origin == "recomputed"
        validate(found.document())


def test_the_proxies_models_are_held_against_their_measured_efficiency(tmp_path):
    """A real run of app.sweep on 1 and 2 ranks and app.spmv on 2: the KBA and E1/E2 models
    against the measured efficiency, each with its bootstrap interval."""
    import contextlib

    from perfatlas.app.analysis_sweep import weak_scaling
    from perfatlas.cli.entry import main

    mpirun(2)
    suite = tmp_path / "proxies.toml"
    suite.write_text(
        '[[step]]\nbenchmark = "app.sweep"\nit = 6\njt = 6\nkt = 6\nmk = 3\nrepeat = 5\n'
        "np = [1, 2]\n\n"
        '[[step]]\nbenchmark = "app.spmv"\nproblem = "laplace2d"\nn = 10\nnp = 2\n'
        "samples = 3\nwarmup = 1\nmin_sample_time = 0\ntime_limit = 0.05\n"
    )
    db = tmp_path / "p.db"
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["--db", str(db), "run", str(suite), "--out", str(tmp_path)])
    assert code == 0
    data = RunData.load(Store(db, read_only=True), 1)
    found = run_findings(data)
    validate(found.document())
    (sweep,) = of_kind(found.findings, "app.sweep.efficiency")
    (point,) = [p for s in weak_scaling(data.results) for p in s.points if p.np == 2]
    assert sweep.details["predicted"] == point.model_efficiency
    assert sweep.value == point.measured.median
    assert (sweep.interval.low, sweep.interval.high) == (point.measured.ci_lo, point.measured.ci_hi)
    inside = sweep.interval.low <= point.model_efficiency <= sweep.interval.high
    assert sweep.verdict.startswith("the model's" if inside else "the model ")
    spmv = of_kind(found.findings, "app.spmv.efficiency")
    assert spmv and all(f.interval is not None and f.verdict for f in spmv)
    assert {f.details["model"] for f in spmv} >= {"E1", "E2"}


# -- the command line ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def noise_run(tmp_path_factory):
    """`perfatlas measure noise` for 0.3 s on cpu 0, through the CLI: (db, stdout)."""
    import contextlib

    from perfatlas.cli.entry import main

    db = tmp_path_factory.mktemp("noise") / "n.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--db", str(db), "measure", "noise", "cpus=0", "duration=0.3s"])
    assert code == 0
    return db, out.getvalue()


def test_measure_prints_the_noise_slowdown_with_its_interval_and_its_lines(noise_run):
    db, out = noise_run
    assert "findings of run 1 (stored with the run" in out
    slowdown = next(line for line in out.splitlines() if "noise.slowdown" in line)
    assert "%" in slowdown and "[" in slowdown  # value [low, high]
    found = run_findings(RunData.load(Store(db, read_only=True), 1))
    kinds = [f.kind for f in found.findings]
    assert kinds[0] == "noise.slowdown" and "noise.bsp_slowdown" in kinds
    assert out.count("noise.line") == kinds.count("noise.line")


def test_show_and_export_give_the_same_findings(cli, noise_run):
    db = noise_run[0]
    shown = cli("show", "1", db_path=db)
    assert shown.code == 0 and "noise.slowdown" in shown.out
    as_json = cli("show", "1", "--json", db_path=db)
    document = json.loads(as_json.out)
    validate(document["findings"])
    assert document["run"]["id"] == 1 and document["results"][0]["benchmark"] == "noise"
    exported = json.loads(cli("export", "1", db_path=db).out)
    assert exported["findings"] == document["findings"]
    rows = list(
        csv.DictReader(io.StringIO(cli("export", "1", "--format", "findings-csv", db_path=db).out))
    )
    assert [r["kind"] for r in rows] == [f["kind"] for f in document["findings"]["findings"]]
    first = rows[0]
    assert float(first["low"]) <= float(first["value"]) <= float(first["high"])
    assert first["results"] == "1"


@pytest.mark.parametrize(
    "args, says",
    [
        (("show", "9"), "run 9 is not in"),
        (("show", "--json"), "--json shows one run"),
        (("export", "9", "--format", "findings-csv"), "run 9 is not in"),
        (("export", "1", "--format", "findings"), "invalid choice: 'findings'"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(cli, noise_run, args, says):
    said = cli(*args, db_path=noise_run[0])
    assert said.code == 2 and says in said.err and not said.out


def test_findings_that_cannot_be_stored_are_said_and_the_run_keeps_its_results(cli, monkeypatch):
    import perfatlas.findings.compute as compute

    def broken(store, run_id):
        raise RuntimeError("planted")

    monkeypatch.setattr(compute, "store_findings", broken)
    said = cli("measure", "mem.latency", "bytes=16KiB", "samples=3")
    assert said.code == 0
    assert "findings of run 1 not stored (RuntimeError: planted)" in said.err
    store = Store(cli.db, read_only=True)
    assert store.results(1) and store.findings(1) is None
    assert store.run(1)["status"] == "complete"


def test_every_finding_kind_is_declared_with_its_direction_by_its_source(monkeypatch):
    """Directions live where findings are made (finding_source kinds): perfatlas check reads
    them, and a source that makes a kind it does not declare stops compute_findings."""
    from perfatlas.findings import compute
    from perfatlas.findings.finding_sources import Better, FindingSource, declared_kinds

    kinds = declared_kinds()
    assert kinds["memory.peak_bandwidth"] is Better.HIGHER
    assert kinds["comm.pingpong_latency"] is Better.LOWER
    assert kinds["noise.line"] is Better.NEITHER
    planted = Finding("memory.surprise", "s", 1.0, "ns", "a test", Sources(), Interval(0, 2))
    quiet = FindingSource("quiet", 1, lambda data: [planted], {"memory.level": Better.LOWER})
    monkeypatch.setattr(compute, "all_sources", lambda: [quiet])
    with pytest.raises(ValueError, match="'quiet' made a finding of kind 'memory.surprise'"):
        compute.compute_findings(RunData({"id": 1}, []))
