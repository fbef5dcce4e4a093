"""A hostile user against the command line (issue 35): each case is refused in one sentence on
stderr ("perfatlas: ..."), exit status 2, and leaves what is stored as it was
(docs/safety/store-and-values.md)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from bad_input import database_dump

from perfatlas.store import Store


def _document(value: float) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "example.sum",
        "params": {"bytes": 65536, "cpu": 0},
        "samples": {"seconds": [value, value + 1, value + 2]},
        "units": {"seconds": "s"},
    }


def _stored_runs(path: Path, runs: int = 1) -> None:
    store = Store(path)
    for number in range(runs):
        run = store.start_run(
            fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
        )
        store.add_document(run, _document(float(number)), [])
        store.finish_run(run, "complete")
    store.close()


def _sentence(done) -> str:
    """The one line a refusal prints, checked to be one line and exit status 2."""
    assert done.code == 2, (done.code, done.err[-800:])
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfatlas: "), done.err[-800:]
    assert "Traceback" not in done.err and "usage:" not in done.err
    return lines[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. another application's SQLite file -------------------------------------------------------
@pytest.mark.parametrize(
    "words",
    [
        ["measure", "example.sum", "samples=3"],
        ["baseline", "set", "nightly", "1"],
        ["run", "SUITE"],
    ],
    ids=["measure", "baseline-set", "run"],
)
def test_another_applications_database_is_refused_and_left_byte_for_byte(cli, tmp_path, words):
    other = tmp_path / "contacts.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO contacts VALUES (1, 'Ada')")
    db.close()
    suite = tmp_path / "one.toml"
    suite.write_text('[[step]]\nbenchmark = "example.sum"\nsamples = 3\n')
    before = _digest(other)
    words = [str(suite) if w == "SUITE" else w for w in words]
    sentence = _sentence(cli(*words, db_path=other))
    assert sentence == (
        f"perfatlas: database {other} is not a perfatlas database (it holds the tables contacts, "
        "notes): perfatlas writes nothing to it; give a new file or a perfatlas database with --db"
    )
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db", "one.toml"]
