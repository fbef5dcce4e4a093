#!/usr/bin/env python3
"""What `perfatlas profile` adds after the profiled program ends, and where it goes.

Each round runs `perfatlas profile -- mpirun --oversubscribe -np N pa-ipm-hostile names` (named
regions at any rank count) in a fresh interpreter, as every `perfatlas profile` is, with
perfatlas's bytecode compiled first, as an installed perfatlas has it (under
PYTHONDONTWRITEBYTECODE a source tree would compile every module again in every round). The
phases are timed where perfatlas.profile.session.profile() calls them:

  program  the wait for the launcher (session.run): not post-processing
  read     the profile files read (read_folder)
  atlas    the noise model of the join (noise_model; the comm atlas is read before the program)
  store    the run stored, one transaction (store_profile; store_spawned, none here)
  imports  the wait for what the report imports (its sections, matplotlib) that the program's
           run did not cover (Background.result); the preparation's own length is given beside
  report   the run read back from the store, its report drawn and written (_write_report)
  after    from the launcher's end to the command's end: the phases, and the lines printed;
           with the CPU time this process spent in it (all its threads), which other processes'
           load does not lengthen

Rounds alternate between the rank counts; medians over rounds are quoted. Goal (issue 31):
`after` under 0.5 s for 2-4 ranks, growing no faster than linearly in ranks: the time added per
rank from one count to the next, paired within a round, must not grow with the count (the median
of (a later step's seconds per rank - the first step's) and its 95 % order-statistic interval:
an interval above 0 says faster than linear). Quote it on a quiet machine (check `uptime`).

    .venv/bin/python bench/profile_postprocess.py [--rounds 7] [--ranks 2,4,8]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import perfatlas
from perfatlas import report
from perfatlas.cli.entry import main
from perfatlas.common.background import Background
from perfatlas.common.stats import summarize
from perfatlas.launch.launchers import mpirun_path
from perfatlas.launch.native import executable
from perfatlas.profile import session

PHASES = ("read", "atlas", "store", "imports", "report")
GOAL_S, GOAL_RANKS = 0.5, (2, 3, 4)


def timed(owner, name: str, phase: str, seconds: dict[str, float], ends: dict[str, float]):
    """owner.name replaced by itself timed: its seconds added to seconds[phase], the moment it
    last returned in ends[phase] (profile() looks each one up when it calls it)."""
    function = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            ends[phase] = time.perf_counter()
            ends[f"{phase}_cpu"] = time.process_time()  # all of this process's threads
            seconds[phase] = seconds.get(phase, 0.0) + ends[phase] - start

    setattr(owner, name, wrapper)


def one_round(ranks: int, folder: Path) -> dict[str, float]:
    """The phases of one profiled run, in seconds."""
    seconds: dict[str, float] = {}
    ends: dict[str, float] = {}
    timed(session, "run", "program", seconds, ends)
    timed(session, "read_folder", "read", seconds, ends)
    timed(session, "noise_model", "atlas", seconds, ends)
    timed(session, "store_profile", "store", seconds, ends)
    timed(session, "store_spawned", "store", seconds, ends)
    timed(Background, "result", "imports", seconds, ends)
    timed(report, "prepare", "preparation", seconds, ends)  # in the background thread
    timed(session, "_write_report", "report", seconds, ends)
    out = folder / f"np{ranks}-{time.monotonic_ns()}"
    argv = [mpirun_path(), "--oversubscribe", "--allow-run-as-root", "-np", str(ranks)]
    argv += [str(executable("pa-ipm-hostile")), "names"]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        # --atlas auto with a budget of 0: the join with what is stored (nothing here), and no
        # comm benchmark measured after the program
        words = ["profile", "--out", str(out), "--atlas-budget", "0", "--", *argv]
        code = main(["--db", str(folder / "p.db"), *words])
    seconds["total"] = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"perfatlas profile exited {code} at np={ranks}")
    seconds["after"] = start + seconds["total"] - ends["program"]
    seconds["after_cpu"] = time.process_time() - ends["program_cpu"]
    seconds["preparation_after"] = max(0.0, ends["preparation"] - ends["program"])
    return seconds


def compile_bytecode() -> None:
    """perfatlas's bytecode, as an installation has it (compileall skips what is up to date)."""
    for folder in perfatlas.__path__:
        compileall.compile_dir(folder, quiet=1)


def rounds_of(counts: list[int], rounds: int, folder: Path) -> list[dict[int, dict[str, float]]]:
    """`rounds` rounds, each one run per rank count in turn, each in a fresh interpreter."""
    done = []
    for _ in range(rounds):
        round_ = {}
        for n in counts:
            command = [sys.executable, __file__, "--one", str(n), "--folder", str(folder)]
            said = subprocess.run(command, capture_output=True, text=True, check=True)
            round_[n] = json.loads(said.stdout.strip().splitlines()[-1])
        done.append(round_)
    return done


def phases_line(n: int, runs: list[dict[str, float]]) -> str:
    for r in runs:  # the lines printed, the folder checks: what the phases leave
        r["other"] = r["after"] - sum(r.get(phase, 0.0) for phase in PHASES)
    median = {key: statistics.median(r.get(key, 0.0) for r in runs) for key in runs[0]}
    after = [r["after"] for r in runs]
    parts = " + ".join(f"{phase} {median.get(phase, 0.0):.3f}" for phase in (*PHASES, "other"))
    return (
        f"np={n}: after the program {median['after']:.3f} s (median of {len(runs)}; min "
        f"{min(after):.3f}; CPU {median['after_cpu']:.3f} s) ~ {parts} (medians); program "
        f"{median['program']:.3f} s, "
        f"command {median['total']:.3f} s; preparation {median['preparation']:.3f} s in the "
        f"background, {median['preparation_after']:.3f} s of it after the program"
    )


def growth_lines(counts: list[int], done: list[dict[int, dict[str, float]]]) -> list[str]:
    """Seconds per added rank for each step between counts, and whether later steps grow."""
    steps = list(zip(counts, counts[1:]))
    per_rank = [
        [(r[b]["after"] - r[a]["after"]) / (b - a) for r in done] for a, b in steps
    ]  # per step, per round
    lines = [
        f"np {a} -> {b}: {statistics.median(s) * 1e3:+.1f} ms per added rank (median)"
        for (a, b), s in zip(steps, per_rank)
    ]
    for (a, b), later in zip(steps[1:], per_rank[1:]):
        growth = summarize([x - y for x, y in zip(later, per_rank[0])])
        faster = growth.ci_lo > 0
        lines.append(
            f"np {a} -> {b} against {steps[0][0]} -> {steps[0][1]}: per rank "
            f"{growth.median * 1e3:+.1f} ms [{growth.ci_lo * 1e3:+.1f}, {growth.ci_hi * 1e3:+.1f}]"
            f" ({growth.ci_coverage:.0%}): "
            + ("grows faster than linearly" if faster else "no faster than linearly")
        )
    return lines


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ranks", default="2,4,8")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a round, in this process
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_round(args.one, Path(args.folder))))
        return
    counts = sorted(int(n) for n in args.ranks.split(","))
    compile_bytecode()
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    folder = Path(tempfile.mkdtemp(prefix="pa-postprocess-"))
    try:
        done = rounds_of(counts, args.rounds, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for n in counts:
        print(phases_line(n, [r[n] for r in done]))
    if len(counts) > 2:
        print("\n".join(growth_lines(counts, done)))
    goal = [n for n in counts if n in GOAL_RANKS]
    if goal:
        met = all(statistics.median(r[n]["after"] for r in done) < GOAL_S for n in goal)
        print(
            f"goal: under {GOAL_S} s after the program at np {goal}: "
            + ("met" if met else "NOT met")
        )


if __name__ == "__main__":
    main_bench()
