"""The store's schema: its tables (SCHEMA), its version, and the migrations that take an older
database to it, keeping every row (docs/guide/report-and-store.md#the-store)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.common.warning import WarningRecord

SCHEMA_VERSION = 7

SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY,
    started     TEXT NOT NULL,
    finished    TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    topology    TEXT NOT NULL,   -- perfatlas.topology/1 JSON
    context     TEXT NOT NULL,   -- kernel, governor, THP, compiler, MPI, environment ... JSON
    suite       TEXT,
    argv        TEXT NOT NULL,   -- JSON list
    software    TEXT NOT NULL    -- JSON: perfatlas, python, libraries
);
CREATE TABLE IF NOT EXISTS results (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    benchmark      TEXT NOT NULL,
    params         TEXT NOT NULL,  -- JSON
    bytes          INTEGER,        -- hot parameters, indexed
    threads        INTEGER,
    metric         TEXT NOT NULL,
    unit           TEXT NOT NULL,
    samples        TEXT NOT NULL,  -- JSON list, every repetition
    n              INTEGER NOT NULL,
    median         REAL,
    ci_lo          REAL,
    ci_hi          REAL,
    min            REAL,
    max            REAL,
    not_measurable TEXT,           -- why, when the measurement cannot be made here
    warnings       TEXT NOT NULL,  -- JSON list: sentences in version 1-3, records from 4
    document       TEXT NOT NULL   -- the native JSON document (placement, timer, derived, build)
);
CREATE INDEX IF NOT EXISTS results_run ON results (run_id, benchmark);
CREATE INDEX IF NOT EXISTS results_hot ON results (benchmark, metric, bytes, threads);
"""


def _typed_warnings(db: sqlite3.Connection) -> None:
    """Version 4: warnings stored as sentences become perfatlas.common.warning records (kind recovered
    from the words they start with, else 'legacy'), in results and in scenario documents.
    Records already typed are left as they are, so a second pass changes nothing."""
    rows = db.execute("SELECT id, metric, warnings FROM results").fetchall()
    for id_, metric, text in rows:
        stored = json.loads(text)
        if any(isinstance(w, str) for w in stored):
            typed = [_typed(w, metric) for w in stored]
            db.execute("UPDATE results SET warnings = ? WHERE id = ?", (json.dumps(typed), id_))
    for table, key in (("scenarios", "summary"), ("scenario_jobs", "accounting")):
        for id_, text in db.execute(f"SELECT id, document FROM {table}").fetchall():
            document = json.loads(text)
            block = document.get(key) or {}
            if key == "summary" and any(
                isinstance(w, str) for w in block.get("accounting_warnings", [])
            ):
                block["accounting_warnings"] = [
                    _typed(w, None) for w in block["accounting_warnings"]
                ]
            elif key == "accounting" and isinstance(block.get("warning"), str):
                block["warning"] = _typed(block["warning"], None) if block["warning"] else None
            else:
                continue
            db.execute(f"UPDATE {table} SET document = ? WHERE id = ?", (json.dumps(document), id_))


def _topology_xml_column(db: sqlite3.Connection) -> None:
    """Version 5: runs keep the machine's hwloc XML (perfatlas export --format hwloc); runs stored
    before have none (NULL). Added only where missing, so a second pass changes nothing."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    if "topology_xml" not in columns:
        db.execute("ALTER TABLE runs ADD COLUMN topology_xml TEXT")


def _typed(warning: str | dict, metric: str | None) -> dict:
    if isinstance(warning, dict):
        return warning
    return WarningRecord.from_legacy_text(warning, metric).as_dict()


# MIGRATIONS[v] takes a database from version v - 1 to v, keeping every row: SQL, or a function
# of the connection. Each is idempotent, so two processes opening an old database at once both
# succeed.
MIGRATIONS: dict[int, str | Callable[[sqlite3.Connection], None]] = {
    2: """
CREATE TABLE IF NOT EXISTS profiles (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    command  TEXT NOT NULL,     -- JSON list: the profiled command as the user gave it
    partial  INTEGER NOT NULL,  -- 1: built from rank files, the program did not finish
    document TEXT NOT NULL      -- perfatlas.ipm/1 JSON (docs/profile.md), or the partial view
);
CREATE INDEX IF NOT EXISTS profiles_run ON profiles (run_id);
""",
    3: """
CREATE TABLE IF NOT EXISTS scenarios (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    kind     TEXT NOT NULL CHECK (kind IN ('scenario', 'matrix')),
    name     TEXT NOT NULL,
    document TEXT NOT NULL      -- JSON: definition and summary, or the interference matrix
);
CREATE INDEX IF NOT EXISTS scenarios_run ON scenarios (run_id);
CREATE TABLE IF NOT EXISTS scenario_jobs (
    id          INTEGER PRIMARY KEY,
    scenario_id INTEGER NOT NULL REFERENCES scenarios(id),
    job         TEXT NOT NULL,  -- name, '#copy' appended for the copies of a job
    threads     INTEGER NOT NULL,
    start_s     REAL NOT NULL,  -- offsets from the scenario's start
    end_s       REAL NOT NULL,
    wall_s      REAL NOT NULL,
    dedicated_s REAL,           -- the same program measured alone
    user_s      REAL NOT NULL,
    system_s    REAL NOT NULL,
    waiting_s   REAL NOT NULL,  -- runnable, not running (schedstat)
    migrations  INTEGER,
    document    TEXT NOT NULL   -- JSON: the job's timeline, accounting, program
);
CREATE INDEX IF NOT EXISTS scenario_jobs_scenario ON scenario_jobs (scenario_id);
""",
    4: _typed_warnings,
    5: _topology_xml_column,
    # Version 6: a run's findings (perfatlas.findings/1, docs/guide/findings.md), one document
    # per run, stored when the run completes. Runs stored before have none: their findings are
    # recomputed from their results when read (perfatlas.findings.compute), so nothing is
    # computed here.
    6: """
CREATE TABLE IF NOT EXISTS findings (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL UNIQUE REFERENCES runs(id),
    computed TEXT NOT NULL,     -- when
    document TEXT NOT NULL      -- perfatlas.findings/1 JSON
);
""",
    # Version 7: named baselines of regression checks (perfatlas baseline, perfatlas check;
    # docs/guide/regression-checks.md). A new table: every run and result is kept as it was.
    7: """
CREATE TABLE IF NOT EXISTS baselines (
    name    TEXT PRIMARY KEY,   -- perfatlas.common.safe_names rule, never a number or 'last'
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    created TEXT NOT NULL
);
""",
}


def migrate(db: sqlite3.Connection, path: str | Path) -> None:
    """Create what is missing and migrate `db` (the file `path`) to SCHEMA_VERSION."""
    with db:
        db.executescript(SCHEMA)
        row = db.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            db.execute("INSERT INTO schema_version VALUES (1)")
        version = 1 if row is None else row[0]
        if version > SCHEMA_VERSION:
            raise UserError(
                f"database {path} has schema version {version}, newer than this "
                f"perfatlas ({SCHEMA_VERSION}); upgrade perfatlas to read it"
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            migration = MIGRATIONS[step]
            if isinstance(migration, str):
                db.executescript(migration)
            else:
                migration(db)
        if version < SCHEMA_VERSION:
            db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
