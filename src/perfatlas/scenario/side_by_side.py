"""Run job processes side by side and measure each one while it runs.

Every job is its own process (pa-parbench mode=program), started at its offset with its CPU set
(the scenario's subset, or pinned threads), its nice level, and a thread that blocks in
waitid(WEXITED | WNOWAIT) to take the exit time exactly while leaving the process unreaped.
The main loop samples /proc every 20 ms (perfatlas.scenario.monitor), or at the interval the
caller gives, and wakes at once when a process exits; then a last sample is read while /proc
still holds it, and only then is it reaped with wait4, whose rusage gives its user and system
CPU time over all its threads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.launch.native import executable
from perfatlas.scenario.monitor import Point, ProcessMonitor

INTERVAL_S = 0.02


@dataclass(frozen=True)
class Instance:
    """One process to run: a copy of a job, its program, when to start it."""

    name: str
    program: Path
    threads: int
    start_s: float
    nice: int = 0
    bind: tuple[int, ...] | None = None  # pinned threads; None: the OS places them


@dataclass
class Outcome:
    instance: Instance
    start_s: float  # offsets from the start of the run
    end_s: float
    user_s: float
    system_s: float
    waiting_s: float
    running_s: float  # schedstat's time on a CPU, all threads (user + system, exact)
    migrations: int | None
    threads_seen: int
    timeline: list[Point]
    document: dict

    @property
    def wall_s(self) -> float:
        return self.end_s - self.start_s


@dataclass
class _Running:
    instance: Instance
    process: subprocess.Popen
    started: float
    monitor: ProcessMonitor
    json_path: Path
    stderr_path: Path
    exited: threading.Event = field(default_factory=threading.Event)
    exit_time: float = 0.0


def argv(instance: Instance, json_path: Path) -> list[str]:
    words = [
        str(executable("pa-parbench")),
        "mode=program",
        f"file={instance.program}",
        f"json={json_path}",
    ]
    if instance.bind:
        return words + ["bind=cpus", f"cpus={','.join(map(str, instance.bind))}"]
    return words + ["bind=none"]


def check_nice(levels: list[int]) -> None:
    """Lowering the nice level below the current one needs privilege: say so before running."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    lowest = min(levels, default=current)
    if lowest < current and os.geteuid() != 0:
        raise UserError(
            f"nice = {lowest} is below this process's nice level {current}, which needs root "
            "(CAP_SYS_NICE): raise it or run as root"
        )


def _placement(cpus: tuple[int, ...], nice: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before exec: inherited by every thread it starts
        os.sched_setaffinity(0, cpus)
        os.setpriority(os.PRIO_PROCESS, 0, nice)

    return apply


def _start(
    instance: Instance, cpus: tuple[int, ...], origin: float, folder: Path, wake: threading.Event
) -> _Running:
    json_path = folder / f"{instance.name}.json"
    stderr_path = folder / f"{instance.name}.stderr"
    json_path.unlink(missing_ok=True)
    with stderr_path.open("w") as stderr:
        started = time.monotonic()
        process = subprocess.Popen(
            argv(instance, json_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=_placement(cpus, instance.nice),
        )
    running = _Running(
        instance, process, started, ProcessMonitor(process.pid, origin), json_path, stderr_path
    )

    def wait_for_exit() -> None:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        running.exit_time = time.monotonic()
        running.exited.set()
        wake.set()

    threading.Thread(target=wait_for_exit, daemon=True).start()
    return running


def _finish(running: _Running, origin: float) -> Outcome:
    running.monitor.sample(time.monotonic())  # the last sample, before the process is reaped
    _, status, usage = os.wait4(running.process.pid, 0)
    running.process.returncode = os.waitstatus_to_exitcode(status)
    if running.process.returncode != 0:
        said = running.stderr_path.read_text().strip().splitlines()
        why = said[-1] if said else f"exit status {running.process.returncode}"
        raise UserError(f"job {running.instance.name} failed: {why}")
    document = json.loads(running.json_path.read_text())
    monitor = running.monitor
    return Outcome(
        instance=running.instance,
        start_s=running.started - origin,
        end_s=running.exit_time - origin,
        user_s=usage.ru_utime,
        system_s=usage.ru_stime,
        waiting_s=monitor.waiting_s,
        running_s=monitor.running_s,
        migrations=monitor.migration_count,
        threads_seen=monitor.threads_seen,
        timeline=monitor.timeline,
        document=document,
    )


def run_together(
    instances: list[Instance],
    cpus: tuple[int, ...],
    folder: Path,
    tick: Callable[[float, int, int], None] | None = None,
    interval_s: float = INTERVAL_S,
) -> list[Outcome]:
    """Run every instance at its offset, sampling all of them every `interval_s` and when one
    exits; outcomes in finishing order. `tick(elapsed, running, finished)` is called after every
    sampling round (progress)."""
    folder.mkdir(parents=True, exist_ok=True)
    pending = sorted(instances, key=lambda i: i.start_s)
    running: list[_Running] = []
    done: list[Outcome] = []
    origin = time.monotonic()
    next_tick = origin
    wake = threading.Event()  # set by a process's exit
    try:
        while pending or running:
            while pending and pending[0].start_s <= time.monotonic() - origin:
                running.append(_start(pending.pop(0), cpus, origin, folder, wake))
            now = time.monotonic()
            round_due = now >= next_tick  # else woken early by an exit or a job's start
            for job in list(running):
                if job.exited.is_set():  # _finish takes its last sample
                    running.remove(job)
                    done.append(_finish(job, origin))
                elif round_due:
                    job.monitor.sample(now)
            if round_due:
                if tick:
                    tick(now - origin, len(running), len(done))
                next_tick += interval_s
                if pending and not running:
                    next_tick = max(next_tick, origin + pending[0].start_s)
            if not (pending or running):
                break
            wake_at = min(next_tick, origin + pending[0].start_s) if pending else next_tick
            wake.wait(max(0.0, wake_at - time.monotonic()))
            wake.clear()
    except BaseException:
        for job in running:
            _stop(job)
        raise
    return done


def _stop(job: _Running) -> None:
    try:
        os.kill(job.process.pid, signal.SIGKILL)
        os.waitpid(job.process.pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    job.process.returncode = -signal.SIGKILL
