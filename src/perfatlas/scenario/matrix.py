"""The interference matrix (beyond PARbench): pairwise co-run slowdown between kernel classes.

Each class of the catalog is represented by one kernel (REPRESENTATIVE) at one working set
(default 25 MB, beyond the private caches, so that co-runners share the last-level cache and
the memory bus). Its program is three identical lines of about duration / 3 each; the middle
line's timed passes are the measurement, so that a co-runner is busy all through it. Each class
is measured alone on the first CPU, then every pair of classes together, the row's kernel on
the first CPU and the column's on the second: slowdown[row][column] = the row's time together /
its time alone (1: no interference). A class paired with itself reports the mean of its copies.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from perfatlas.errors import UserError
from perfatlas.machine import Machine
from perfatlas.parbench.catalog import catalog
from perfatlas.runner import Runner, progress_bar
from perfatlas.safe_names import shown
from perfatlas.scenario.base_data import ensure_variants
from perfatlas.scenario.launch import Instance, Outcome, run_together
from perfatlas.scenario.scenario import MAX_RUNTIME_S
from perfatlas.scenario.variants import stored_variants
from perfatlas.store import Store
from perfatlas.units import format_cpu_list

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
        alone, together = {}, {}
        with progress_bar(len(names) + len(pairs)) as step:
            for name in names:
                step(f"{name} ({kernels[name]}) alone on cpu {pair[0]}")
                outcome = run_together(
                    [Instance(name, programs[name], 1, 0.0, 0, (pair[0],))], (pair[0],), folder
                )
                alone[name] = _middle_seconds(outcome[0])
            for a, b in pairs:
                step(f"{a} with {b}")
                both = [
                    Instance(f"{a}-row", programs[a], 1, 0.0, 0, (pair[0],)),
                    Instance(f"{b}-column", programs[b], 1, 0.0, 0, (pair[1],)),
                ]
                outcomes = {o.instance.name: o for o in run_together(both, tuple(pair), folder)}
                together[(a, b)] = (
                    _middle_seconds(outcomes[f"{a}-row"]),
                    _middle_seconds(outcomes[f"{b}-column"]),
                )
        slowdown = [[0.0] * len(names) for _ in names]
        for (a, b), (time_a, time_b) in together.items():
            i, j = names.index(a), names.index(b)
            if i == j:
                slowdown[i][i] = (time_a + time_b) / 2 / alone[a]
            else:
                slowdown[i][j] = time_a / alone[a]
                slowdown[j][i] = time_b / alone[b]
        document = {
            "classes": names,
            "kernels": kernels,
            "bytes": n_bytes,
            "duration_s": duration_s,
            "cpu_list": format_cpu_list(pair),
            "cpus": pair,
            "alone_s": alone,
            "together_s": [[a, b, ta, tb] for (a, b), (ta, tb) in together.items()],
            "slowdown": slowdown,
            "method": "middle of three identical lines timed; row kernel on the first CPU",
        }
        store.add_scenario(runner.run_id, "matrix", "interference matrix", document, [])
    return runner.run_id, document
