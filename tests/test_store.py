import os
import sqlite3
import subprocess
import sys

import pytest

from perfatlas.common.errors import UserError
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.store.database import Store
from perfatlas.store.schema import SCHEMA_VERSION


def document(value: float, bytes_: int = 4096) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "mem.latency",
        "params": {"bytes": bytes_, "chain": "page", "cpus": [0]},
        "samples": {"latency_ns": [value, value + 1, value + 2, value + 3, value + 4, value + 5]},
        "units": {"latency_ns": "ns"},
    }


def start(store: Store) -> int:
    return store.start_run(
        fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
    )


def test_results_are_summarized_and_read_back(tmp_path):
    store = Store(tmp_path / "p.db")
    run = start(store)
    warning = WarningRecord(Kind.UNSTABLE, "unstable: w", "fix it", "latency_ns")
    store.add_document(run, document(10.0), [warning])
    store.finish_run(run, "complete")
    (result,) = store.results(run)
    assert (result.metric, result.unit, result.n) == ("latency_ns", "ns", 6)
    assert result.median == 12.5 and result.min == 10 and result.max == 15
    assert result.params["bytes"] == 4096 and result.warnings == [warning]
    assert store.run(run)["status"] == "complete"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION


def test_not_measurable_results_keep_their_reason(tmp_path):
    store = Store(tmp_path / "p.db")
    run = start(store)
    doc = {
        "schema": "perfatlas.result/1",
        "benchmark": "mem.latency",
        "params": {"node": "remote"},
        "not_measurable": "one NUMA node",
        "units": {"latency_ns": "ns"},
    }
    store.add_document(run, doc, [])
    (result,) = store.results(run)
    assert result.not_measurable == "one NUMA node" and result.median is None and result.n == 0


def test_a_run_whose_process_died_is_marked_interrupted_and_keeps_its_results(tmp_path):
    path = tmp_path / "p.db"
    script = (
        "import os, sys; from perfatlas.store.database import Store; s = Store(sys.argv[1]);"
        "r = s.start_run(fingerprint='f', topology={}, context={}, suite='t', argv=[], software={});"
        "sys.path.insert(0, sys.argv[2]); from test_store import document;"
        "s.add_document(r, document(1.0), []); os._exit(9)"
    )
    tests_dir = os.path.dirname(__file__)
    subprocess.run([sys.executable, "-c", script, str(path), tests_dir], check=False)
    store = Store(path)
    (run,) = store.runs()
    assert run["status"] == "interrupted" and run["results"] == 1


def test_an_unwritable_database_path_is_one_sentence(tmp_path):
    with pytest.raises(UserError, match="cannot use database"):
        Store(tmp_path / "missing-dir" / "p.db")


def test_a_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "p.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(UserError, match="newer than this perfatlas"):
        Store(path)
    assert sqlite3.connect(path).execute("SELECT version FROM schema_version").fetchone()[0] == 99


def test_two_processes_can_write_the_same_database(tmp_path):
    path = tmp_path / "p.db"
    Store(path).close()
    script = (
        "import sys; sys.path.insert(0, sys.argv[2]); from perfatlas.store.database import Store;"
        "from test_store import document, start; s = Store(sys.argv[1]);"
        "[s.add_document(start(s), document(float(i)), []) for i in range(20)]"
    )
    tests_dir = os.path.dirname(__file__)
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(path), tests_dir]) for _ in range(2)
    ]
    assert [w.wait() for w in writers] == [0, 0]
    store = Store(path)
    assert len(store.runs()) == 40
    assert store.db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 40


def test_run_references(tmp_path):
    store = Store(tmp_path / "p.db")
    with pytest.raises(UserError, match="holds no runs"):
        store.resolve_run("last")
    run = start(store)
    assert store.resolve_run("last") == run == store.resolve_run(str(run))
    with pytest.raises(UserError, match="not in"):
        store.resolve_run("42")
    with pytest.raises(UserError, match="not a run id"):
        store.resolve_run("yesterday")


def test_a_transaction_commits_its_writes_together_or_none(tmp_path):
    store, reader = Store(tmp_path / "p.db"), Store(tmp_path / "p.db", read_only=True)
    with store.transaction():
        run = start(store)
        store.add_document(run, document(10.0), [])
        store.finish_run(run, "complete")
        assert reader.runs() == []  # nothing committed inside
    assert [r["status"] for r in reader.runs()] == ["complete"] and len(reader.results(run)) == 1
    with pytest.raises(UserError), store.transaction():
        failed = start(store)
        store.add_document(failed, document(11.0), [])
        store.finish_run(failed, "no such status")  # the CHECK constraint refuses it
    assert [r["id"] for r in reader.runs()] == [run] and store.result_count(failed) == 0
