"""`perfatlas profile -- COMMAND`: run the command under perfatlas-ipm with its output passed
through (the library's banner shows), then import what the library wrote, store it as a run and
write its report. A program that fails still has its (partial) profile stored, and perfatlas then
exits non-zero with one sentence saying how the program ended."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from datetime import datetime
from pathlib import Path

from perfatlas.errors import UserError
from perfatlas.profile.command import ProfiledCommand, library, profiled
from perfatlas.profile.documents import PROFILE_FILE, RANK_PATTERN
from perfatlas.profile.partial import read_folder
from perfatlas.profile.storage import store_profile
from perfatlas.signal_names import signal_name
from perfatlas.store import Store
from perfatlas.text_file import write_text_file

REPORT_FILE = "report.html"


def default_folder() -> Path:
    """./perfatlas-profile-YYYYmmdd-HHMMSS, with -2, -3 ... when that exists already."""
    base = Path(f"perfatlas-profile-{datetime.now():%Y%m%d-%H%M%S}")
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


def prepare_folder(folder: Path) -> bool:
    """Make `folder` ready for the library's files; True when it was created here."""
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".perfatlas-probe-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise UserError(f"cannot write the profile to {folder}: {error.strerror}") from None
    old = [p.name for p in [folder / PROFILE_FILE, *folder.glob(RANK_PATTERN)] if p.exists()]
    if old:
        raise UserError(
            f"{folder} already holds a profile ({old[0]}); give a new or empty folder with --out"
        )
    return created


def run(command: ProfiledCommand) -> int:
    """Run with stdin, stdout and stderr passed through; the exit status (negative: a signal)."""
    try:
        process = subprocess.Popen(command.argv, env={**os.environ, **command.env})
    except OSError as error:
        raise UserError(f"cannot start {command.argv[0]}: {error.strerror}") from None
    try:
        return process.wait()
    except KeyboardInterrupt:  # the program got the Ctrl-C too: keep what it wrote
        return process.wait()


def ending(program: str, status: int) -> str:
    if status < 0:
        return f"{program} was killed by {signal_name(-status)}"
    return f"{program} exited with status {status}"


def profile(
    command: list[str], out: str | None, json_path: str | None, store: Store, argv: list[str]
) -> int:
    from perfatlas.machine import Machine
    from perfatlas.report import write_report

    lib = library()
    folder = (Path(out) if out else default_folder()).resolve()
    prepared = profiled(command, folder, lib)
    if json_path:  # an unwritable copy fails before the program runs
        try:
            Path(json_path).open("a").close()
        except OSError as error:
            raise UserError(f"cannot write {json_path}: {error.strerror}") from None
    created = prepare_folder(folder)
    machine = Machine.detect()
    status = run(prepared)
    document = read_folder(folder, command)
    if document is None:
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        if status != 0:
            raise UserError(f"{ending(prepared.program, status)} before any rank wrote a profile")
        raise UserError(
            f"{prepared.program} wrote no profile: it never called MPI_Init (is it an MPI program?)"
        )
    run_id = store_profile(
        store, machine, argv, command, document, "complete" if status == 0 else "failed"
    )
    print(f"stored as run {run_id} in {store.path}; profile files in {folder}")
    if document["partial"]:
        print(f"partial profile: {document.get('partial_reason') or 'the program did not finish'}")
    if json_path:
        write_text_file(json_path, json.dumps(document, indent=1), "the profile document (--json)")
        print(f"profile document: {json_path}")
    print(f"report: {write_report(store, run_id, folder / REPORT_FILE)}")
    if status != 0:
        raise UserError(
            f"{ending(prepared.program, status)}; its profile is stored as run {run_id}"
        )
    return 0


def show_stored(store: Store, run_id: int, folder: Path) -> None:
    """A profile made elsewhere (perfatlas.executors.elsewhere) and imported as run `run_id`:
    where it is, and its report written again from this database."""
    from perfatlas.report import write_report

    print(f"stored as run {run_id} in {store.path}; profile files in {folder}")
    print(f"report: {write_report(store, run_id, folder / REPORT_FILE)}")
