#!/usr/bin/env python3
"""What perfatlas-ipm adds, and its peers IPM and mpiP: the same MPI programs with and without a
profiler preloaded, launches alternated in one run (Hoefler & Belli, SC15), np = 2 with
perfatlas's own mpirun.

1. Per call: pa-ipm-overhead times a 0-byte and an 8-byte ping-pong loop (four MPI calls, so four
   profiler shims, on the critical path of an iteration), an allreduce loop of one double (one
   shim per rank, in parallel), a loop of MPI_Send to MPI_PROC_NULL (no communication: the shim
   alone, without the other rank's noise) and a failing MPI_Test poll. Every configuration below
   is launched once per round, in an order rotated each round; added nanoseconds per call = the
   median over the rounds of (with - without) / shims per iteration, the two launches of a pair
   from the same round (paired medians), with a 95 % percentile-bootstrap interval over the rounds.
   The program's timer loop (no MPI call) prices the two counter reads a shim times its call
   with: no shim that times its call can add less. Goal: at most 20 ns, or that floor where it
   is larger (a VM's rdtsc can cost 10-20 ns a read).
2. Call sites: perfatlas is launched once per depth of --callstack (PERFATLAS_IPM_CALLSTACK: 0 = no
   call sites, 1 = the default, the caller's return address in the key, up to 8 frames), each a
   configuration of its own. Rows: depth 1 - off per call (goal: no measurable change, <= 1 ns),
   and the cost of a frame, (depth D - depth 1) / (D - 1) for the deepest D, and step by step
   where two depths lie beyond 1 ((4 - 1) / 3, (8 - 4) / 4: a fixed cost of starting to unwind
   shows in the first step) (goal <= 5 ns: ours, the issue states the cost without a goal). A
   build that ignores the variable reads the same at every depth. Each depth beyond 1 is launched
   once per unwinder of --unwinder (PERFATLAS_IPM_UNWINDER: libunwind, the default where
   libunwind.so.8 loads, and glibc's backtrace), its frame rows per unwinder.
3. Peers: IPM (github.com/nerscadmin/IPM) and mpiP (github.com/LLNL/mpiP), built from their public
   sources by bench/build_peers.sh, in the same rounds (loops only, unless
   --apps-every-configuration). Rows: perfatlas's added ns per call at its default depth minus the
   peer's (goal <= 0: perfatlas ahead). mpiP walks the stack on every call (microseconds), so its
   samples are --mpip-calls iterations. A peer is taken from --ipm-library / --mpip-library, else
   from $PERFATLAS_BENCH_PEERS (default ~/.cache/perfatlas-bench/peers)/FAMILY/ipm/libipm.so and
   .../mpip/libmpiP.so, FAMILY the launcher's MPI (openmpi, mpich); one not found is skipped with
   one line saying why. Their reports (IPM's XML log, mpiP's .mpiP file) go to a temporary folder,
   emptied after each launch; IPM's banner is off (IPM_REPORT=none).
4. Whole applications, wall time of the whole mpirun and CPU time of its ranks with and without
   perfatlas at its default depth (goal: slowdown at most 0.5 %): app.sweep's pa-sweep (a
   Sweep3D-style wavefront code: blocking point-to-point messages between compute blocks, 40^3
   cells per rank, S8, 20 iterations), and Debian's hpcc (HPL with N = 3000, PTRANS, FFT,
   RandomAccess, STREAM, b_eff), whose RandomAccess polls MPI_Testany tens of millions of times:
   the worst case for any PMPI profiler; its RandomAccess figure (MPIRandomAccess_GUPs, from
   hpccoutf.txt) is compared too (goal: at most 3 % slower).

    bench/build_peers.sh ipm IPM-SOURCE; bench/build_peers.sh mpip MPIP-SOURCE   (once)
    .venv/bin/python bench/ipm_overhead.py [--rounds 9] [--calls 200000] [--no-apps]
        [--apps pa-sweep,hpcc] [--library PATH ...] [--callstack 0,1,4,8]
        [--unwinder libunwind,backtrace]
        [--ipm-library PATH] [--mpip-library PATH] [--mpip-calls N] [--no-peers]
        [--apps-every-configuration]
  --library: other builds of libperfatlas-ipm.so (e.g. an earlier one), each at every depth,
  alternated with the others, the peers and no profiler.
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hpcc_compare import HPCCINF
from peer_rows import PeerRow, record, record_ratio

from perfatlas.launch.launchers import LaunchOptions, detect_flavour, get_launcher
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.profile.command import UNWINDERS, library, profiled

BENCH = "ipm_overhead"
NONE = "no profiler"
OWN_BUILD = "perfatlas's build"
SHIMS_PER_ITERATION = {
    "pingpong": 4,
    "pingpong8": 4,
    "allreduce": 1,
    "proc_null": 1,
    "test_poll": 1,
    "region": 2,  # MPI_Pcontrol in and out
}
# Loops of calls that are not timed MPI calls, so the goal of a shim is not theirs.
NO_CALL_GOAL = {"region": "a region reads its thread's CPU time at entry and exit (getrusage)"}
CALLSTACK = "PERFATLAS_IPM_CALLSTACK"
UNWINDER = "PERFATLAS_IPM_UNWINDER"
DEFAULT_DEPTH = 1
MAX_DEPTH = 8
PEERS_ENV = "PERFATLAS_BENCH_PEERS"
PEERS_HOME = Path.home() / ".cache" / "perfatlas-bench" / "peers"
# Each peer: its library's path under the peers' folder, and how build_peers.sh makes it.
PEER_LIBRARIES = {"IPM": ("ipm", "libipm.so"), "mpiP": ("mpip", "libmpiP.so")}
TIMER_LOOP = "timer"  # pa-ipm-overhead's two counter reads, no MPI call: the floor of a shim
LOOP_LINE = re.compile(r"^(\w+) ([0-9.]+)$")  # pa-ipm-overhead's "<loop> <ns per iteration>"
GOAL_NS = 20.0


@dataclass(frozen=True)
class Configuration:
    """One way the programs are launched, once in every round."""

    label: str
    calls: int  # iterations per loop sample
    lib: Path | None = None  # preloaded; None: no profiler
    settings: dict[str, str] = field(default_factory=dict)  # variables for the ranks
    build: str = ""  # a perfatlas build's label; "" for no profiler and the peers
    depth: int | None = None  # PERFATLAS_IPM_CALLSTACK of a perfatlas configuration
    unwinder: str = ""  # PERFATLAS_IPM_UNWINDER of one beyond depth 1 ("" at depths 0 and 1)
    peer: str = ""  # "IPM", "mpiP"
    in_apps: bool = False  # the whole applications are launched with it too


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
    """Each loop's median ns per iteration; other lines (a peer's messages: mpiP writes to
    stdout) are left out."""
    samples: dict[str, list[float]] = {}
    for line in stdout.splitlines():
        match = LOOP_LINE.match(line.strip())
        if match and (match[1] in SHIMS_PER_ITERATION or match[1] == TIMER_LOOP):
            samples.setdefault(match[1], []).append(float(match[2]))
    return {name: float(np.median(values)) for name, values in samples.items()}


def paired_difference(a: list[float], b: list[float], seed: int = 0) -> tuple[float, float, float]:
    """The median of a[r] - b[r] over the rounds r, with a 95 % percentile-bootstrap interval
    (rounds resampled): a pair launched in the same round shares that round's load."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(d, (2000, len(d))), axis=1)
    return float(np.median(d)), *map(float, np.quantile(boot, [0.025, 0.975]))


def depths(text: str) -> list[int]:
    """--callstack's depths: "0,1,4,8" -> [0, 1, 4, 8]."""
    values = sorted({int(word) for word in text.split(",") if word.strip()})
    if not values or not all(0 <= value <= MAX_DEPTH for value in values):
        raise argparse.ArgumentTypeError(f"depths from 0 to {MAX_DEPTH}, e.g. 0,1,4,8")
    return values


def unwinders(text: str) -> list[str]:
    """--unwinder's names: "libunwind,backtrace" -> ["libunwind", "backtrace"]."""
    values = list(dict.fromkeys(word.strip() for word in text.split(",") if word.strip()))
    if not values or not set(values) <= set(UNWINDERS):
        raise argparse.ArgumentTypeError(f"some of {', '.join(UNWINDERS)}")
    return values


def depth_words(depth: int) -> str:
    return {0: "call sites off", DEFAULT_DEPTH: ""}.get(depth, f"stack depth {depth}")


def suffix(*words: str) -> str:
    """The non-empty words as " (a, b)", "" when none: how a row's figure names its variant."""
    kept = [word for word in words if word]
    return f" ({', '.join(kept)})" if kept else ""


def peer_library(name: str, given: Path | None, family: str) -> tuple[Path | None, str]:
    """A peer's library and "", or None and one line saying why it is skipped."""
    if given is not None:
        if not given.is_file():
            sys.exit(f"ipm_overhead: {name}: no library {given}")
        return given.resolve(), ""
    folder, file = PEER_LIBRARIES[name]
    path = Path(os.environ.get(PEERS_ENV) or PEERS_HOME) / family / folder / file
    if path.is_file():
        return path, ""
    return None, (
        f"{name}: skipped, no {path} (build it from its sources: bench/build_peers.sh {folder} "
        f"SOURCE, or give --{folder}-library PATH)"
    )


def peer_settings(name: str, reports: Path) -> dict[str, str]:
    """The peer's own report out of the way and quiet: IPM's XML log into `reports` and no banner;
    mpiP's .mpiP file into `reports` (mpiP has no switch for its few stdout lines)."""
    if name == "IPM":
        return {"IPM_REPORT": "none", "IPM_LOGDIR": str(reports)}
    return {"MPIP": f"-f {reports}"}


def default_depth(chosen: list[int]) -> int:
    """The depth a build is compared and run whole applications at: 1 where chosen."""
    return DEFAULT_DEPTH if DEFAULT_DEPTH in chosen else chosen[0]


def configurations(args: argparse.Namespace, family: str, reports: Path) -> list[Configuration]:
    """No profiler, each perfatlas build at each depth, then each peer found."""
    builds = {str(lib): lib.resolve() for lib in args.library} or {OWN_BUILD: library()}
    made = [Configuration(NONE, args.calls, in_apps=True)]
    for build, lib in builds.items():
        for depth in args.callstack:
            in_apps = args.apps_every_configuration or depth == default_depth(args.callstack)
            for unwinder in args.unwinder if depth > DEFAULT_DEPTH else [""]:
                settings = {CALLSTACK: str(depth), **({UNWINDER: unwinder} if unwinder else {})}
                label = ", ".join(f"{name}={value}" for name, value in settings.items())
                made.append(
                    Configuration(f"{build}, {label}", args.calls, lib, settings, build, depth,
                                  unwinder, in_apps=in_apps)
                )  # fmt: skip
    for name, (folder, _) in PEER_LIBRARIES.items():
        if args.no_peers:
            break
        lib, why = peer_library(name, getattr(args, f"{folder}_library"), family)
        if lib is None:
            print(why, flush=True)
            continue
        calls = args.mpip_calls if name == "mpiP" else args.calls
        made.append(
            Configuration(name, calls, lib, peer_settings(name, reports), peer=name,
                          in_apps=args.apps_every_configuration)
        )  # fmt: skip
    return made


def built_how(lib: Path) -> str:
    """The configure line build_peers.sh recorded beside a peer's library, where there is one."""
    info = lib.parent / "build-info.txt"
    if not info.is_file():
        return "no build-info.txt beside it"
    lines = dict(line.split(": ", 1) for line in info.read_text().splitlines() if ": " in line)
    return f"revision {lines.get('revision', '?')}; {lines.get('configure', '?').strip()}"


def added_per_call(loop: dict[str, list[float]], label: str, shims: int) -> tuple[float, ...]:
    return tuple(v / shims for v in paired_difference(loop[label], loop[NONE]))


def goal_ns(runs: dict[str, dict]) -> float:
    """The per-call goal: GOAL_NS, or the timer's floor (its median over every launch) where
    that is larger."""
    floor = float(np.median([ns for by in runs[TIMER_LOOP].values() for ns in by]))
    return max(GOAL_NS, floor)


def report_timer(runs: dict[str, dict]) -> None:
    by_config = runs[TIMER_LOOP]
    every = [ns for by in by_config.values() for ns in by]
    print(
        f"\ntimer: two counter reads (pa_ticks_unfenced), as a shim times its call: "
        f"{np.median(every):.1f} ns (median of {len(every)} launches; without a profiler "
        f"{np.median(by_config[NONE]):.1f}); the goal per call is {goal_ns(runs):.1f} ns"
    )


def report_loops(config: Configuration, runs: dict[str, dict]) -> None:
    """One perfatlas configuration's added ns per call in each loop, printed and recorded."""
    goal = goal_ns(runs)
    print(f"\nprofiled with {config.label}")
    print(f"{'loop':10s} {'without ns/it':>14s} {'with ns/it':>11s}  added ns per call [95% CI]")
    words = suffix(
        "" if config.build == OWN_BUILD else config.build,
        depth_words(config.depth or 0),
        config.unwinder,
    )
    for name, loop in runs["loops"].items():
        shims = SHIMS_PER_ITERATION[name]
        added, lo, hi = added_per_call(loop, config.label, shims)
        with_, without = np.median(loop[config.label]), np.median(loop[NONE])
        if name in NO_CALL_GOAL:  # printed, not a row against a goal
            print(f"{name:10s} {without:14.1f} {with_:11.1f}  {added:.1f} [{lo:.1f}, {hi:.1f}]"
                  f"   no per-call goal: {NO_CALL_GOAL[name]}")  # fmt: skip
            continue
        record(
            PeerRow(
                BENCH, f"profiler: ns added per call, {name}{words}", NONE, 2,
                float(with_) / shims, float(without) / shims, "ns/call", added, lo, hi,
                f"<= {goal:.1f}",
            )
        )  # fmt: skip
        print(
            f"{name:10s} {without:14.1f} {with_:11.1f}  {added:.1f} [{lo:.1f}, {hi:.1f}]"
            f"   goal <= {goal:.1f}"
        )


def frame_pairs(chosen: list[int]) -> list[tuple[int, int]]:
    """The depth pairs whose difference prices a frame: (1, deepest), then, where two or more
    depths lie beyond 1, each next pair of them from 1 on (a fixed cost of starting to unwind
    shows as a first step dearer than the later ones): [0, 1, 4, 8] -> (1, 8), (1, 4), (4, 8)."""
    deeper = [depth for depth in chosen if depth > DEFAULT_DEPTH]
    if DEFAULT_DEPTH not in chosen or not deeper:
        return []
    steps = list(zip([DEFAULT_DEPTH, *deeper], deeper)) if len(deeper) > 1 else []
    return [(DEFAULT_DEPTH, deeper[-1]), *steps]


def report_depths(build: list[Configuration], unwinder: str, runs: dict[str, dict]) -> None:
    """Call sites at depth 1 against none, and the cost of a frame with `unwinder` ("": no
    depth beyond 1), of one perfatlas build."""
    at = {c.depth: c.label for c in build if c.depth <= DEFAULT_DEPTH or c.unwinder == unwinder}
    if DEFAULT_DEPTH not in at or (0 not in at and not frame_pairs(sorted(at))):
        return
    words = suffix("" if build[0].build == OWN_BUILD else build[0].build, unwinder)
    print(f"\ncall sites of {build[0].build}{suffix(unwinder)}, ns per call [95% CI]")
    for name, loop in runs["loops"].items():
        shims = SHIMS_PER_ITERATION[name]
        line = f"{name:10s}"
        if 0 in at:
            on, lo, hi = (v / shims for v in paired_difference(loop[at[1]], loop[at[0]]))
            record(
                PeerRow(
                    BENCH, f"profiler: call sites at depth 1 - off, ns per call, {name}{words}",
                    f"{CALLSTACK}=0", 2, float(np.median(loop[at[1]])) / shims,
                    float(np.median(loop[at[0]])) / shims, "ns/call", on, lo, hi, "<= 1",
                )
            )  # fmt: skip
            line += f"  depth 1 - off {on:.1f} [{lo:.1f}, {hi:.1f}] (goal <= 1)"
        for a, b in frame_pairs(sorted(at)):
            frames = (b - a) * shims
            per, lo, hi = (v / frames for v in paired_difference(loop[at[b]], loop[at[a]]))
            record(
                PeerRow(
                    BENCH, f"profiler: ns per stack frame, (depth {b} - depth {a}) / {b - a}, "
                    f"{name}{words}", f"{CALLSTACK}={a}", 2, float(np.median(loop[at[b]])) / shims,
                    float(np.median(loop[at[a]])) / shims, "ns/call", per, lo, hi, "<= 5",
                )
            )  # fmt: skip
            line += f"  per frame ({b} - {a})/{b - a} {per:.2f} [{lo:.2f}, {hi:.2f}]"
        print(line)


def report_peers(ours: Configuration, peers: list[Configuration], runs: dict[str, dict]) -> None:
    """Each peer's added ns per call against perfatlas's, at its default depth."""
    for peer in peers:
        print(
            f"\n{peer.label} ({peer.lib}: {built_how(peer.lib)}), {peer.calls} iterations a sample"
        )
        print(
            f"{'loop':10s} {'peer adds ns':>13s} {'perfatlas adds':>15s}  perfatlas - peer [95% CI]"
        )
        for name, loop in runs["loops"].items():
            shims = SHIMS_PER_ITERATION[name]
            theirs = added_per_call(loop, peer.label, shims)[0]
            mine = added_per_call(loop, ours.label, shims)[0]
            value, lo, hi = (
                v / shims for v in paired_difference(loop[ours.label], loop[peer.label])
            )
            record(
                PeerRow(
                    BENCH, f"profiler: ns added per call, {name}: perfatlas - {peer.label}",
                    peer.label, 2, mine, theirs, "ns/call", value, lo, hi, "<= 0",
                )
            )  # fmt: skip
            print(
                f"{name:10s} {theirs:13.1f} {mine:15.1f}  {value:.1f} [{lo:.1f}, {hi:.1f}]   goal <= 0"
            )


def report_apps(config: Configuration, runs: dict[str, dict], apps: dict[str, list[str]]) -> None:
    """One configuration's whole applications against no profiler."""
    if not config.in_apps or not apps:
        return
    print(f"\nwhole applications with {config.label}")
    words = suffix("" if config.build == OWN_BUILD else config.build or config.peer,
                   depth_words(config.depth or 0) if config.depth is not None else "",
                   config.unwinder)  # fmt: skip
    for name, app in apps.items():
        print(f"{name}: {shlex.join(app)}")
        for what in ("wall", "CPU of the ranks"):
            measured = runs[what][name]
            r = record_ratio(
                BENCH, f"profiler: {name} {what} with / without{words}", NONE,
                measured[config.label], measured[NONE], "<= 1.005", 2, "s",
            )  # fmt: skip
            print(
                f"  {what}: without {np.median(measured[NONE]):.3f} s, with "
                f"{np.median(measured[config.label]):.3f} s; slowdown {100 * (r.median - 1):+.2f} % "
                f"[{100 * (r.ci_lo - 1):+.2f}, {100 * (r.ci_hi - 1):+.2f}]   goal <= 0.5 %"
            )
    gups = runs["gups"]
    if gups[NONE] and gups[config.label]:
        r = record_ratio(
            BENCH, f"profiler: hpcc MPI RandomAccess GUP/s with / without{words}",
            NONE, gups[config.label], gups[NONE], ">= 0.97", 2, "GUP/s",
        )  # fmt: skip
        print(
            f"  hpcc MPIRandomAccess: without {np.median(gups[NONE]):.5f} GUP/s, with "
            f"{np.median(gups[config.label]):.5f}; slowdown {100 * (1 / r.median - 1):+.2f} % "
            f"[{100 * (1 / r.ci_hi - 1):+.2f}, {100 * (1 / r.ci_lo - 1):+.2f}]   goal <= 3 %"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200_000, help="iterations per loop sample")
    parser.add_argument("--no-apps", action="store_true", help="skip the whole applications")
    parser.add_argument("--apps", default="pa-sweep,hpcc", help="which whole applications")
    parser.add_argument("--library", type=Path, action="append", default=[],
                        help="this libperfatlas-ipm.so (repeatable: each alternated with the "
                        "others and with no profiler); default perfatlas's own")  # fmt: skip
    parser.add_argument("--callstack", type=depths, default=depths("0,1,4,8"),
                        help=f"the depths of {CALLSTACK} to launch perfatlas with (default "
                        "0,1,4,8; 1 is the default depth)")  # fmt: skip
    parser.add_argument("--unwinder", type=unwinders, default=unwinders("libunwind,backtrace"),
                        help=f"the values of {UNWINDER} each depth beyond 1 is launched with "
                        "(default libunwind,backtrace)")  # fmt: skip
    parser.add_argument("--ipm-library", type=Path, help="IPM's libipm.so (default: under "
                        f"${PEERS_ENV}, else {PEERS_HOME}; bench/build_peers.sh)")  # fmt: skip
    parser.add_argument("--mpip-library", type=Path, help="mpiP's libmpiP.so (default: as IPM)")
    parser.add_argument("--mpip-calls", type=int, default=10_000,
                        help="iterations per loop sample under mpiP (microseconds a call)")  # fmt: skip
    parser.add_argument("--no-peers", action="store_true", help="leave IPM and mpiP out")
    parser.add_argument("--apps-every-configuration", action="store_true",
                        help="launch the whole applications with every configuration (peers, "
                        "every depth), not only perfatlas at its default depth")  # fmt: skip
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    machine = Machine.detect()

    def loops_argv(calls: int) -> list[str]:
        return mpirun_argv(executable("pa-ipm-overhead"), [str(calls), "5"], machine)

    family = detect_flavour(loops_argv(1)[0]).family
    with tempfile.TemporaryDirectory(prefix="perfatlas-ipm-overhead-") as tmp:
        folder, reports = Path(tmp), Path(tmp) / "peer-reports"
        reports.mkdir()
        configs = configurations(args, family, reports)
        labels = [config.label for config in configs]
        runs: dict[str, dict] = {"loops": {}, "wall": {}, "CPU of the ranks": {},
                                 "gups": {label: [] for label in labels},
                                 TIMER_LOOP: {label: [] for label in labels}}  # fmt: skip
        # hpcc_compare's input with a larger HPL (N = 3000): seconds of work, not just startup.
        (folder / "hpccinf.txt").write_text(HPCCINF.replace("200          Ns", "3000         Ns"))
        sweep = ["it=40", "jt=40", "kt=40", "mmo=10", "mmi=5", "mk=10", "iterations=20"]
        apps = {} if args.no_apps else {
            "pa-sweep": mpirun_argv(executable("pa-sweep"), [*sweep, "repeat=1"], machine),
            "hpcc": mpirun_argv(Path(shutil.which("hpcc") or "hpcc"), [], machine),
        }  # fmt: skip
        apps = {name: app for name, app in apps.items() if name in args.apps.split(",")}
        for round_ in range(args.rounds):
            shift = round_ % len(configs)  # rotate which goes first
            for config in configs[shift:] + configs[:shift]:
                programs = {"loops": loops_argv(config.calls), **(apps if config.in_apps else {})}
                for name, argv in programs.items():
                    command = (
                        profiled(argv, folder, config.lib, config.settings) if config.lib else None
                    )
                    launch, env = (command.argv, command.env) if command else (argv, {})
                    out, wall, cpu = run(launch, env, folder)
                    shutil.rmtree(reports)  # the peers' own reports: not kept
                    reports.mkdir()
                    if name == "loops":
                        medians = loop_medians(out)
                        expected = {*SHIMS_PER_ITERATION, TIMER_LOOP}
                        if set(medians) != expected:
                            sys.exit(f"{config.label}: pa-ipm-overhead printed the loops "
                                     f"{sorted(medians)}, not {sorted(expected)}")  # fmt: skip
                        runs[TIMER_LOOP][config.label].append(medians.pop(TIMER_LOOP))
                        for loop, ns in medians.items():
                            runs["loops"].setdefault(loop, {label: [] for label in labels})
                            runs["loops"][loop][config.label].append(ns)
                        continue
                    if name == "hpcc":
                        runs["gups"][config.label].append(random_access_gups(folder))
                    for what, value in (("wall", wall), ("CPU of the ranks", cpu)):
                        runs[what].setdefault(name, {label: [] for label in labels})
                        runs[what][name][config.label].append(value)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs")
    print(f"loops:   {shlex.join(loops_argv(args.calls))}")
    ours = [config for config in configs if config.build]
    builds = list(dict.fromkeys(config.build for config in ours))
    report_timer(runs)
    for config in ours:
        report_loops(config, runs)
    for build in builds:
        for unwinder in args.unwinder if max(args.callstack) > DEFAULT_DEPTH else [""]:
            report_depths([config for config in ours if config.build == build], unwinder, runs)
    depth = default_depth(args.callstack)
    default = next(c for c in ours if c.build == builds[0] and c.depth == depth)
    report_peers(default, [config for config in configs if config.peer], runs)
    for config in configs[1:]:
        report_apps(config, runs, apps)


if __name__ == "__main__":
    main()
