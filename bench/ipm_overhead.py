#!/usr/bin/env python3
"""What perfatlas-ipm adds: the same MPI programs with and without libperfatlas-ipm.so preloaded,
launches alternated in one run (Hoefler & Belli, SC15), np = 2 with perfatlas's own mpirun.

1. Per call: pa-ipm-overhead times a 0-byte ping-pong loop (four MPI calls, so four profiler shims,
   on the critical path of an iteration) and an allreduce loop of one double (one shim per rank,
   in parallel), and a loop of MPI_Send to MPI_PROC_NULL (no communication: the shim alone, without
   the other rank's noise). Added nanoseconds per call = (median with - median without) / shims per iteration,
   with a 95 % bootstrap interval. Goal: at most 20 ns.
2. Whole applications, wall time of the whole mpirun with and without the profiler (goal:
   slowdown at most 0.5 %): app.sweep's pa-sweep (a Sweep3D-style wavefront code: blocking
   point-to-point messages between compute blocks, 40^3 cells per rank, S8, 20 iterations), and
   Debian's hpcc (HPL with N = 3000, PTRANS, FFT, RandomAccess, STREAM, b_eff), whose RandomAccess
   polls MPI_Testany tens of millions of times: the worst case for any PMPI profiler; its
   RandomAccess figure (MPIRandomAccess_GUPs, from hpccoutf.txt) is compared too (goal: at most
   3 % slower).

    .venv/bin/python bench/ipm_overhead.py [--rounds 9] [--calls 200000] [--no-apps]
        [--apps pa-sweep,hpcc] [--library PATH ...]   (other builds of libperfatlas-ipm.so,
        e.g. an earlier one: each alternated with the others and with no profiler)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hpcc_compare import HPCCINF
from peer_rows import PeerRow, record, record_ratio

from perfatlas.launch.launchers import LaunchOptions, get_launcher
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.profile.command import library, profiled

BENCH = "ipm_overhead"
NONE = "no profiler"
SHIMS_PER_ITERATION = {
    "pingpong": 4,
    "pingpong8": 4,
    "allreduce": 1,
    "proc_null": 1,
    "test_poll": 1,
}


def mpirun_argv(program: Path, args: list[str], machine: Machine) -> list[str]:
    launch = get_launcher("mpirun").prepare(program, args, {"np": 2}, machine, LaunchOptions())
    return launch.argv


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[str, float, float]:
    """stdout, wall seconds, and CPU seconds of every process the command started (the ranks):
    on shared cores the CPU time is the steadier measure of work added."""
    start, cpu = time.perf_counter(), cpu_of_children()
    done = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, cpu_of_children() - cpu
    if done.returncode != 0:
        sys.exit(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return done.stdout, wall, cpu


def random_access_gups(folder: Path) -> float:
    """hpcc's MPI RandomAccess rate of the run that just ended (hpccoutf.txt, appended per run)."""
    found = re.findall(r"^MPIRandomAccess_GUPs=([0-9.eE+-]+)$", (folder / "hpccoutf.txt").read_text(),
                       re.MULTILINE)  # fmt: skip
    if not found:
        sys.exit("hpcc wrote no MPIRandomAccess_GUPs line")
    return float(found[-1])


def loop_medians(stdout: str) -> dict[str, float]:
    samples: dict[str, list[float]] = {}
    for line in stdout.splitlines():
        name, ns = line.split()
        samples.setdefault(name, []).append(float(ns))
    return {name: float(np.median(values)) for name, values in samples.items()}


def difference(
    with_: list[float], without: list[float], seed: int = 0
) -> tuple[float, float, float]:
    """Median(with) - median(without), with a 95 % percentile-bootstrap interval."""
    a, b = np.asarray(with_), np.asarray(without)
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(a, (2000, len(a))), axis=1) - np.median(
        rng.choice(b, (2000, len(b))), axis=1
    )
    return float(np.median(a) - np.median(b)), *map(float, np.quantile(boot, [0.025, 0.975]))


def report(label: str, runs: dict[str, dict], apps: dict[str, list[str]]) -> None:
    """Prints and records one profiler build's figures against the runs without a profiler."""
    print(f"\nprofiled with {label}")
    print(f"{'loop':10s} {'without ns/it':>14s} {'with ns/it':>11s}  added ns per call [95% CI]")
    suffix = "" if label == "perfatlas's build" else f" ({label})"
    for name, loop in runs["loops"].items():
        added, lo, hi = difference(loop[label], loop[NONE])
        shims = SHIMS_PER_ITERATION[name]
        record(
            PeerRow(
                BENCH, f"profiler: ns added per call, {name}{suffix}", "no profiler", 2,
                float(np.median(loop[label])) / shims, float(np.median(loop[NONE])) / shims,
                "ns/call", added / shims, lo / shims, hi / shims, "<= 20",
            )
        )  # fmt: skip
        print(
            f"{name:10s} {np.median(loop[NONE]):14.1f} {np.median(loop[label]):11.1f}  "
            f"{added / shims:.1f} [{lo / shims:.1f}, {hi / shims:.1f}]   goal <= 20"
        )
    for name, app in apps.items():
        print(f"{name}: {shlex.join(app)}")
        for what in ("wall", "CPU of the ranks"):
            measured = runs[what][name]
            r = record_ratio(
                BENCH, f"profiler: {name} {what} with / without{suffix}", "no profiler",
                measured[label], measured[NONE], "<= 1.005", 2, "s",
            )  # fmt: skip
            print(
                f"  {what}: without {np.median(measured[NONE]):.3f} s, with "
                f"{np.median(measured[label]):.3f} s; slowdown {100 * (r.median - 1):+.2f} % "
                f"[{100 * (r.ci_lo - 1):+.2f}, {100 * (r.ci_hi - 1):+.2f}]   goal <= 0.5 %"
            )
    gups = runs["gups"]
    if gups[NONE]:
        r = record_ratio(
            BENCH, f"profiler: hpcc MPI RandomAccess GUP/s with / without{suffix}",
            "no profiler", gups[label], gups[NONE], ">= 0.97", 2, "GUP/s",
        )  # fmt: skip
        print(
            f"  hpcc MPIRandomAccess: without {np.median(gups[NONE]):.5f} GUP/s, with "
            f"{np.median(gups[label]):.5f}; slowdown {100 * (1 / r.median - 1):+.2f} % "
            f"[{100 * (1 / r.ci_hi - 1):+.2f}, {100 * (1 / r.ci_lo - 1):+.2f}]   goal <= 3 %"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200_000, help="iterations per loop sample")
    parser.add_argument("--no-apps", action="store_true", help="skip the whole applications")
    parser.add_argument("--apps", default="pa-sweep,hpcc", help="which whole applications")
    parser.add_argument("--library", type=Path, action="append", default=[],
                        help="this libperfatlas-ipm.so (repeatable: each alternated with the "
                        "others and with no profiler); default perfatlas's own")  # fmt: skip
    args = parser.parse_args()
    machine = Machine.detect()
    libs = {str(lib): lib.resolve() for lib in args.library} or {"perfatlas's build": library()}
    configurations = [NONE, *libs]
    loops = mpirun_argv(executable("pa-ipm-overhead"), [str(args.calls), "5"], machine)
    runs: dict[str, dict] = {"loops": {}, "wall": {}, "CPU of the ranks": {},
                             "gups": {c: [] for c in configurations}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="perfatlas-ipm-overhead-") as tmp:
        folder = Path(tmp)
        # hpcc_compare's input with a larger HPL (N = 3000): seconds of work, not just startup.
        (folder / "hpccinf.txt").write_text(HPCCINF.replace("200          Ns", "3000         Ns"))
        sweep = ["it=40", "jt=40", "kt=40", "mmo=10", "mmi=5", "mk=10", "iterations=20"]
        apps = {} if args.no_apps else {
            "pa-sweep": mpirun_argv(executable("pa-sweep"), [*sweep, "repeat=1"], machine),
            "hpcc": mpirun_argv(Path(shutil.which("hpcc") or "hpcc"), [], machine),
        }  # fmt: skip
        apps = {name: app for name, app in apps.items() if name in args.apps.split(",")}
        for round_ in range(args.rounds):
            shift = round_ % len(configurations)  # rotate which goes first
            for configuration in configurations[shift:] + configurations[:shift]:
                lib = libs.get(configuration)
                for name, argv in {"loops": loops, **apps}.items():
                    command = profiled(argv, folder, lib) if lib else None
                    launch, env = (command.argv, command.env) if command else (argv, {})
                    out, wall, cpu = run(launch, env, folder)
                    if name == "loops":
                        for loop, ns in loop_medians(out).items():
                            runs["loops"].setdefault(loop, {c: [] for c in configurations})
                            runs["loops"][loop][configuration].append(ns)
                        continue
                    if name == "hpcc":
                        runs["gups"][configuration].append(random_access_gups(folder))
                    for what, value in (("wall", wall), ("CPU of the ranks", cpu)):
                        runs[what].setdefault(name, {c: [] for c in configurations})
                        runs[what][name][configuration].append(value)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs")
    print(f"loops:   {shlex.join(loops)}")
    for label in libs:
        report(label, runs, apps)


if __name__ == "__main__":
    main()
