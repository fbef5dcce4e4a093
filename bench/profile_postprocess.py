#!/usr/bin/env python3
"""What `perfatlas profile` adds after the profiled program ends, and where it goes.

Each round runs `perfatlas profile -- mpirun -np N pa-ipm-hostile names` (named regions and
messages at any rank count) with the session's wait for the launcher
(perfatlas.profile.session.run) timed: what remains of the command after that wait returns is
the post-processing (reading the rank files, storing the profile, writing the report). Rounds
alternate between the rank counts; the median over rounds is quoted, with the share of the
report in it (perfatlas.report.write_report, timed alike). Every round is
a fresh interpreter, as every `perfatlas profile` is: the imports the post-processing needs (the
report and its sections, matplotlib) are paid after the program ends, as a user pays them.
Quote it on a quiet machine (check `uptime`).

    .venv/bin/python bench/profile_postprocess.py [--rounds 7] [--ranks 2,4]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfatlas.cli.entry import main
from perfatlas.launch.launchers import mpirun_path
from perfatlas.launch.native import executable
from perfatlas.profile import session


def timed(function, seconds: list[float]):
    """`function`, appending the seconds each call takes to `seconds`."""

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds.append(time.perf_counter() - start)

    return wrapper


def one_round(ranks: int, folder: Path) -> tuple[float, float]:
    """(seconds after the program ended, of which the report) of one profiled run."""
    waited, reported = [], []
    original_run = session.run

    session.run = timed(original_run, waited)  # profile() looks both up when it calls them
    # profile() imports perfatlas.report before it starts the program (its sections, and so
    # matplotlib, only when the report is written): importing it here moves nothing
    from perfatlas import report

    report.write_report = timed(report.write_report, reported)
    out = folder / f"np{ranks}-{time.monotonic_ns()}"
    argv = [mpirun_path(), "--oversubscribe", "--allow-run-as-root", "-np", str(ranks)]
    argv += [str(executable("pa-ipm-hostile")), "names"]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["--db", str(folder / "p.db"), "profile", "--out", str(out), "--", *argv])
    total = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"perfatlas profile exited {code} at np={ranks}")
    return total - sum(waited), sum(reported)


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a round, in this process
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_round(args.one, Path(args.folder))))
        return
    counts = [int(n) for n in args.ranks.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="pa-postprocess-"))
    try:
        after: dict[int, list[float]] = {n: [] for n in counts}
        report: dict[int, list[float]] = {n: [] for n in counts}
        for _ in range(args.rounds):
            for n in counts:
                round_ = [sys.executable, __file__, "--one", str(n), "--folder", str(folder)]
                said = subprocess.run(round_, capture_output=True, text=True, check=True)
                seconds, of_report = json.loads(said.stdout.strip().splitlines()[-1])
                after[n].append(seconds)
                report[n].append(of_report)
        for n in counts:
            print(
                f"np={n}: after the program {statistics.median(after[n]):.3f} s (median of "
                f"{args.rounds}; min {min(after[n]):.3f}), of which the report "
                f"{statistics.median(report[n]):.3f} s"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
