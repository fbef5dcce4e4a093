"""`perfatlas profile -- COMMAND`: run the command under perfatlas-ipm with its output passed
through (the library's banner shows), then import what the library wrote, store it as a run and
write its report. A program that fails still has its (partial) profile stored, and perfatlas then
exits non-zero with one sentence saying how the program ended."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from perfatlas.comm.comm_atlas import CommAtlas, stored_comm_atlas
from perfatlas.common.background import Background
from perfatlas.common.errors import UserError
from perfatlas.common.signal_names import signal_name
from perfatlas.common.text_file import write_text_file
from perfatlas.machine.topology import Machine
from perfatlas.profile.atlas_gaps import atlas_gaps, measure_gaps
from perfatlas.profile.command import FAMILY_NAMES, ProfiledCommand, profiled
from perfatlas.profile.documents import PROFILE_FILE, RANK_PATTERN
from perfatlas.profile.noise_cadence import noise_model
from perfatlas.profile.placement_args import launch_words, whatif_text
from perfatlas.profile.placement_whatif import placement_whatif
from perfatlas.profile.profile_files import read_folder
from perfatlas.profile.rank_placement import rank_places
from perfatlas.profile.storage import MachineRecord, store_profile
from perfatlas.store.database import Store

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


# What stops perfatlas profile itself (a batch system's time limit sends SIGTERM, a closed
# terminal SIGHUP, Ctrl-C SIGINT): passed on to the launcher, which stops the ranks (each writes
# its document, flagged partial: native/ipm/lifecycle.c), and waited for.
STOPPING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@dataclass(frozen=True)
class Ended:
    status: int  # the launcher's exit status (negative: the signal that killed it)
    stopped_by: int | None  # the signal that stopped perfatlas
    passed_on: bool = False  # sent to the launcher (a terminal's Ctrl-C reached it already)


def _terminal_sent_it_too() -> bool:
    """Whether a terminal's Ctrl-C reached the launcher already: perfatlas is in the
    terminal's foreground process group, which the launcher shares."""
    try:
        return os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def run(command: ProfiledCommand) -> Ended:
    """Run with stdin, stdout and stderr passed through, until the launcher ends."""
    try:
        process = subprocess.Popen(command.argv, env={**os.environ, **command.env})
    except OSError as error:
        raise UserError(f"cannot start {command.argv[0]}: {error.strerror}") from None
    received: list[int] = []
    passed: list[int] = []

    def pass_on(number: int, frame: object) -> None:
        received.append(number)
        if number != signal.SIGINT or not _terminal_sent_it_too():
            passed.append(number)
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(number)

    previous = {number: signal.signal(number, pass_on) for number in STOPPING}
    try:
        status = process.wait()  # a signal runs pass_on, then the wait goes on (PEP 475)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return Ended(status, received[0] if received else None, bool(passed))


RANKS_GONE_S = 10.0  # how long a stopped launcher's ranks on this host may take to go


def _wait_for_ranks_here(document: dict) -> None:
    """A launcher that was stopped can end before its ranks have: wait (bounded) until the
    ranks of this host are gone, so that none outlives perfatlas (the rest are their hosts')."""
    here = socket.gethostname()
    pids = [r["pid"] for r in document["ranks"] if r.get("host") == here and r.get("pid")]
    deadline = time.monotonic() + RANKS_GONE_S
    while any(map(still_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)


def still_running(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie has ended: only its parent's wait is left)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] != "Z"


SPAWNED_PATTERN = "spawned-*"  # a spawned job's folder beside its parent's files (table.c)


def store_spawned(
    store: Store, machine: MachineRecord, argv: list[str], folder: Path, parent: int
) -> None:
    """Each job the program started with MPI_Comm_spawn (its files in a folder of its own) as a
    run of its own beside the parent's run."""
    for job in sorted(p for p in folder.glob(SPAWNED_PATTERN) if p.is_dir()):
        document = read_folder(job, [])
        if document is None:
            continue
        status = "failed" if document["partial"] else "complete"
        suite = f"profile: spawned by run {parent}"
        run_id = store_profile(
            store, machine, argv, document.get("command") or [], document, status, suite
        )
        print(f"spawned job stored as run {run_id}; its profile files in {job}")


def ending(program: str, status: int) -> str:
    if status < 0:
        return f"{program} was killed by {signal_name(-status)}"
    return f"{program} exited with status {status}"


def atlas_for(store: Store, fingerprint: str, how: str, mpi: str | None) -> CommAtlas | None:
    """The comm atlas the profile is joined with (--atlas): none, or this machine's stored one
    of the program's MPI (`mpi`, its family; None for a program started without a launcher:
    any); `stored` refuses, before the program runs, a store that holds none."""
    if how == "none":
        return None
    atlas = stored_comm_atlas(store, fingerprint, mpi)
    if atlas.empty and how == "stored":
        of = f" measured with {FAMILY_NAMES.get(mpi, mpi)}" if mpi else ""
        raise UserError(
            f"--atlas stored: {store.path} holds no comm atlas of this machine (fingerprint "
            f"{fingerprint}){of}: measure one with 'perfatlas run comm', or give --atlas auto "
            "or none"
        )
    return atlas


ATLAS_BUDGET_S = 60.0  # --atlas-budget: the most seconds measuring what the atlas lacks


def _measure_missing(
    store: Store,
    machine: Machine,
    document: dict,
    atlas: CommAtlas,
    budget: float,
    argv: list[str],
    command: list[str],
) -> CommAtlas:
    """--atlas auto: what the join lacks (atlas_gaps) measured now, each part a run of its own;
    returns the store's atlas, which then holds them."""
    places = rank_places(document, machine.topology, socket.gethostname())
    gaps = atlas_gaps(document, atlas, places, machine.topology, command)
    if not gaps:
        return atlas
    print(f"the comm atlas lacks {len(gaps)} part(s) the join needs; measuring (--atlas-budget "
          f"{budget:g} s)")  # fmt: skip
    try:
        said = measure_gaps(gaps, store, machine, budget, argv, atlas.mpi)
    except UserError as error:
        said = [f"not measured: {error}"]
    for sentence in said:
        print(f"  {sentence}")
    return stored_comm_atlas(store, machine.fingerprint, atlas.mpi)


def profile(
    command: list[str],
    out: str | None,
    json_path: str | None,
    store: Store,
    argv: list[str],
    atlas_how: str = "auto",
    atlas_budget: float = ATLAS_BUDGET_S,
) -> int:
    from perfatlas import report

    folder = (Path(out) if out else default_folder()).resolve()
    prepared = profiled(command, folder)  # the library of the launcher's MPI
    if json_path:  # an unwritable copy fails before the program runs
        try:
            Path(json_path).open("a").close()
        except OSError as error:
            raise UserError(f"cannot write {json_path}: {error.strerror}") from None
    created = prepare_folder(folder)
    # What every report needs (its sections, matplotlib: most of what follows the program when
    # done after it, bench/profile_postprocess.py) is imported while the program runs.
    with Background(report.prepare) as report_ready:
        detected = Machine.detect()
        machine = MachineRecord.of(detected)
        try:
            atlas = atlas_for(store, machine.fingerprint, atlas_how, prepared.mpi)
        except UserError:  # before the program: the folder made for it goes again
            if created:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        ended = run(prepared)
        document = _profile_written(folder, command, created, prepared, ended, machine)
        status = _status(ended)
        try:  # the profile is stored however the measuring of the atlas ends
            if atlas is not None and atlas_how == "auto" and status == "complete" and atlas_budget:
                atlas = _measure_missing(
                    store, detected, document, atlas, atlas_budget, argv, command
                )
        finally:
            if atlas is not None:
                noise = noise_model(store, machine.fingerprint, document)
                document["atlas"] = {**atlas.document, "noise": noise}
            run_id = store_profile(store, machine, argv, command, document, status)
        print(f"stored as run {run_id} in {store.path}; profile files in {folder}")
        if document.get("atlas"):
            _suggest_placement(document, machine, folder)
        store_spawned(store, machine, argv, folder, run_id)
        if document["partial"]:
            why = document.get("partial_reason") or "the program did not finish"
            print(f"partial profile: {why}")
        if json_path:
            text = json.dumps(document, indent=1)
            write_text_file(json_path, text, "the profile document (--json)")
            print(f"profile document: {json_path}")
        report_ready.result()
        print(f"report: {_write_report(store, run_id, folder)}")
    if status != "complete":
        raise UserError(
            f"{_stopped(ended)}{ending(prepared.program, ended.status)}; its profile is stored "
            f"as run {run_id}"
        )
    return 0


def _suggest_placement(document: dict, machine: MachineRecord, folder: Path) -> None:
    """The what-if placement (placement_whatif) said, its launchers' files written in `folder`."""
    places = rank_places(document, machine.topology, socket.gethostname())
    whatif = placement_whatif(document, places)
    if not whatif.order:
        return
    print(whatif_text(whatif))
    for words in launch_words(whatif, str(folder)):
        if words.file is not None:
            write_text_file(str(folder / words.file), words.text or "", "the what-if's file")
        print(f"  {words.launcher}: {words.words}")


def _stopped(ended: Ended) -> str:
    """What stopped perfatlas, as the start of a sentence; "" when nothing did."""
    if ended.stopped_by is None:
        return ""
    how = " and passed it on" if ended.passed_on else ", which the launcher got too"
    return f"perfatlas was stopped by {signal_name(ended.stopped_by)}{how}: "


def _status(ended: Ended) -> str:
    """The stored run's status."""
    if ended.stopped_by is not None:
        return "interrupted"
    return "complete" if ended.status == 0 else "failed"


def _profile_written(
    folder: Path,
    command: list[str],
    created: bool,
    prepared: ProfiledCommand,
    ended: Ended,
    machine: MachineRecord,
) -> dict:
    """The profile the ranks wrote (read once the ranks of a stopped launcher are gone), its
    ranks placed on this machine; else one sentence saying why there is none, the folder
    removed where perfatlas made it."""
    document = read_folder(folder, command, machine.topology, socket.gethostname())
    stopped = _stopped(ended)
    if document is not None:
        if stopped:
            _wait_for_ranks_here(document)
        return document
    if created:
        with contextlib.suppress(OSError):
            folder.rmdir()
    if ended.status != 0 or stopped:
        raise UserError(
            f"{stopped}{ending(prepared.program, ended.status)} before any rank wrote a profile"
        )
    raise UserError(
        f"{prepared.program} wrote no profile: it never called MPI_Init (is it an MPI program?)"
    )


def _write_report(store: Store, run_id: int, folder: Path) -> Path:
    from perfatlas.report import write_report
    from perfatlas.store.run_data import RunData

    return write_report(RunData.load(store, run_id), folder / REPORT_FILE)


def show_stored(store: Store, run_id: int, folder: Path) -> None:
    """A profile made elsewhere (perfatlas.run.elsewhere) and imported as run `run_id`:
    where it is, and its report written again from this database."""
    print(f"stored as run {run_id} in {store.path}; profile files in {folder}")
    print(f"report: {_write_report(store, run_id, folder)}")
