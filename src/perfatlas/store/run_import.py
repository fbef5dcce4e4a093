"""Runs measured into another database (a compute node's copy, perfatlas.run.elsewhere)
copied into this one: every row of the run, its results, profiles and scenarios, as they were
stored there (host, times, status), under new ids."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.store.database import Store

_RUN = (
    "started, finished, status, host, pid, fingerprint, topology, context, suite, argv, software,"
    " topology_xml"
)
_RESULT = (
    "benchmark, params, bytes, threads, metric, unit, samples, n, median, ci_lo, ci_hi, min, max,"
    " not_measurable, warnings, document"
)
_PROFILE = "command, partial, document"
_SCENARIO = "kind, name, document"
_JOB = (
    "job, threads, start_s, end_s, wall_s, dedicated_s, user_s, system_s, waiting_s, migrations,"
    " document"
)


def newest_run(store: Store) -> int:
    return int(store.db.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0])


def snapshot(store: Store, path: Path) -> None:
    """A consistent copy of the database (SQLite's online backup), for a node to start from."""
    target = sqlite3.connect(path)
    try:
        store.db.backup(target)
    finally:
        target.close()


def import_runs(source: Path, target: Store, after: int) -> list[int]:
    """Copy the runs of `source` newer than run `after` into `target`; their new ids."""
    db = sqlite3.connect(Path(source).resolve().as_uri() + "?mode=ro", uri=True)
    imported = []
    try:
        runs = db.execute(f"SELECT id, {_RUN} FROM runs WHERE id > ? ORDER BY id", (after,))
        for old_id, *run in runs.fetchall():
            with target.db:
                new_id = _insert(target, "runs", _RUN, run)
                _copy(db, target, "results", _RESULT, old_id, new_id)
                _copy(db, target, "profiles", _PROFILE, old_id, new_id)
                scenarios = db.execute(
                    f"SELECT id, {_SCENARIO} FROM scenarios WHERE run_id = ?", (old_id,)
                ).fetchall()
                for old_scenario, *row in scenarios:
                    scenario = _insert(target, "scenarios", f"run_id, {_SCENARIO}", [new_id, *row])
                    _copy(db, target, "scenario_jobs", _JOB, old_scenario, scenario, "scenario_id")
            imported.append(new_id)
    except sqlite3.DatabaseError as error:  # a full disk here, a damaged copy there
        raise UserError(
            f"cannot import the runs of {source} into {target.path}: {error}; the runs imported "
            f"before ({len(imported)}) are kept"
        ) from None
    finally:
        db.close()
    return imported


def _insert(target: Store, table: str, columns: str, values: list) -> int:
    marks = ", ".join("?" * len(values))
    cursor = target.db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
    return int(cursor.lastrowid)


def _copy(
    db: sqlite3.Connection,
    target: Store,
    table: str,
    columns: str,
    old: int,
    new: int,
    key: str = "run_id",
) -> None:
    for row in db.execute(f"SELECT {columns} FROM {table} WHERE {key} = ? ORDER BY id", (old,)):
        _insert(target, table, f"{key}, {columns}", [new, *row])
