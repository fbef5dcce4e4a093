"""The results store: SQLite in WAL mode with a schema version (docs/architecture.md, Store).

Each benchmark's results are committed as they complete, so an interrupted run keeps what finished.
A run whose process died without saying so is marked interrupted the next time the store opens.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perfatlas.errors import UserError
from perfatlas.stats import summarize
from perfatlas.warning import WarningRecord, records_from_json, records_to_json

SCHEMA_VERSION = 4

# Version 1; a database of any version starts from it and takes the migrations in order.
_SCHEMA = """
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
    """Version 4: warnings stored as sentences become perfatlas.warning records (kind recovered
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
}


@dataclass(frozen=True)
class Result:
    """One metric of one measurement, as the report and comparisons read it."""

    id: int
    run_id: int
    benchmark: str
    params: dict[str, Any]
    metric: str
    unit: str
    samples: list[float]
    n: int
    median: float | None
    ci_lo: float | None
    ci_hi: float | None
    min: float | None
    max: float | None
    not_measurable: str | None
    warnings: list[WarningRecord]
    document: dict[str, Any]


def pool_launches(results: list[Result]) -> list[Result]:
    """Results of separate launches of the same measurement (a sweep's repetitions) as one
    result each: samples concatenated in launch order, statistics recomputed, the first
    launch's document and warnings kept (with the others' added)."""
    groups: dict[tuple, list[Result]] = {}
    for r in results:
        groups.setdefault((r.benchmark, json.dumps(r.params, sort_keys=True), r.metric), []).append(
            r
        )
    pooled = []
    for launches in groups.values():
        first = launches[0]
        if len(launches) == 1 or not first.samples:
            pooled.append(first)
            continue
        samples = [x for r in launches for x in r.samples]
        summary = summarize(samples)
        warnings = list(dict.fromkeys(w for r in launches for w in r.warnings))
        pooled.append(
            Result(
                **{
                    **first.__dict__,
                    "samples": samples,
                    "n": len(samples),
                    "median": summary.median,
                    "ci_lo": summary.ci_lo,
                    "ci_hi": summary.ci_hi,
                    "min": summary.min,
                    "max": summary.max,
                    "warnings": warnings,
                }
            )
        )
    return pooled


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _warnings_of(metric: str, warnings: list[WarningRecord]) -> list[dict]:
    """The warnings of one metric's row, as stored: its own and those about the whole result."""
    return records_to_json([w for w in warnings if w.metric in (None, metric)])


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                raise sqlite3.OperationalError(f"directory {self.path.parent} does not exist")
            self.db = sqlite3.connect(self.path, timeout=30.0)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise UserError(f"cannot use database {self.path}: {error}") from error
        self._mark_dead_runs_interrupted()

    def _migrate(self) -> None:
        with self.db:
            self.db.executescript(_SCHEMA)
            row = self.db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                self.db.execute("INSERT INTO schema_version VALUES (1)")
            version = 1 if row is None else row[0]
            if version > SCHEMA_VERSION:
                raise UserError(
                    f"database {self.path} has schema version {version}, newer than this "
                    f"perfatlas ({SCHEMA_VERSION}); upgrade perfatlas to read it"
                )
            for step in range(version + 1, SCHEMA_VERSION + 1):
                migration = MIGRATIONS[step]
                if isinstance(migration, str):
                    self.db.executescript(migration)
                else:
                    migration(self.db)
            if version < SCHEMA_VERSION:
                self.db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def _mark_dead_runs_interrupted(self) -> None:
        host = socket.gethostname()
        running = self.db.execute(
            "SELECT id, pid FROM runs WHERE status = 'running' AND host = ?", (host,)
        ).fetchall()
        with self.db:
            for run_id, pid in running:
                if not _pid_alive(pid):
                    self.db.execute(
                        "UPDATE runs SET status = 'interrupted' WHERE id = ?", (run_id,)
                    )

    def close(self) -> None:
        self.db.close()

    # -- runs --------------------------------------------------------------------------------
    def start_run(
        self,
        *,
        fingerprint: str,
        topology: dict,
        context: dict,
        suite: str | None,
        argv: list[str],
        software: dict,
    ) -> int:
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (started, status, host, pid, fingerprint, topology, context, suite,"
                " argv, software) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    _now(),
                    socket.gethostname(),
                    os.getpid(),
                    fingerprint,
                    json.dumps(topology),
                    json.dumps(context),
                    suite,
                    json.dumps(argv),
                    json.dumps(software),
                ),
            )
        return int(cursor.lastrowid)

    def finish_run(self, run_id: int, status: str) -> None:
        with self.db:
            self.db.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, _now(), run_id)
            )

    def run(self, run_id: int) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT id, started, finished, status, host, fingerprint, topology, context, suite,"
            " argv, software FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise UserError(f"run {run_id} is not in {self.path}; 'perfatlas show' lists the runs")
        keys = ("id", "started", "finished", "status", "host", "fingerprint")
        run = dict(zip(keys, row[:6]))
        run.update(
            topology=json.loads(row[6]),
            context=json.loads(row[7]),
            suite=row[8],
            argv=json.loads(row[9]),
            software=json.loads(row[10]),
        )
        return run

    def runs(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT r.id, r.started, r.status, r.host, r.fingerprint, r.suite,"
            " (SELECT COUNT(*) FROM results WHERE run_id = r.id) FROM runs r ORDER BY r.id"
        ).fetchall()
        keys = ("id", "started", "status", "host", "fingerprint", "suite", "results")
        return [dict(zip(keys, row)) for row in rows]

    def resolve_run(self, ref: str) -> int:
        """'7' -> 7, 'last' -> the newest run."""
        if ref == "last":
            row = self.db.execute("SELECT MAX(id) FROM runs").fetchone()
            if row[0] is None:
                raise UserError(f"{self.path} holds no runs yet; start one with 'perfatlas run'")
            return int(row[0])
        if not ref.isdigit():
            raise UserError(f"'{ref}' is not a run id: give a number or 'last'")
        return self.run(int(ref))["id"]

    # -- results -----------------------------------------------------------------------------
    def add_document(self, run_id: int, document: dict, warnings: list[WarningRecord]) -> list[int]:
        """Store every metric of one native result document, committed at once."""
        params = document["params"]
        hot = (params.get("bytes"), params.get("threads", len(params.get("cpus", [])) or None))
        ids = []
        with self.db:
            if document.get("not_measurable"):
                metrics = {name: [] for name in document.get("units", {"value": ""})}
            else:
                metrics = document["samples"]
            for metric, samples in metrics.items():
                summary = summarize(samples) if samples else None
                cursor = self.db.execute(
                    "INSERT INTO results (run_id, benchmark, params, bytes, threads, metric, unit,"
                    " samples, n, median, ci_lo, ci_hi, min, max, not_measurable, warnings, document)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        document["benchmark"],
                        json.dumps(params, sort_keys=True),
                        *hot,
                        metric,
                        document.get("units", {}).get(metric, ""),
                        json.dumps(samples),
                        len(samples),
                        summary.median if summary else None,
                        summary.ci_lo if summary else None,
                        summary.ci_hi if summary else None,
                        summary.min if summary else None,
                        summary.max if summary else None,
                        document.get("not_measurable"),
                        json.dumps(_warnings_of(metric, warnings)),
                        json.dumps(document),
                    ),
                )
                ids.append(int(cursor.lastrowid))
        return ids

    def results(self, run_id: int, benchmark: str | None = None) -> list[Result]:
        query = (
            "SELECT id, run_id, benchmark, params, metric, unit, samples, n, median, ci_lo, ci_hi,"
            " min, max, not_measurable, warnings, document FROM results WHERE run_id = ?"
        )
        args: tuple = (run_id,)
        if benchmark:
            query += " AND benchmark = ?"
            args += (benchmark,)
        return [self._result(row) for row in self.db.execute(query + " ORDER BY id", args)]

    def result_documents(self, run_id: int) -> Iterator[dict]:
        """The distinct native documents of a run, in the order they were stored."""
        seen = set()
        for (text,) in self.db.execute(
            "SELECT document FROM results WHERE run_id = ? ORDER BY id", (run_id,)
        ):
            if text not in seen:
                seen.add(text)
                yield json.loads(text)

    # -- profiles (perfatlas profile) ---------------------------------------------------------
    def add_profile(self, run_id: int, command: list[str], document: dict) -> int:
        """Store one perfatlas-ipm profile (docs/profile.md) of a run, committed at once."""
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO profiles (run_id, command, partial, document) VALUES (?, ?, ?, ?)",
                (run_id, json.dumps(command), int(bool(document["partial"])), json.dumps(document)),
            )
        return int(cursor.lastrowid)

    def profiles(self, run_id: int) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT id, command, partial, document FROM profiles WHERE run_id = ? ORDER BY id",
            (run_id,),
        )
        return [
            {
                "id": id_,
                "command": json.loads(command),
                "partial": bool(partial),
                "document": json.loads(document),
            }
            for id_, command, partial, document in rows
        ]

    # -- scenarios (perfatlas scenario) ----------------------------------------------------------
    def add_scenario(
        self, run_id: int, kind: str, name: str, document: dict, jobs: list[dict]
    ) -> int:
        """Store a scenario (or an interference matrix) and its jobs, committed at once."""
        columns = ("job", "threads", "start_s", "end_s", "wall_s", "dedicated_s", "user_s")
        columns += ("system_s", "waiting_s", "migrations")
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO scenarios (run_id, kind, name, document) VALUES (?, ?, ?, ?)",
                (run_id, kind, name, json.dumps(document)),
            )
            scenario_id = int(cursor.lastrowid)
            for job in jobs:
                self.db.execute(
                    f"INSERT INTO scenario_jobs (scenario_id, {', '.join(columns)}, document)"
                    f" VALUES (?, {', '.join('?' * len(columns))}, ?)",
                    (scenario_id, *(job.get(c) for c in columns), json.dumps(job)),
                )
        return scenario_id

    def scenarios(self, run_id: int) -> list[dict[str, Any]]:
        """The scenarios and matrices of a run, each with its jobs (documents as stored)."""
        found = []
        for id_, kind, name, document in self.db.execute(
            "SELECT id, kind, name, document FROM scenarios WHERE run_id = ? ORDER BY id",
            (run_id,),
        ).fetchall():
            jobs = [
                json.loads(text)
                for (text,) in self.db.execute(
                    "SELECT document FROM scenario_jobs WHERE scenario_id = ? ORDER BY id", (id_,)
                )
            ]
            found.append(
                {"id": id_, "kind": kind, "name": name, **json.loads(document), "jobs": jobs}
            )
        return found

    @staticmethod
    def _result(row: tuple) -> Result:
        return Result(
            id=row[0],
            run_id=row[1],
            benchmark=row[2],
            params=json.loads(row[3]),
            metric=row[4],
            unit=row[5],
            samples=json.loads(row[6]),
            n=row[7],
            median=row[8],
            ci_lo=row[9],
            ci_hi=row[10],
            min=row[11],
            max=row[12],
            not_measurable=row[13],
            warnings=records_from_json(json.loads(row[14])),
            document=json.loads(row[15]),
        )
