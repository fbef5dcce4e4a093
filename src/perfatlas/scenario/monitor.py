"""What the kernel says about a running job, sampled from /proc while it runs.

Per thread (/proc/PID/task/TID): schedstat's first two fields, the time on a CPU and the time
runnable but waiting for one (ns, exact; Documentation/scheduler/sched-stats.rst), and
se.nr_migrations from sched. Per process: utime and stime from /proc/PID/stat (clock ticks, all
threads, living or not), which only split the exact on-CPU time into user and system parts. A
thread's counters are kept at the largest value seen, so a thread that ends keeps what its last
sample saw (up to one sampling interval is lost per ended thread).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Point:
    """One timeline sample: the interval ending at `t` (s since the scenario started)."""

    t: float
    user_s: float  # CPU time in user mode during the interval, over all threads
    system_s: float
    waiting_s: float  # runnable but not running


@dataclass
class ProcessMonitor:
    pid: int
    origin: float  # time.monotonic() of the scenario's start
    running_ns: dict[int, int] = field(default_factory=dict)  # per thread, largest seen
    waiting_ns: dict[int, int] = field(default_factory=dict)
    migrations: dict[int, int] = field(default_factory=dict)
    ticks: tuple[int, int] = (0, 0)  # utime, stime of the process
    timeline: list[Point] = field(default_factory=list)
    _last: tuple[float, float, float] = (0.0, 0.0, 0.0)  # cumulative run, wait (s), time

    def sample(self, now: float) -> None:
        """Read the counters and add the interval since the previous sample to the timeline."""
        task_dir = f"/proc/{self.pid}/task"
        try:
            tids = [int(name) for name in os.listdir(task_dir)]
        except OSError:
            return  # reaped already
        for tid in tids:
            self._read_thread(f"{task_dir}/{tid}", tid)
        self.ticks = _process_ticks(self.pid) or self.ticks
        running, waiting = self.running_s, self.waiting_s
        run_delta = running - self._last[0]
        utime, stime = self.ticks
        system_share = stime / (utime + stime) if utime + stime else 0.0
        t = now - self.origin
        if t > self._last[2]:
            self.timeline.append(
                Point(
                    t,
                    run_delta * (1.0 - system_share),
                    run_delta * system_share,
                    waiting - self._last[1],
                )
            )
            self._last = (running, waiting, t)

    def _read_thread(self, folder: str, tid: int) -> None:
        try:
            with open(f"{folder}/schedstat") as file:
                running, waiting = (int(word) for word in file.read().split()[:2])
        except (OSError, ValueError):
            return
        self.running_ns[tid] = max(running, self.running_ns.get(tid, 0))
        self.waiting_ns[tid] = max(waiting, self.waiting_ns.get(tid, 0))
        count = _migrations(f"{folder}/sched")
        if count is not None:
            self.migrations[tid] = max(count, self.migrations.get(tid, 0))

    @property
    def running_s(self) -> float:
        return sum(self.running_ns.values()) * 1e-9

    @property
    def waiting_s(self) -> float:
        return sum(self.waiting_ns.values()) * 1e-9

    @property
    def migration_count(self) -> int | None:
        return sum(self.migrations.values()) if self.migrations else None

    @property
    def threads_seen(self) -> int:
        return len(self.running_ns)


def _process_ticks(pid: int) -> tuple[int, int] | None:
    """utime and stime (fields 14 and 15 of /proc/PID/stat, counted after the command's ')')."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]), int(fields[12])


def _migrations(path: str) -> int | None:
    """se.nr_migrations of one thread (present where the kernel has CONFIG_SCHED_DEBUG)."""
    try:
        with open(path) as file:
            for line in file:
                if line.startswith("se.nr_migrations"):
                    return int(line.split(":")[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
