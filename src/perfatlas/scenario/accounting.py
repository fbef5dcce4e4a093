"""Per-job figures, the accounting check and the scenario summary (PARbench's: CPUs, bench time,
user / system / idle time, completion and waiting times), from the jobs' outcomes.

Accounting: a job's threads are each either running (user or system time, rusage) or runnable
and waiting (schedstat) for the whole wall time, except while they sleep or before they exist,
so user + system + waiting ~ wall x threads. pa-parbench's start-up (about 45 ms here: hwloc
topology, the OpenMP team) runs on one thread, OpenMP threads may sleep at a barrier, and the
last 20 ms sample of an ended thread's waiting time can be lost, so the check allows 10 % of
wall x threads plus 50 ms per thread; outside that it is a warning that says what does not add up.
"""

from __future__ import annotations

from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.scenario.side_by_side import Outcome

ACCOUNTING_FRACTION = 0.10
ACCOUNTING_S_PER_THREAD = 0.05


def accounting(outcome: Outcome) -> dict:
    threads = outcome.instance.threads
    expected = outcome.wall_s * threads
    accounted = outcome.user_s + outcome.system_s + outcome.waiting_s
    allowed = ACCOUNTING_FRACTION * expected + ACCOUNTING_S_PER_THREAD * threads
    ok = abs(accounted - expected) <= allowed
    warning = WarningRecord(
        Kind.ACCOUNTING,
        f"job {outcome.instance.name}: user + system + waiting = {accounted:.3f} s but wall "
        f"x threads = {outcome.wall_s:.3f} s x {threads} = {expected:.3f} s (more than "
        f"{allowed:.3f} s apart): its threads slept or were not all busy",
        "check the program and OMP_WAIT_POLICY",
    )
    return {
        "expected_s": expected,
        "accounted_s": accounted,
        "allowed_s": allowed,
        "ok": ok,
        "warning": None if ok else warning.as_dict(),  # a perfatlas.common.warning record
    }


def job_row(outcome: Outcome, dedicated_s: float | None, job: str) -> dict:
    """What is stored and shown of one job: times, extension, accounting, timeline."""
    instance = outcome.instance
    return {
        "job": instance.name,
        "spec": job,
        "threads": instance.threads,
        "nice": instance.nice,
        "binding": ",".join(map(str, instance.bind)) if instance.bind else "OS",
        "start_s": outcome.start_s,
        "end_s": outcome.end_s,
        "wall_s": outcome.wall_s,
        "dedicated_s": dedicated_s,
        "extension": outcome.wall_s / dedicated_s if dedicated_s else None,
        "user_s": outcome.user_s,
        "system_s": outcome.system_s,
        "waiting_s": outcome.waiting_s,
        "running_s": outcome.running_s,
        "migrations": outcome.migrations,
        "threads_seen": outcome.threads_seen,
        "accounting": accounting(outcome),
        "timeline": [[p.t, p.user_s, p.system_s, p.waiting_s] for p in outcome.timeline],
        "invocations": len(outcome.document["derived"]["invocations"]),
    }


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def job_cells(row: dict) -> list[str]:
    """A job_row as text, the columns the jobs tables of the terminal and the report share: job,
    threads, nice, binding, start, end, wall, dedicated, extension, user, system, waiting (s) and
    migrations; '-' where unknown."""
    return [
        row["job"],
        str(row["threads"]),
        str(row["nice"]),
        row["binding"],
        *(_seconds(row[key]) for key in ("start_s", "end_s", "wall_s", "dedicated_s")),
        "-" if row["extension"] is None else f"{row['extension']:.2f}",
        *(_seconds(row[key]) for key in ("user_s", "system_s", "waiting_s")),
        "-" if row["migrations"] is None else str(row["migrations"]),
    ]


def summary(rows: list[dict], cpus: tuple[int, ...]) -> dict:
    """PARbench's scenario summary: CPU time available over the bench time and where it went."""
    start = min(row["start_s"] for row in rows)
    bench = max(row["end_s"] for row in rows) - start
    available = len(cpus) * bench
    user = sum(row["user_s"] for row in rows)
    system = sum(row["system_s"] for row in rows)
    extensions = [row["extension"] for row in rows if row["extension"]]
    return {
        "cpus": len(cpus),
        "cpu_list": ",".join(map(str, cpus)),
        "jobs": len(rows),
        "bench_s": bench,
        "available_s": available,
        "user_s": user,
        "system_s": system,
        "idle_s": max(0.0, available - user - system),
        "waiting_s": sum(row["waiting_s"] for row in rows),
        "completion_s": {row["job"]: row["end_s"] - start for row in rows},
        "mean_extension": sum(extensions) / len(extensions) if extensions else None,
        "max_extension": max(extensions, default=None),
        "accounting_warnings": [  # perfatlas.common.warning records
            row["accounting"]["warning"] for row in rows if not row["accounting"]["ok"]
        ],
    }
