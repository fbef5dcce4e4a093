"""The results store: SQLite in WAL mode with a schema version (docs/architecture.md, Store).

Each benchmark's results are committed as they complete, so an interrupted run keeps what finished.
A run whose process died without saying so is marked interrupted the next time the store opens.

Reading needs no write access: `Store(path, read_only=True)` opens the file read-only (sqlite's
mode=ro URI; immutable where the WAL's shared memory cannot be made, as on a read-only mount),
with no migration and no PRAGMA that writes. A database that fails `PRAGMA quick_check` is refused
for writing with the reason, and is still read as far as it is readable: a query that meets a
damaged page is retried row by row, and a row whose JSON does not parse is named and left out
(docs/safety/store-and-values.md). A failed write (a full disk) is one sentence; what was
committed before it stays. Each write commits at once, but inside `Store.transaction()`, which
commits them together (a whole profile run: one commit, one sync of the WAL).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perfatlas.common.errors import UserError, one_line
from perfatlas.common.stats import summarize
from perfatlas.common.warning import WarningRecord, records_from_json, records_to_json
from perfatlas.store.result import Result
from perfatlas.store.schema import SCHEMA_VERSION, migrate

MAX_RUN_ID = 2**63 - 1  # SQLite's largest INTEGER PRIMARY KEY
_OWN_TABLES = ("schema_version", "runs")  # what makes a file a perfatlas database
_RESULT_COLUMNS = (
    "id, run_id, benchmark, params, metric, unit, samples, n, median, ci_lo, ci_hi, min, max,"
    " not_measurable, warnings, document"
)

# Version 1; a database of any version starts from it and takes the migrations in order.


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


def _warnings_read(text: str, row: int) -> list[WarningRecord]:
    try:
        return records_from_json(_loads(text, row, "warnings"))
    except (TypeError, KeyError, ValueError, AttributeError):
        raise _BadRow("warnings are not warning records") from None


class _BadRow(Exception):
    """A stored row whose JSON does not parse: named, and left out of what is read."""


def _loads(text: str | None, row: int, column: str) -> Any:
    try:
        return json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError):
        raise _BadRow(f"{column} is not valid JSON") from None


def _writes(method: Callable) -> Callable:
    """A write whose failure (a full disk, a read-only file) is one sentence; earlier commits stay."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise UserError(
                f"cannot write to database {self.path}: {_why(error)}; what was stored before "
                "is kept"
            ) from None

    return wrapper


def _folded(text: str) -> str:
    """SQLite's check text on one line: its lines ("*** in database main ***", then one per
    problem) joined by '; '."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _why(error: sqlite3.DatabaseError) -> str:
    text = str(error)
    if "full" in text:
        return "the disk is full (sqlite: database or disk is full)"
    if "readonly" in text:
        return "it is read-only here"
    return text


class Store:
    def __init__(self, path: str | Path, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self.damaged: str | None = None  # quick_check's first complaint, where it has one
        self._said: set[str] = set()
        self._in_transaction = False
        try:
            self._check_file()
            self.db = self._connect()
            self.damaged = self._damage()
            if self.damaged and not read_only:
                self._refuse(
                    f"database {self.path} is damaged ({self.damaged}): perfatlas writes nothing "
                    "to it; show, report and export still read what is readable, and a new "
                    "database (--db) takes new runs"
                )
            if read_only:
                self._check_version()
            else:
                self._check_not_foreign()
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA foreign_keys=ON")
                self._migrate()
        except sqlite3.DatabaseError as error:
            raise UserError(f"cannot use database {self.path}: {error}") from None
        if self.damaged:
            self._say(f"database {self.path} is damaged ({self.damaged}): reading what is readable")
        if not read_only:
            self._mark_dead_runs_interrupted()

    def _check_file(self) -> None:
        """A regular file (a FIFO would block sqlite's reads), in a folder that exists; for
        writing, a file and folder this process may write."""
        if self.path.parent and not self.path.parent.is_dir():
            raise sqlite3.OperationalError(f"directory {self.path.parent} does not exist")
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            if self.read_only:
                raise UserError(
                    f"database {self.path} does not exist: no run is stored there"
                ) from None
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise UserError(f"database {self.path} is not a regular file")
        if not self.read_only:
            writable = os.access(self.path.parent or ".", os.W_OK | os.X_OK) and (
                mode is None or os.access(self.path, os.W_OK)
            )
            if not writable:
                raise UserError(
                    f"database {self.path} is read-only here: show, report and export read it; "
                    "measuring needs a writable one (--db)"
                )

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(self.path, timeout=30.0)
        uri = self.path.resolve().as_uri() + "?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=30.0)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:  # no -shm can be made (a read-only folder or mount)
            db.close()
        return sqlite3.connect(uri + "&immutable=1", uri=True, timeout=30.0)

    def _damage(self) -> str | None:
        """quick_check's first complaint, or None; an error that is no damage (a full disk, not
        a database at all) is raised as it is."""
        try:
            rows = self.db.execute("PRAGMA quick_check(1)").fetchall()
        except sqlite3.DatabaseError as error:
            if "malformed" not in str(error) and "corrupt" not in str(error):
                raise
            return f"quick_check: {_folded(str(error))}"
        first = rows[0][0] if rows else "ok"
        return None if first == "ok" else f"quick_check: {_folded(first)}"

    def _refuse(self, sentence: str) -> None:
        """Refuse the file: the connection closed, nothing written."""
        self.db.close()
        raise UserError(sentence)

    def _foreign_tables(self) -> list[str]:
        """The tables of another application's database: none where the file is new (no
        table) or a perfatlas database (its schema_version and runs tables)."""
        tables = [
            name
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " ORDER BY name"
            )
        ]
        return [] if set(_OWN_TABLES) <= set(tables) else tables

    def _check_not_foreign(self) -> None:
        """Writing: perfatlas's tables are never added to another application's database
        (checked before the first PRAGMA that writes, so the file stays byte for byte)."""
        tables = self._foreign_tables()
        if tables:
            shown = ", ".join(tables[:3]) + (f" and {len(tables) - 3} more" if tables[3:] else "")
            self._refuse(
                f"database {self.path} is not a perfatlas database (it holds the tables "
                f"{shown}): perfatlas writes nothing to it; give a new file or a perfatlas "
                "database with --db"
            )

    def _check_version(self) -> None:
        """Reading: a perfatlas database of this schema version, else one sentence; an older
        one is upgraded first where it may be written."""
        if self._foreign_tables():
            raise UserError(f"{self.path} is not a perfatlas database")
        try:
            version = self.db.execute("SELECT version FROM schema_version").fetchone()[0]
        except (sqlite3.DatabaseError, TypeError):
            raise UserError(f"{self.path} is not a perfatlas database") from None
        if version > SCHEMA_VERSION:
            raise UserError(
                f"database {self.path} has schema version {version}, newer than this "
                f"perfatlas ({SCHEMA_VERSION}); upgrade perfatlas to read it"
            )
        if version < SCHEMA_VERSION:
            self.db.close()
            try:
                Store(self.path).close()  # migrates it
            except UserError as error:
                raise UserError(
                    f"database {self.path} has schema version {version}, older than this "
                    f"perfatlas ({SCHEMA_VERSION}), and cannot be upgraded here: {error}"
                ) from None
            self.db = self._connect()

    def _say(self, warning: str) -> None:
        """A warning about the database, once, on stderr (the tables go to stdout)."""
        if warning not in self._said:
            self._said.add(warning)
            print(f"perfatlas: warning: {one_line(warning)}", file=sys.stderr)

    def _select(self, table: str, columns: str, key: str | None = None, value: Any = None):
        """Rows of `table` (columns, the first `id`), by id; where a damaged page stops the
        query, the rows are read one by one and those that cannot be are counted and said."""
        where, args = (f" WHERE {key} = ?", (value,)) if key else ("", ())
        try:
            return self.db.execute(
                f"SELECT {columns} FROM {table}{where} ORDER BY id", args
            ).fetchall()
        except sqlite3.DatabaseError as error:
            if not self.damaged:
                self.damaged = str(error)
            return self._salvage(table, columns, key, value)

    def _salvage(self, table: str, columns: str, key: str | None, value: Any) -> list[tuple]:
        try:
            last = self.db.execute(f"SELECT MAX(id) FROM {table}").fetchone()[0] or 0
        except sqlite3.DatabaseError as error:
            raise UserError(
                f"database {self.path} is damaged: its {table} cannot be read ({error})"
            ) from None
        rows, lost = [], 0
        for id_ in range(1, last + 1):
            try:
                row = self.db.execute(
                    f"SELECT {key or 'id'}, {columns} FROM {table} WHERE id = ?", (id_,)
                ).fetchone()
            except sqlite3.DatabaseError:
                lost += 1
                continue
            if row is not None and (key is None or row[0] == value):
                rows.append(row[1:])
        self._say(f"database {self.path} is damaged: {lost} row(s) of {table} cannot be read")
        return rows

    def _status(self, status: str, host: str, pid: int) -> str:
        """A read-only store shows a run whose process died as interrupted without writing it."""
        if status == "running" and host == socket.gethostname() and not _pid_alive(pid):
            return "interrupted"
        return status

    def _migrate(self) -> None:
        migrate(self.db, self.path)

    def _mark_dead_runs_interrupted(self) -> None:
        host = socket.gethostname()
        running = self.db.execute(
            "SELECT id, pid FROM runs WHERE status = 'running' AND host = ?", (host,)
        ).fetchall()
        with self.transaction():
            for run_id, pid in running:
                if not _pid_alive(pid):
                    self.db.execute(
                        "UPDATE runs SET status = 'interrupted' WHERE id = ?", (run_id,)
                    )

    def close(self) -> None:
        self.db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The writes inside committed together as it ends, or none of them where it ends with an
        error (sqlite's rollback); one inside another is part of the outer one."""
        if self._in_transaction:
            yield
            return
        self._in_transaction = True
        try:
            with self.db:
                yield
        finally:
            self._in_transaction = False

    # -- runs --------------------------------------------------------------------------------
    @_writes
    def start_run(
        self,
        *,
        fingerprint: str,
        topology: dict,
        context: dict,
        suite: str | None,
        argv: list[str],
        software: dict,
        topology_xml: str | None = None,
    ) -> int:
        """A new run; `topology_xml` is the machine's hwloc XML export (Machine.hwloc_xml)."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (started, status, host, pid, fingerprint, topology, context, suite,"
                " argv, software, topology_xml) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    topology_xml,
                ),
            )
        return int(cursor.lastrowid)

    @_writes
    def finish_run(self, run_id: int, status: str) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, _now(), run_id)
            )

    def run(self, run_id: int) -> dict[str, Any]:
        columns = (
            "id, started, finished, status, host, fingerprint, topology, context, suite, argv,"
            " software, pid"
        )
        rows = self._select("runs", columns, "id", run_id)
        if not rows:
            raise UserError(f"run {run_id} is not in {self.path}; 'perfatlas show' lists the runs")
        row = rows[0]
        keys = ("id", "started", "finished", "status", "host", "fingerprint")
        run = dict(zip(keys, row[:6]))
        run["status"] = self._status(row[3], row[4], row[11])
        for column, text in zip(("topology", "context", "suite", "argv", "software"), row[6:11]):
            try:
                run[column] = text if column == "suite" else _loads(text, run_id, column)
            except _BadRow as bad:
                self._say(f"run {run_id} in {self.path} is damaged ({bad}): read as empty")
                run[column] = [] if column == "argv" else {}
        return run

    def topology_xml(self, run_id: int) -> str | None:
        """The hwloc XML stored with a run; None for runs stored before perfatlas kept it."""
        rows = self._select("runs", "topology_xml", "id", self.run(run_id)["id"])
        return rows[0][0] if rows else None

    def runs(self) -> list[dict[str, Any]]:
        rows = self._select("runs", "id, started, status, host, fingerprint, suite, pid")
        try:
            counts = dict(
                self.db.execute("SELECT run_id, COUNT(*) FROM results GROUP BY run_id").fetchall()
            )
        except sqlite3.DatabaseError:  # damaged: counted as far as they can be read
            counts = {}
            for (run_id,) in self._select("results", "run_id"):
                counts[run_id] = counts.get(run_id, 0) + 1
        keys = ("id", "started", "status", "host", "fingerprint", "suite")
        return [
            {
                **dict(zip(keys, row)),
                "status": self._status(row[2], row[3], row[6]),
                "results": counts.get(row[0], 0),
            }
            for row in rows
        ]

    def resolve_run(self, ref: str) -> int:
        """'7' -> 7, 'last' -> the newest run."""
        if ref == "last":
            row = self.db.execute("SELECT MAX(id) FROM runs").fetchone()
            if row[0] is None:
                raise UserError(f"{self.path} holds no runs yet; start one with 'perfatlas run'")
            return int(row[0])
        if not (ref.isascii() and ref.isdigit()):
            raise UserError(f"'{ref}' is not a run id: give a number or 'last'")
        digits = ref.lstrip("0") or "0"  # counted before int(): 5,000 digits are a ValueError
        if len(digits) > len(str(MAX_RUN_ID)) or int(digits) > MAX_RUN_ID:
            shown = ref if len(ref) <= 40 else f"{ref[:20]}... ({len(ref)} digits)"
            raise UserError(
                f"run {shown} is out of range: run ids are 1 to {MAX_RUN_ID} (SQLite's "
                "largest integer); 'perfatlas show' lists the runs"
            )
        return self.run(int(digits))["id"]

    # -- results -----------------------------------------------------------------------------
    @_writes
    def add_document(self, run_id: int, document: dict, warnings: list[WarningRecord]) -> list[int]:
        """Store every metric of one native result document, committed at once."""
        with self.transaction():
            return self._insert_document(run_id, document, warnings)

    @_writes
    def replace_document(
        self, ids: list[int], run_id: int, document: dict, warnings: list[WarningRecord]
    ) -> list[int]:
        """Replace the rows `ids` (a document stored before) by `document`, in one commit: a
        measurement's pooled repetitions so far (--repeat) are stored as each one completes."""
        with self.transaction():
            self.db.executemany("DELETE FROM results WHERE id = ?", [(i,) for i in ids])
            return self._insert_document(run_id, document, warnings)

    def _insert_document(
        self, run_id: int, document: dict, warnings: list[WarningRecord]
    ) -> list[int]:
        params = document["params"]
        hot = (params.get("bytes"), params.get("threads", len(params.get("cpus", [])) or None))
        ids = []
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

    def result_count(self, run_id: int) -> int:
        """How many results (rows) run `run_id` holds."""
        try:
            return int(
                self.db.execute(
                    "SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
            )
        except sqlite3.DatabaseError as error:
            raise UserError(
                f"database {self.path}: the results cannot be counted ({error})"
            ) from None

    def results(self, run_id: int, benchmark: str | None = None) -> list[Result]:
        results = []
        for row in self._select("results", _RESULT_COLUMNS, "run_id", run_id):
            if benchmark and row[2] != benchmark:
                continue
            try:
                results.append(self._result(row))
            except _BadRow as bad:
                self._say(
                    f"result {row[0]} of run {run_id} in {self.path} is damaged ({bad}): left out"
                )
        return results

    def result_documents(self, run_id: int) -> Iterator[dict]:
        """The distinct native documents of a run, in the order they were stored."""
        seen = set()
        for id_, text in self._select("results", "id, document", "run_id", run_id):
            if text not in seen:
                seen.add(text)
                try:
                    yield _loads(text, id_, "document")
                except _BadRow as bad:
                    self._say(
                        f"result {id_} of run {run_id} in {self.path} is damaged ({bad}): left out"
                    )

    # -- findings (perfatlas.findings) ---------------------------------------------------------
    @_writes
    def set_findings(self, run_id: int, document: dict) -> None:
        """Store the findings document of a run, replacing the one stored before."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO findings (run_id, computed, document) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id) DO UPDATE SET computed = excluded.computed,"
                " document = excluded.document",
                (run_id, _now(), json.dumps(document, allow_nan=False)),
            )

    def findings(self, run_id: int) -> dict | None:
        """The findings document stored with a run; None where it has none (a run stored before
        version 6, imported, or whose findings could not be computed) or it cannot be read."""
        for id_, text in self._select("findings", "id, document", "run_id", run_id):
            try:
                return _loads(text, id_, "document")
            except _BadRow as bad:
                self._say(
                    f"findings of run {run_id} in {self.path} are damaged ({bad}): recomputed"
                )
        return None

    # -- baselines (perfatlas baseline, perfatlas check) --------------------------------------
    @_writes
    def set_baseline(self, name: str, run_id: int) -> int | None:
        """Name run `run_id` baseline `name`; returns the run it named before, if any."""
        before = self.baselines().get(name)
        with self.transaction():
            self.db.execute(
                "INSERT INTO baselines (name, run_id, created) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id,"
                " created = excluded.created",
                (name, self.run(run_id)["id"], _now()),
            )
        return before

    @_writes
    def remove_baseline(self, name: str) -> int:
        """Forget baseline `name` (its run is kept); returns the run it named."""
        run_id = self.baseline(name)
        with self.transaction():
            self.db.execute("DELETE FROM baselines WHERE name = ?", (name,))
        return run_id

    def baselines(self) -> dict[str, int]:
        """Baseline names and their runs."""
        rows = self.db.execute("SELECT name, run_id FROM baselines ORDER BY name").fetchall()
        return {name: int(run_id) for name, run_id in rows}

    def baseline(self, name: str) -> int:
        """The run of baseline `name`, or one sentence naming those there are."""
        found = self.baselines()
        if name not in found:
            known = ", ".join(found) or "none yet ('perfatlas baseline set NAME RUN')"
            raise UserError(f"no baseline named {name!r} in {self.path}; baselines: {known}")
        return found[name]

    def baseline_run(self, name: str) -> dict[str, Any]:
        """The run record of baseline `name`; one sentence where that run is gone (deleted
        from the file by hand: nothing in perfatlas deletes a run)."""
        run_id = self.baseline(name)
        if not self._select("runs", "id", "id", run_id):
            raise UserError(
                f"baseline {name} names run {run_id}, which is not in {self.path}: "
                f"'perfatlas baseline set {name} RUN' names another run, "
                f"'perfatlas baseline rm {name}' forgets it"
            )
        return self.run(run_id)

    # -- profiles (perfatlas profile) ---------------------------------------------------------
    @_writes
    def add_profile(self, run_id: int, command: list[str], document: dict) -> int:
        """Store one perfatlas-ipm profile (docs/profile.md) of a run, committed at once."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO profiles (run_id, command, partial, document) VALUES (?, ?, ?, ?)",
                (run_id, json.dumps(command), int(bool(document["partial"])), json.dumps(document)),
            )
        return int(cursor.lastrowid)

    def profiles(self, run_id: int) -> list[dict[str, Any]]:
        profiles = []
        for id_, command, partial, document in self._select(
            "profiles", "id, command, partial, document", "run_id", run_id
        ):
            try:
                profiles.append(
                    {
                        "id": id_,
                        "command": _loads(command, id_, "command"),
                        "partial": bool(partial),
                        "document": _loads(document, id_, "document"),
                    }
                )
            except _BadRow as bad:
                self._say(
                    f"profile {id_} of run {run_id} in {self.path} is damaged ({bad}): left out"
                )
        return profiles

    # -- scenarios (perfatlas scenario) ----------------------------------------------------------
    @_writes
    def add_scenario(
        self, run_id: int, kind: str, name: str, document: dict, jobs: list[dict]
    ) -> int:
        """Store a scenario (or an interference matrix) and its jobs, committed at once."""
        columns = ("job", "threads", "start_s", "end_s", "wall_s", "dedicated_s", "user_s")
        columns += ("system_s", "waiting_s", "migrations")
        with self.transaction():
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
        for id_, kind, name, document in self._select(
            "scenarios", "id, kind, name, document", "run_id", run_id
        ):
            try:
                jobs = [
                    _loads(text, job_id, "document")
                    for job_id, text in self._select(
                        "scenario_jobs", "id, document", "scenario_id", id_
                    )
                ]
                found.append(
                    {
                        "id": id_,
                        "kind": kind,
                        "name": name,
                        **_loads(document, id_, "document"),
                        "jobs": jobs,
                    }
                )
            except _BadRow as bad:
                self._say(
                    f"scenario {id_} of run {run_id} in {self.path} is damaged ({bad}): left out"
                )
        return found

    @staticmethod
    def _result(row: tuple) -> Result:
        return Result(
            id=row[0],
            run_id=row[1],
            benchmark=row[2],
            params=_loads(row[3], row[0], "params"),
            metric=row[4],
            unit=row[5],
            samples=_loads(row[6], row[0], "samples"),
            n=row[7],
            median=row[8],
            ci_lo=row[9],
            ci_hi=row[10],
            min=row[11],
            max=row[12],
            not_measurable=row[13],
            warnings=_warnings_read(row[14], row[0]),
            document=_loads(row[15], row[0], "document"),
        )
