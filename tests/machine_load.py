"""How busy the machine is now, for tests whose claim needs the cores to themselves (two kernels
on separate cores not disturbing each other): the median of /proc/stat's procs_running, the
runnable threads at each instant, over a short window, less this test's own one."""

from __future__ import annotations

import os
import statistics
import time

import pytest


def others_runnable(samples: int = 25, interval_s: float = 0.02) -> float:
    counts = []
    for _ in range(samples):
        with open("/proc/stat") as stat:
            line = next(entry for entry in stat if entry.startswith("procs_running"))
        counts.append(int(line.split()[1]) - 1)
        time.sleep(interval_s)
    return statistics.median(counts)


def skip_when_cores_are_busy() -> None:
    """Skip, saying why, where other runnable threads already fill the CPUs: a measurement of
    interference between our own processes would measure theirs."""
    cpus = len(os.sched_getaffinity(0))
    busy = others_runnable()
    if busy >= cpus:
        pytest.skip(f"{busy:g} other runnable threads on {cpus} CPUs: the cores are not ours")
