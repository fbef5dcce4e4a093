"""What `perfatlas profile` does once the program has ended (bench/profile_postprocess.py measures
it): the report's imports made while the program runs, the run stored in one transaction, and the
report the same as one written from the store afterwards."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_profile import profile_document, write

from perfatlas.common.errors import UserError
from perfatlas.profile.storage import MachineRecord, store_profile
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

MACHINE = MachineRecord("f", {}, {}, {}, None)

# A fresh interpreter (as every perfatlas profile is) whose wait for the program first waits
# (bounded) for the report's sections to be registered: they are only if the preparation runs
# while the program does, since profile() waits for the launcher before writing the report.
WHILE_IT_RUNS = """
import sys, time
from perfatlas.cli.entry import main
from perfatlas.profile import session
from perfatlas.report import report_sections

def run(prepared, real=session.run):
    deadline = time.monotonic() + 120
    while "profile" not in report_sections._SECTIONS and time.monotonic() < deadline:
        time.sleep(0.01)
    print("prepared while it ran:", "profile" in report_sections._SECTIONS, file=sys.stderr)
    return real(prepared)

session.run = run
sys.exit(main(sys.argv[1:]))
"""


def fake_program(folder: Path) -> Path:
    """A stand-in for an MPI program: it writes a finished profile where the library would."""
    document = write(folder / "written.json", profile_document())
    program = folder / "app"
    program.write_text(f'#!/bin/sh\ncp {document} "$PERFATLAS_IPM_DIR/ipm-profile.json"\n')
    program.chmod(0o755)
    return program


def test_the_report_is_prepared_while_the_program_runs_and_draws_what_the_store_holds(tmp_path):
    db, out = tmp_path / "p.db", tmp_path / "out"
    command = ["--db", str(db), "profile", "--out", str(out), "--", str(fake_program(tmp_path))]
    said = subprocess.run(
        [sys.executable, "-c", WHILE_IT_RUNS, *command], capture_output=True, text=True
    )
    assert said.returncode == 0, said.stderr
    assert "prepared while it ran: True" in said.stderr
    again = write_report(RunData.load(Store(db, read_only=True), 1), tmp_path / "again.html")

    def timeless(html: str) -> str:
        return re.sub(r"report written \S+", "report written WHEN", html)

    assert timeless((out / "report.html").read_text()) == timeless(again.read_text())


def test_a_profile_run_is_one_commit(tmp_path):
    store = Store(tmp_path / "p.db")
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    run_id = store_profile(store, MACHINE, ["perfatlas"], ["./app"], profile_document(), "complete")
    assert [s for s in statements if s.strip().upper() == "COMMIT"] == ["COMMIT"]
    assert store.run(run_id)["status"] == "complete" and len(store.profiles(run_id)) == 1
    assert {r.metric for r in store.results(run_id)} == {"wallclock_s", "comm_fraction"}


def test_a_profile_run_that_cannot_be_stored_whole_leaves_nothing(tmp_path, monkeypatch):
    store = Store(tmp_path / "p.db")

    def full(*args, **kwargs):
        raise UserError("cannot write to database: the disk is full")

    monkeypatch.setattr(Store, "add_document", full)
    with pytest.raises(UserError, match="the disk is full"):
        store_profile(store, MACHINE, ["perfatlas"], ["./app"], profile_document(), "complete")
    assert store.runs() == [] and store.profiles(1) == []
