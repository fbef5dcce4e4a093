"""The interference matrix (beyond PARbench): pairwise co-run slowdown between kernel classes.

Each class of the catalog is represented by one kernel (REPRESENTATIVE) at one working set
(default 25 MB, beyond the private caches, so that co-runners share the last-level cache and
the memory bus). Its program is three identical lines of about duration / 3 each; the middle
line's timed passes are the measurement, so that a co-runner is busy all through it.

Alone and together are interleaved and repeated: in each of `rounds` rounds, for every pair of
classes (a, b) in turn, a runs alone on the first CPU, b alone on the second, then both together,
a on the first CPU and b on the second. A drift of the machine (frequency, a neighbour's load)
then affects alone and together alike, and every time together is compared with the same class
alone on the same CPU (two CPUs of one machine need not be equally fast: one may take the
interrupts). Cell [a][b] = median of a's times together with b / median of a's times alone on
that CPU, with a 95 % percentile-bootstrap interval of that ratio of medians
(perfatlas.common.stats.ratio); a class paired with itself pools its two copies against its times alone
on both CPUs.
A cell whose interval contains 1 is "no measurable interference"; one whose interval excludes 1
but whose slowdown is within the minimum effect of perfatlas.common.anomaly (10 %) is "measurable, under
10 %" (a shared power budget lowers both cores' clock a little; on a machine shared with other
work, intervals of a few rounds are that tight by chance more often than 5 %); beyond it,
"slower" above 1 and "faster" below.
A cell is judged only on CPUs the kernels had to themselves: each kernel runs alone on its CPU,
so the time it spent runnable and waiting for that CPU (schedstat's run delay,
perfatlas.scenario.monitor) is time other processes took. Where any measurement of a cell waited
more than DISTURBED of its wall time, the cell is "not judged" and says how much was taken: the
matrix would otherwise measure the other processes (a loaded machine reads as interference).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from perfatlas.common.errors import UserError
from perfatlas.common.safe_names import shown
from perfatlas.common.stats import ratio
from perfatlas.common.units import format_cpu_list
from perfatlas.machine.topology import Machine
from perfatlas.parbench.catalog import catalog
from perfatlas.run.runner import Runner, progress_bar
from perfatlas.scenario.cell_verdicts import cell_verdict
from perfatlas.scenario.ensure_base import ensure_variants
from perfatlas.scenario.scenario import MAX_RUNTIME_S
from perfatlas.scenario.side_by_side import Instance, Outcome, run_together
from perfatlas.scenario.variants import stored_variants
from perfatlas.store.database import Store

REPRESENTATIVE = {
    "stream": "triad",
    "stencil": "stencil2d",
    "dense": "dgemm_blocked",
    "sparse": "spmv",
    "traversal": "transpose",
    "irregular": "random_access",
    "scan": "prefix_sum",
    "sort": "sort",
    "spectral": "fft",
    "compute": "polynomial",
}
LINES = 3
ROUNDS = 5  # alone/together repetitions of every pair (--rounds)
MAX_ROUNDS = 100
# Share of a measurement's wall time waiting for its CPU above which a cell is not judged: a
# clean CI run read "slower" [1.06, 1.36] from the kernels' 8-13 % waits alone.
DISTURBED = 0.05
# The kernels' run delay needs the monitor's counters only when each process ends (the launcher
# wakes on an exit): sampling /proc every 20 ms (the scenarios' timelines) woke perfatlas ~50
# times a second on the pair's CPUs, and on a 2-CPU machine the kernels then waited those 8-13 %
# of their time; sampled at the end only, 3.3-5.2 % on an idle one (docs/guide/interference.md).
MONITOR_S = 10.0
NOT_JUDGED = "not judged"


def representatives(asked: str | None) -> dict[str, str]:
    """class -> kernel, in catalog order; `asked` ('stream,compute') picks some classes."""
    by_class: dict[str, str] = {}
    for k in catalog():
        by_class.setdefault(k.class_name, REPRESENTATIVE.get(k.class_name, k.name))
    if not asked:
        return by_class
    chosen = {}
    for name in (word.strip() for word in asked.split(",") if word.strip()):
        if name not in by_class:
            raise UserError(
                f"kernel class {shown(name)} is not in the catalog; the classes are "
                f"{', '.join(by_class)}"
            )
        chosen[name] = by_class[name]
    if not chosen:
        raise UserError("--classes names no kernel class")
    return chosen


def not_judged(waited: float) -> str:
    return (
        f"{NOT_JUDGED}: its kernels waited up to {waited:.0%} of their time for their CPUs "
        "(other processes ran there, perfatlas's own monitor among them)"
    )


def _waited_share(outcome: Outcome) -> float:
    """The share of a kernel's wall time it spent runnable, waiting for its CPU."""
    return outcome.waiting_s / outcome.wall_s if outcome.wall_s > 0 else 0.0


def _middle_seconds(outcome: Outcome) -> float:
    line = outcome.document["derived"]["invocations"][LINES // 2]
    return line["end_s"] - line["start_s"]


def run_matrix(
    store: Store,
    machine: Machine,
    classes: str | None,
    n_bytes: int,
    duration_s: float,
    cpus: list[int] | None,
    folder: Path,
    rounds: int = ROUNDS,
) -> tuple[int, dict]:
    kernels = representatives(classes)
    pair = cpus or machine.cpus_for_threads(2) if len(machine.pus) >= 2 else None
    if not pair or len(pair) != 2:
        raise UserError(
            "the interference matrix needs two CPUs (--cpus A,B); this machine has "
            f"{len(machine.pus)} PU(s)"
        )
    machine.check_cpus(pair)
    if not (math.isfinite(duration_s) and duration_s > 0):
        raise UserError(f"--duration {duration_s:g} must be a positive number of seconds")
    if duration_s > MAX_RUNTIME_S:
        raise UserError(
            f"--duration {duration_s:g} s is more than the {MAX_RUNTIME_S:g} s a program may last"
        )
    if not 2 <= rounds <= MAX_ROUNDS:
        raise UserError(
            f"--rounds {rounds} must be from 2 to {MAX_ROUNDS}: an interval needs repetitions"
        )
    machine.check_bytes(n_bytes, "--bytes")
    wanted = {(kernel, n_bytes, 1, 1) for kernel in kernels.values()}
    ensure_variants(store, machine, wanted, pair, "interference matrix")
    variants = stored_variants(store, machine.fingerprint)
    folder.mkdir(parents=True, exist_ok=True)
    programs = {}
    for name, kernel in kernels.items():
        variant = variants[(kernel, n_bytes, 1, 1)]
        repeat = max(1, round(duration_s / LINES / variant.pass_s))
        path = folder / f"matrix-{name}.prog"
        line = f"kernel={kernel} bytes={n_bytes} stride=1 threads=1 repeat={repeat}\n"
        path.write_text(f"# interference matrix: class {name}\n" + line * LINES)
        programs[name] = path
    names = list(kernels)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i:]]
    runner = Runner(store, machine)
    with runner.run("scenario-matrix", sys.argv):
        alone, together, waited = _interleaved(programs, pairs, pair, folder, rounds)
        document = _document(names, kernels, alone, together, waited)
        document.update(
            bytes=n_bytes,
            duration_s=duration_s,
            rounds=rounds,
            cpu_list=format_cpu_list(pair),
            cpus=pair,
            method="middle of three identical lines timed; row kernel on the first CPU; alone "
            "and together interleaved per pair, repeated in rounds; cell: ratio of medians with "
            "a 95 % bootstrap interval",
        )
        store.add_scenario(runner.run_id, "matrix", "interference matrix", document, [])
    return runner.data, document


def _interleaved(
    programs: dict[str, Path],
    pairs: list[tuple[str, str]],
    cpus: list[int],
    folder: Path,
    rounds: int,
) -> tuple[
    dict[str, list[list[float]]],
    dict[tuple[str, str], tuple[list[float], list[float]]],
    dict[tuple[str, str], float],
]:
    """Every class's middle-line times alone on each of the two CPUs, every pair's times
    together (the row's on the first CPU, the column's on the second), and the largest share of
    its time a kernel waited for its CPU, alone (class, "") and together (a, b)."""
    alone: dict[str, list[list[float]]] = {name: [[], []] for name in programs}
    together = {(a, b): ([], []) for a, b in pairs}
    waited: dict[tuple[str, str], float] = {}

    def wait(key: tuple[str, str], *outcomes: Outcome) -> None:
        waited[key] = max([waited.get(key, 0.0), *(_waited_share(o) for o in outcomes)])

    with progress_bar(3 * len(pairs) * rounds) as step:
        for number in range(1, rounds + 1):
            for a, b in pairs:
                for side, name in enumerate((a, b)):
                    step(f"round {number}/{rounds}: {name} alone on cpu {cpus[side]}")
                    only = Instance(name, programs[name], 1, 0.0, 0, (cpus[side],))
                    outcome = run_together([only], (cpus[side],), folder, interval_s=MONITOR_S)[0]
                    alone[name][side].append(_middle_seconds(outcome))
                    wait((name, ""), outcome)
                step(f"round {number}/{rounds}: {a} with {b}")
                both = [
                    Instance(f"{a}-row", programs[a], 1, 0.0, 0, (cpus[0],)),
                    Instance(f"{b}-column", programs[b], 1, 0.0, 0, (cpus[1],)),
                ]
                together_now = run_together(both, tuple(cpus), folder, interval_s=MONITOR_S)
                outcomes = {o.instance.name: o for o in together_now}
                together[(a, b)][0].append(_middle_seconds(outcomes[f"{a}-row"]))
                together[(a, b)][1].append(_middle_seconds(outcomes[f"{b}-column"]))
                wait((a, b), *outcomes.values())
    return alone, together, waited


def _document(
    names: list[str],
    kernels: dict[str, str],
    alone: dict[str, list[list[float]]],
    together: dict[tuple[str, str], tuple[list[float], list[float]]],
    waited: dict[tuple[str, str], float] | None = None,
) -> dict:
    """The matrix: point slowdowns, their intervals and verdicts, and every time measured. A
    time together is compared with the same class alone on the same CPU; a cell some of whose
    measurements waited more than DISTURBED for their CPUs is not judged (module docstring)."""
    waited = waited or {}
    cells: dict[tuple[int, int], tuple[list[float], list[float]]] = {}
    disturbed = [[0.0] * len(names) for _ in names]
    for (a, b), (row, column) in together.items():
        i, j = names.index(a), names.index(b)
        share = max(waited.get((a, b), 0.0), waited.get((a, ""), 0.0), waited.get((b, ""), 0.0))
        disturbed[i][j] = disturbed[j][i] = share
        if i == j:  # both copies, each against the class alone on its CPU
            cells[(i, i)] = (row + column, alone[a][0] + alone[a][1])
        else:
            cells[(i, j)], cells[(j, i)] = (row, alone[a][0]), (column, alone[b][1])
    slowdown = [[0.0] * len(names) for _ in names]
    interval = [[[0.0, 0.0] for _ in names] for _ in names]
    verdicts = [[""] * len(names) for _ in names]
    for (i, j), (times, alone_times) in cells.items():
        r = ratio(times, alone_times)
        slowdown[i][j], interval[i][j] = r.median, [r.ci_lo, r.ci_hi]
        verdicts[i][j] = (
            not_judged(disturbed[i][j])
            if disturbed[i][j] > DISTURBED
            else cell_verdict(r.median, r.ci_lo, r.ci_hi)
        )
    return {
        "classes": names,
        "kernels": kernels,
        "alone_s": {name: float(np.median(v[0] + v[1])) for name, v in alone.items()},
        "alone_samples_s": alone,  # class: [times on the first CPU, times on the second]
        "together_s": [
            [a, b, float(np.median(ta)), float(np.median(tb))]
            for (a, b), (ta, tb) in together.items()
        ],
        "together_samples_s": [[a, b, ta, tb] for (a, b), (ta, tb) in together.items()],
        "slowdown": slowdown,
        "slowdown_ci": interval,
        "verdicts": verdicts,
        "waited_share": disturbed,  # the most any measurement of a cell waited for its CPU
    }
