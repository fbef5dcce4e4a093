"""Typed warnings (perfatlas.common.warning): made where a doubt is detected, stored as records, migrated
from the sentences of schema version 3, and read back by their fields in views and the report."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from perfatlas.benchmarks import get
from perfatlas.common.stats import CV_WARNING, MIN_SAMPLES_FOR_CI, RESOLUTION_FACTOR
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.export.run_export import export
from perfatlas.launch.contract import placement_warnings, result_warnings
from perfatlas.machine.placement import Placement, obtained
from perfatlas.machine.topology import Machine
from perfatlas.plan.sweep_grid import placement_warnings as sweep_placement_warnings
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.report import write_report
from perfatlas.scenario.accounting import accounting
from perfatlas.scenario.side_by_side import Instance, Outcome
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData
from perfatlas.store.schema import SCHEMA_VERSION
from perfatlas.terminal.run_summary import print_summary
from perfatlas.terminal.run_views import print_warnings

DATA = Path(__file__).parent / "data"
DOCS = Path(__file__).parent.parent / "docs" / "guide" / "report-and-store.md"


def two_metrics(**extra) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "mem.bandwidth",
        "params": {"bytes": 65536, "op": "copy", "threads": 1, "cpus": [0]},
        "samples": {"bandwidth_bytes_s": [1.0, 1.5, 0.5, 1.0, 1.2, 0.8], "time_s": [2.0] * 6},
        "units": {"bandwidth_bytes_s": "B/s", "time_s": "s"},
        **extra,
    }


def kinds(records: list[WarningRecord]) -> list[Kind]:
    return [w.kind for w in records]


# -- made where detected --------------------------------------------------------------------------
def test_statistics_warn_per_metric_with_their_kind():
    found = result_warnings(two_metrics())
    assert [(w.kind, w.metric) for w in found] == [(Kind.UNSTABLE, "bandwidth_bytes_s")]
    short = two_metrics(sample_seconds=[1e-7] * 6, timer={"resolution_ns": 20})
    assert (Kind.TOO_SHORT, "time_s") in [(w.kind, w.metric) for w in result_warnings(short)]
    few = two_metrics(samples={"time_s": [2.0] * 3})
    assert kinds(result_warnings(few)) == [Kind.FEW_SAMPLES]


def test_a_binding_or_placement_not_applied_is_warned_about_with_its_fix():
    threads = [{"thread": 0, "cpu_requested": 0, "cpus_allowed": "0-1"}]
    (binding,) = placement_warnings(two_metrics(placement={"threads": threads}))
    assert binding.kind is Kind.BINDING_NOT_APPLIED and binding.metric is None
    assert "Cpus_allowed_list" in binding.fix
    pages = {"pages_on_node": {"0": 0.4, "1": 0.6}, "huge_page_fraction": 0.5}
    doc = two_metrics(placement=pages)
    doc["params"].update(node=0, page=2**21)
    assert kinds(placement_warnings(doc)) == [Kind.MEMORY_MISPLACED, Kind.HUGE_PAGES_PARTIAL]
    asked, machine = Placement("close", "local"), Machine.detect()
    unpinned = {"execution": {"threads": [{"cpu": 0, "cpus_allowed": "0-1"}]}}
    got = obtained(unpinned, asked, machine)
    assert kinds(sweep_placement_warnings(asked, got)) == [Kind.BINDING_NOT_APPLIED]
    pinned = {"execution": {"threads": [{"cpu": 0, "cpus_allowed": "0"}]}}
    assert sweep_placement_warnings(asked, obtained(pinned, asked, machine)) == []


def test_ranks_on_one_core_noise_quanta_accounting_and_profiles_have_their_kinds():
    ranks = [{"rank": r, "host": "a", "cpus_allowed": "0"} for r in range(2)]
    assert kinds(placement_warnings({"params": {}, "placement": {"ranks": ranks}})) == [
        Kind.RANKS_SHARE_CORE
    ]
    fine = {
        "params": {"method": "fwq", "quantum": 1e-7},
        "timer": {"resolution_ns": 20},
        "samples": {"quantum_ns": [1.0]},
    }
    assert kinds(get("noise").warnings(fine)) == [Kind.COARSE_QUANTUM]
    outcome = Outcome(Instance("j#1", Path("x"), 2, 0.0), 0.0, 1.0, 0.2, 0, 0, 0.2, 0, 2, [], {})
    assert WarningRecord.from_dict(accounting(outcome)["warning"]).kind is Kind.ACCOUNTING
    profile = {"partial": True, "overflow": {"count": 3, "ranks": 1}, "region_errors": {"x": 1}}
    assert kinds(profile_warnings(profile)) == [
        Kind.PARTIAL_PROFILE,
        Kind.RECORD_TABLE_FULL,
        Kind.REGION_ERRORS,
    ]


def test_every_kind_has_a_meaning_that_matches_the_thresholds_and_is_documented():
    assert f"{CV_WARNING:.0%}".replace("%", " %") in Kind.UNSTABLE.meaning
    assert f"fewer than {MIN_SAMPLES_FOR_CI}" in Kind.FEW_SAMPLES.meaning
    assert f"{RESOLUTION_FACTOR}x" in Kind.TOO_SHORT.meaning
    page = DOCS.read_text()
    for kind in Kind:
        assert kind.meaning and f"| `{kind.value}` |" in page, kind


# -- stored as records ----------------------------------------------------------------------------
def test_records_round_trip_through_the_store_each_to_its_metric(tmp_path):
    store = Store(tmp_path / "p.db")
    run = store.start_run(fingerprint="f", topology={}, context={}, suite="t", argv=[], software={})
    whole = WarningRecord(Kind.BINDING_NOT_APPLIED, "binding not applied: x", "check cgroups")
    store.add_document(run, two_metrics(), [*result_warnings(two_metrics()), whole])
    by_metric = {r.metric: r.warnings for r in store.results(run)}
    assert kinds(by_metric["bandwidth_bytes_s"]) == [Kind.UNSTABLE, Kind.BINDING_NOT_APPLIED]
    assert by_metric["time_s"] == [whole]
    (stored,) = store.db.execute("SELECT warnings FROM results WHERE metric = 'time_s'").fetchone()
    assert json.loads(stored) == [
        {"kind": "binding not applied", "metric": None, "message": whole.message, "fix": whole.fix}
    ]


def test_export_carries_the_records(tmp_path):
    store = Store(tmp_path / "p.db")
    run = store.start_run(fingerprint="f", topology={}, context={}, suite="t", argv=[], software={})
    store.add_document(run, two_metrics(), result_warnings(two_metrics()))
    results = json.loads(export(RunData.load(store, run), "json"))["results"]
    assert results[0]["warnings"][0]["kind"] == "unstable"
    assert results[0]["warnings"][0]["metric"] == "bandwidth_bytes_s"
    rows = list(csv.DictReader(io.StringIO(export(RunData.load(store, run), "csv"))))
    assert json.loads(rows[0]["warnings"])[0]["fix"].startswith("stop other load")
    assert json.loads(rows[1]["warnings"]) == []


# -- migrated from sentences ----------------------------------------------------------------------
@pytest.fixture
def migrated(tmp_path) -> Store:
    """The schema-3 store of tests/data/store-v3.sql, opened (and so migrated) by this version."""
    path = tmp_path / "v3.db"
    db = sqlite3.connect(path)
    db.executescript((DATA / "store-v3.sql").read_text())
    db.close()
    return Store(path)


def test_the_migration_recovers_each_kind_and_keeps_every_sentence(migrated):
    # every later migration runs too: the store is at this version's schema
    assert migrated.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    (latency,) = migrated.results(1)  # a single metric: its sentences carried no metric name
    unstable, few = latency.warnings
    assert (unstable.kind, unstable.metric) == (Kind.UNSTABLE, "latency_ns")
    assert (few.kind, few.metric) == (Kind.FEW_SAMPLES, "latency_ns")
    assert few.text.startswith("only 3 samples: the interval") and few.fix.startswith("use samples")
    bandwidth, time = migrated.results(2)
    assert [(w.kind, w.metric) for w in bandwidth.warnings] == [
        (Kind.UNSTABLE, "bandwidth_bytes_s"),
        (Kind.FEW_SAMPLES, "bandwidth_bytes_s"),
        (Kind.BINDING_NOT_APPLIED, None),
        (Kind.LEGACY, None),
    ]
    assert bandwidth.warnings[0].text == (
        "unstable: coefficient of variation 50.0% exceeds 5%; "
        "stop other load, pin threads, or raise samples= / --repeat"
    )
    assert bandwidth.warnings[3].text == "a sentence no kind ever began with"
    assert kinds(time.warnings) == [Kind.FEW_SAMPLES, Kind.BINDING_NOT_APPLIED, Kind.LEGACY]
    (scenario,) = migrated.scenarios(2)
    (late,) = scenario["summary"]["accounting_warnings"]
    assert late["kind"] == "accounting mismatch" and late["fix"].endswith("OMP_WAIT_POLICY")
    accounts = [job["accounting"]["warning"] for job in scenario["jobs"]]
    assert accounts[0] is None and accounts[1] == late


def test_the_migration_runs_once_and_a_second_open_changes_nothing(migrated):
    before = migrated.db.execute("SELECT warnings FROM results ORDER BY id").fetchall()
    migrated.db.execute("UPDATE schema_version SET version = 3")  # as if a second process
    migrated.db.commit()
    migrated.close()
    again = Store(migrated.path)
    assert again.db.execute("SELECT warnings FROM results ORDER BY id").fetchall() == before


# -- read by their fields -------------------------------------------------------------------------
def test_summary_and_show_group_the_migrated_warnings_by_kind(migrated, capsys):
    print_summary(RunData.load(migrated, 2))
    out = capsys.readouterr().out
    assert "7 warning(s) on 2 result(s)" in out
    assert "2 few samples, 2 binding not applied, 2 legacy, 1 unstable" in out
    print_warnings(migrated.results(2))
    out = capsys.readouterr().out
    assert "bandwidth_bytes_s: unstable: coefficient of variation 50.0%" in out


def test_the_report_tallies_kinds_with_their_meaning_and_lists_each_fix(migrated, tmp_path):
    html = write_report(RunData.load(migrated, 2), tmp_path / "r.html").read_text()
    section = html[html.index('id="warnings"') :]
    assert "7 warning(s) on 2 result(s): 2 × few samples" in section
    assert Kind.LEGACY.meaning in section and Kind.UNSTABLE.meaning in section
    assert "check the program and OMP_WAIT_POLICY" in html  # the scenario's accounting note
    assert section.index("few samples") < section.index("unstable: coefficient")
