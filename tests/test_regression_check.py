"""Regression checks (perfatlas check, perfatlas baseline; docs/guide/regression-checks.md) on
recorded runs: synthetic stored results with known answers (a planted 20 % loss, the same
distribution again, overlapping intervals), the exit statuses, the JUnit XML, bad input as one
sentence and exit 2, a store that a check leaves as it was, the schema 7 migration, and
--remeasure on real measurements."""

from __future__ import annotations

import hashlib
import sqlite3
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from perfatlas.regression.direction import metric_higher_is_better
from perfatlas.regression.verdicts import parse_tolerance
from perfatlas.store.database import Store
from perfatlas.store.schema import SCHEMA_VERSION

MACHINE = "0123456789abcdef"
TOPOLOGY = {"caches": [{"level": 1, "type": "data", "size_bytes": 32 * 1024}], "pus": []}


def tight(median: float, seed: int, n: int = 11, spread: float = 0.01) -> list[float]:
    return list(median * (1 + spread * np.random.default_rng(seed).standard_normal(n)))


def record(db, figures: dict, fingerprint: str = MACHINE, seed: int = 0, host: str = "h") -> int:
    """A stored run of mem.latency (ns) and mem.bandwidth (byte/s) at 1 MiB with the given
    medians: figures = {"latency_ns": (median, spread), "bandwidth_Bps": (median, spread)}."""
    store = Store(db)
    run_id = store.start_run(
        fingerprint=fingerprint, topology=TOPOLOGY, context={}, suite=None, argv=["test"],
        software={},
    )  # fmt: skip
    store.db.execute("UPDATE runs SET host = ? WHERE id = ?", (host, run_id))
    store.db.commit()
    for i, (metric, (median, spread)) in enumerate(sorted(figures.items())):
        benchmark = "mem.latency" if metric == "latency_ns" else "mem.bandwidth"
        params = {"bytes": 2**20, "cpus": [0]}
        if benchmark == "mem.bandwidth":
            params["op"] = "read"
        document = {
            "schema": "perfatlas.result/1",
            "benchmark": benchmark,
            "params": params,
            "samples": {metric: tight(median, seed * 10 + i, spread=spread)},
            "units": {metric: "ns" if metric == "latency_ns" else "byte/s"},
        }
        store.add_document(run_id, document, [])
    store.finish_run(run_id, "complete")
    store.close()
    return run_id


BASE = {"latency_ns": (80.0, 0.01), "bandwidth_Bps": (20e9, 0.01)}


def verdicts(cli, *args: str) -> tuple[int, dict[str, str]]:
    """The exit status of `perfatlas check ARGS`, and each result's metric -> its verdict, read
    from its JUnit XML (the testcase's text starts with the verdict)."""
    junit = cli.db.parent / "verdicts.xml"
    said = cli("check", *args, "--junit", str(junit))
    found = {}
    if said.code in (0, 1):
        for case in ET.parse(junit).getroot().iter("testcase"):
            for metric in ("latency_ns", "bandwidth_Bps"):
                if case.get("name").endswith(metric):
                    text = next(iter(case)).get("message") or next(iter(case)).text
                    found[metric] = text.split(":")[0]
    return said.code, found


def digest(path) -> str:
    """The database's contents (a read-only reader cannot change them)."""
    with sqlite3.connect(path) as db:
        dump = "\n".join(db.iterdump())
    return hashlib.sha256(dump.encode()).hexdigest()


def test_the_same_distribution_again_is_no_regression(cli):
    record(cli.db, BASE, seed=0)
    record(cli.db, BASE, seed=1)
    assert verdicts(cli, "2", "--against", "1") == (
        0,
        {"latency_ns": "ok", "bandwidth_Bps": "ok"},
    )


def test_a_planted_loss_is_a_regression_and_a_gain_an_improvement(cli, tmp_path):
    record(cli.db, BASE, seed=0)
    record(cli.db, {"latency_ns": (64.0, 0.01), "bandwidth_Bps": (16e9, 0.01)}, seed=1)
    junit = tmp_path / "check.xml"
    said = cli("check", "2", "--against", "1", "--junit", str(junit))
    assert said.code == 1, said.err
    assert verdicts(cli, "2", "--against", "1")[1] == {
        "latency_ns": "improved",
        "bandwidth_Bps": "regression",
    }
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert suite.tag == "testsuite" and len(cases) == int(suite.get("tests")) == 3
    failed = sorted(c.get("name") for c in cases if c.find("failure") is not None)
    assert suite.get("failures") == str(len(failed)) == "2"  # the result and its finding
    assert "bandwidth_Bps" in failed[0] and failed[1].startswith("memory.peak_bandwidth")
    # with a 35 % tolerance the same loss is within it
    assert cli("check", "2", "--against", "1", "--tolerance", "35%").code == 0
    # only the metric asked for is judged
    only = verdicts(cli, "2", "--against", "1", "--metrics", "latency_ns")
    assert only == (0, {"latency_ns": "improved"})


def test_a_loss_within_overlapping_intervals_is_not_significant(cli):
    record(cli.db, {"bandwidth_Bps": (20e9, 0.3)}, seed=0)
    record(cli.db, {"bandwidth_Bps": (17e9, 0.3)}, seed=1)
    assert verdicts(cli, "2", "--against", "1") == (0, {"bandwidth_Bps": "not significant"})


def test_named_baselines_set_list_replace_and_remove(cli):
    record(cli.db, BASE, seed=0)
    record(cli.db, {"latency_ns": (80.0, 0.01), "bandwidth_Bps": (10e9, 0.01)}, seed=1)
    record(cli.db, BASE, seed=2)
    assert cli("baseline", "set", "nightly", "1").code == 0
    assert cli("check", "3", "--against", "nightly").code == 0
    replaced = cli("baseline", "set", "nightly", "2")
    assert replaced.code == 0 and "was run 1" in replaced.out
    assert cli("check", "3", "--against", "nightly").code == 0  # 3 is better than 2
    assert cli("check", "2", "--against", "nightly").code == 0  # 2 against itself
    listed = cli("baseline", "list")
    assert "nightly" in listed.out and listed.code == 0
    assert cli("baseline", "rm", "nightly").code == 0
    assert "nightly" not in cli("baseline", "list").out
    assert cli("show", "2").code == 0  # the run is kept


def test_a_check_leaves_the_store_as_it_was(cli, tmp_path):
    record(cli.db, BASE, seed=0)
    record(cli.db, {"latency_ns": (90.0, 0.01), "bandwidth_Bps": (16e9, 0.01)}, seed=1)
    cli("baseline", "set", "before", "1")
    before = digest(cli.db)
    assert cli("check", "2", "--against", "before", "--junit", str(tmp_path / "j.xml")).code == 1
    assert cli("check", "2", "--against", "nope").code == 2
    assert digest(cli.db) == before


def test_another_machine_needs_any_machine(cli):
    record(cli.db, BASE, seed=0, host="old")
    record(cli.db, BASE, fingerprint="fedcba9876543210", seed=1, host="new")
    said = cli("check", "2", "--against", "1")
    assert said.code == 2 and "another machine" in said.err and "--any-machine" in said.err
    assert cli("check", "2", "--against", "1", "--any-machine").code == 0


@pytest.mark.parametrize(
    "args, says",
    [
        (("check", "9", "--against", "1"), "run 9 is not in"),
        (("check", "2", "--against", "9"), "run 9 is not in"),
        (("check", "2", "--against", "weekly"), "no baseline named 'weekly'"),
        (("check", "2", "--against", "1", "--metrics", "joules"), "unknown metric 'joules'"),
        (("check", "3", "--against", "1"), "nothing comparable"),
        (("check", "2", "--against", "1", "--tolerance", "abc"), "is not a tolerance"),
        (("check", "2", "--against", "1", "--tolerance=-5%"), "is not a tolerance"),
        (("check", "2", "--against", "1", "--tolerance", "100%"), "is not a tolerance"),
        (("check", "2", "--against", "1", "--tolerance", "nan"), "is not a tolerance"),
        (("baseline", "set", "42", "1"), "reads as a run id"),
        (("baseline", "set", "../x", "1"), "not a safe name"),
        (("baseline", "set", "nightly"), "give 'baseline set NAME RUN'"),
        (("baseline", "set", "nightly", "9"), "run 9 is not in"),
        (("baseline", "rm", "weekly"), "no baseline named 'weekly'"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(cli, args, says):
    record(cli.db, BASE, seed=0)
    record(cli.db, BASE, seed=1)
    store = Store(cli.db)  # a run of another benchmark: nothing comparable to run 1
    run_id = store.start_run(
        fingerprint=MACHINE, topology=TOPOLOGY, context={}, suite=None, argv=[], software={}
    )
    store.add_document(
        run_id,
        {"schema": "perfatlas.result/1", "benchmark": "mem.latency", "params": {"bytes": 4096},
         "samples": {"latency_ns": [1.0, 1.1, 1.2]}, "units": {"latency_ns": "ns"}},
        [],
    )  # fmt: skip
    store.finish_run(run_id, "complete")
    store.close()
    said = cli(*args)
    assert said.code == 2, said
    assert says in said.err and len(said.err.strip().splitlines()) == 1


def test_the_direction_of_each_unit():
    assert metric_higher_is_better("latency_ns", "ns") is False
    assert metric_higher_is_better("runtime_s", "s") is False
    assert metric_higher_is_better("cycles_per_iteration", "cycle") is False
    assert metric_higher_is_better("bandwidth_Bps", "byte/s") is True
    assert metric_higher_is_better("instructions_per_cycle", "instruction/cycle") is True
    assert metric_higher_is_better("parallel_efficiency", "1") is True
    assert metric_higher_is_better("something", "widgets") is None
    assert parse_tolerance("5%") == pytest.approx(0.05) == parse_tolerance("0.05")


def test_a_schema_6_store_is_migrated_with_every_row_kept(tmp_path):
    db = tmp_path / "v6.db"
    record(db, BASE, seed=0)
    with sqlite3.connect(db) as raw:
        raw.execute("DROP TABLE baselines")
        raw.execute("UPDATE schema_version SET version = 6")
        rows = raw.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    store = Store(db, read_only=True)  # upgraded first, as show and check do
    assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert len(store.results(1)) == rows and store.baselines() == {}


def test_remeasure_confirms_a_real_regression_in_a_new_run(cli):
    """A real mem.bandwidth run checked against a copy of itself with every sample ten times
    larger: the loss (to a tenth) is re-measured in a new run, confirmed, and the runs read are kept."""
    assert cli("measure", "mem.bandwidth", "bytes=256KiB", "samples=11").code == 0
    store = Store(cli.db)
    run = store.run(1)
    baseline = store.start_run(
        fingerprint=run["fingerprint"], topology=run["topology"], context={}, suite=None,
        argv=["test"], software={},
    )  # fmt: skip
    for document in store.result_documents(1):
        larger = {k: [10 * x for x in v] for k, v in document["samples"].items()}
        store.add_document(baseline, {**document, "samples": larger}, [])
    store.finish_run(baseline, "complete")
    store.close()
    results_before = len(Store(cli.db, read_only=True).results(1))
    said = cli("check", "1", "--against", str(baseline), "--remeasure", "--metrics",
               "bandwidth_Bps")  # fmt: skip
    assert said.code == 1, said.err
    assert "confirmed: run 3 measured" in said.out
    store = Store(cli.db, read_only=True)
    assert len(store.runs()) == 3 and len(store.results(1)) == results_before
    assert {r.benchmark for r in store.results(3)} == {"mem.bandwidth"}


def test_a_remeasurement_takes_the_parameters_the_benchmark_declares():
    """pa-parbench writes the mode its wrapper sets into the document's parameters: re-measured,
    it would be given twice."""
    from perfatlas.benchmarks import get
    from perfatlas.regression.remeasure import declared

    written = {"mode": "kernel", "kernel": "triad", "bytes": 240000, "stride": 1, "threads": 1,
               "cpus": [0], "bind": "cpus", "samples": 3, "min_sample_time": 0.002, "file": ""}  # fmt: skip
    kept = declared(get("parbench.kernel"), written)
    assert "mode" not in kept and "file" not in kept
    assert kept["kernel"] == "triad" and kept["cpus"] == [0] and kept["samples"] == 3


def test_remeasure_refuses_a_run_of_another_machine(cli):
    record(cli.db, BASE, seed=0)
    record(cli.db, {"latency_ns": (80.0, 0.01), "bandwidth_Bps": (10e9, 0.01)}, seed=1)
    said = cli("check", "2", "--against", "1", "--remeasure")
    assert said.code == 2 and "--remeasure measures on this machine" in said.err
    assert len(Store(cli.db, read_only=True).runs()) == 2  # no run was opened


def test_a_stored_finding_of_an_undeclared_kind_is_said_not_skipped():
    """A baseline stored by another version may hold a kind no source of this one declares:
    its row says so ('not comparable'); a kind declared with no direction is left out."""
    from perfatlas.findings.model import Finding, Interval, Sources
    from perfatlas.regression.run_figures import run_figures
    from perfatlas.regression.verdicts import judge
    from perfatlas.store.run_data import RunData

    def finding(kind: str) -> dict:
        return Finding(kind, "s", 2.0, "ns", "a test", Sources(), Interval(1, 3)).as_dict()

    stored = {
        "computed_by": "perfatlas 0.0",
        "findings": [finding("memory.gone"), finding("noise.line")],
    }
    (figure,) = run_figures(RunData({"id": 1}, [], stored_findings=stored))
    assert figure.metric == "memory.gone" and figure.higher_is_better is None
    row = judge(figure, figure, 0.05)
    assert (row.verdict, row.note) == ("not comparable", "a kind this perfatlas does not declare")
