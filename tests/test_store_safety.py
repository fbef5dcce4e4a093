"""The store under faults: read-only files and mounts, a damaged database, a stored row with bad
JSON, a disk that fills during a run, and a --repeat run killed between its repetitions."""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bad_input import database_dump

from perfatlas.common.errors import UserError
from perfatlas.store.database import Store


def sum_document(value: float) -> dict:
    """An example.sum result document whose samples start at `value`."""
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "example.sum",
        "params": {"bytes": 65536, "cpu": 0},
        "samples": {"seconds": [value, value + 1, value + 2]},
        "units": {"seconds": "s"},
    }


def _stored_run(path: Path, results: int = 3) -> int:
    store = Store(path)
    run = store.start_run(
        fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
    )
    for i in range(results):
        store.add_document(run, sum_document(float(i)), [])
    store.finish_run(run, "complete")
    store.close()
    return run


def _perfatlas(*words: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "perfatlas", *words],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def _one_sentence(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-800:])
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr[-800:]
    return lines[0]


def _read_everything(cli, db: Path, tmp_path: Path) -> None:
    """show, report and export of run 1 succeed."""
    assert cli("show", db_path=db).code == 0
    assert cli("show", "1", db_path=db).code == 0
    assert cli("export", "1", "-o", str(tmp_path / "x.json"), db_path=db).code == 0
    assert cli("export", "1", "--format", "csv", db_path=db).code == 0
    assert cli("report", "1", "-o", str(tmp_path / "r.html"), db_path=db).code == 0


# -- read-only -----------------------------------------------------------------------------------
def test_reading_needs_no_write_access(tmp_path, cli):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "p.db"
    _stored_run(db)
    before = database_dump(db)
    for left in ("p.db-wal", "p.db-shm"):  # as a cleanly closed database is: none to open
        (folder / left).unlink(missing_ok=True)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        if os.geteuid() == 0:  # root ignores file modes: a read-only bind mount is the real test
            done = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)])
            if done.returncode != 0:
                pytest.fail("root could not bind-mount a folder read-only")
        try:
            _read_everything(cli, db, tmp_path)
            refused = cli("measure", "example.sum", "samples=3", db_path=db)
            assert refused.code == 2 and "read-only" in refused.err, refused.err
        finally:
            if os.geteuid() == 0:
                gc.collect()  # the stores the commands opened
                subprocess.run(["umount", "--lazy", str(folder)], check=True)
    finally:
        folder.chmod(0o755)
    assert database_dump(db) == before


# -- damaged -------------------------------------------------------------------------------------
def _damaged(tmp_path: Path) -> Path:
    """A real database with one page of the results table overwritten."""
    db = tmp_path / "damaged.db"
    store = Store(db)
    run = store.start_run(
        fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
    )
    for i in range(400):  # several pages of results
        store.add_document(run, sum_document(float(i)), [])
    store.finish_run(run, "complete")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = store.db.execute("PRAGMA page_size").fetchone()[0]
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.close()
    with db.open("r+b") as file:  # a page in the middle of the results: garbage
        file.seek(page_size * (pages // 2))
        file.write(b"\xa5" * page_size)
    return db


def test_a_damaged_database_is_refused_for_writing_and_still_read(tmp_path, cli):
    db = _damaged(tmp_path)
    refused = cli("measure", "example.sum", "samples=3", db_path=db)
    assert refused.code == 2 and "damaged" in refused.err and "\n" not in refused.err.strip()
    shown = cli("show", "1", db_path=db)
    assert shown.code == 0 and "damaged" in shown.err
    exported = cli("export", "1", "-o", str(tmp_path / "x.json"), db_path=db)
    assert exported.code == 0 and (tmp_path / "x.json").stat().st_size > 0


# -- a row with bad JSON ---------------------------------------------------------------------------
def test_a_row_with_bad_json_is_named_and_the_rest_read(tmp_path, cli, read_json):
    db = tmp_path / "p.db"
    _stored_run(db, results=3)
    with contextlib.closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("UPDATE results SET samples = '[1, 2' WHERE id = 2")
        raw.execute("UPDATE results SET document = '{\"x\": ' WHERE id = 3")
    for words in (("show", "1"), ("export", "1", "--format", "csv")):
        done = cli(*words, db_path=db)
        assert done.code == 0 and "result 2" in done.err and "result 3" in done.err, done.err
    done = cli("export", "1", "-o", str(tmp_path / "x.json"), db_path=db)
    assert done.code == 0 and [r["id"] for r in read_json(tmp_path / "x.json")["results"]] == [1]
    assert cli("report", "1", "-o", str(tmp_path / "r.html"), db_path=db).code == 0


# -- a disk that fills -----------------------------------------------------------------------------
def _file_size_limit(limit: int):
    def apply() -> None:  # EFBIG instead of SIGXFSZ, as a full disk gives ENOSPC
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_disk_that_fills_during_a_run_is_one_sentence_and_keeps_what_was_committed(tmp_path):
    db = tmp_path / "p.db"
    _stored_run(db, results=1)
    before = database_dump(db)
    size = db.stat().st_size + (tmp_path / "p.db-wal").stat().st_size
    done = _perfatlas(
        "--db",
        str(db),
        "measure",
        "example.sum",
        "bytes=64KiB",
        "samples=3",
        "--repeat",
        "40",
        preexec_fn=_file_size_limit(size + 48 * 1024),
    )
    sentence = _one_sentence(done)
    assert "cannot write to database" in sentence, sentence
    assert "its points are stored, each pooled over the launches" in sentence, sentence
    after = database_dump(db)
    assert set(before) <= set(after)  # nothing committed is lost
    kept = Store(db).results(2)
    assert kept and kept[0].n >= 3  # at least the first launch's samples


# -- --repeat N killed between repetitions ---------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_repeat_run_keeps_its_finished_repetitions(tmp_path, signum):
    db = tmp_path / "p.db"
    words = ["measure", "example.sum", "samples=5", "min_sample_time=0.05s", "--repeat", "20"]
    process = subprocess.Popen(
        [sys.executable, "-m", "perfatlas", "--db", str(db), *words],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    launches = 0
    deadline = time.monotonic() + 60
    while launches < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        with contextlib.suppress(sqlite3.Error, UserError, FileNotFoundError):
            results = Store(db, read_only=True).results(1) if db.exists() else []
            launches = results[0].document["derived"].get("launches", 1) if results else 0
    process.send_signal(signum)
    process.communicate(timeout=60)
    (result,) = Store(db, read_only=True).results(1)
    kept = result.document["derived"].get("launches", 1)
    assert 2 <= kept < 20 and result.n == 5 * kept
    assert Store(db).run(1)["status"] == "interrupted"
