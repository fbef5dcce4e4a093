"""Re-measure what a check found regressed (perfatlas check --remeasure).

The measurements behind the regressed figures (a result's own, a finding's source results) are
launched once more, with the parameters their documents hold, each as many times as it was
launched before (--repeat), into a NEW run of the same store: the runs a check reads are never
changed. The new run's argv is the check's command line, so `perfatlas show` tells what it
re-measures; its findings are computed as for any run, and its figures are matched with the
regressed ones (perfatlas.regression.verdicts.confirm). As in item 2 (perfatlas.remeasure) a
re-measurement is never re-measured.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from perfatlas.benchmarks.base import Benchmark
from perfatlas.errors import UserError
from perfatlas.regression.figures import Figure, run_figures
from perfatlas.regression.verdicts import Row
from perfatlas.report.data import RunData
from perfatlas.store import Store


def measurements(store: Store, run_id: int, rows: Sequence[Row]) -> list[tuple[str, dict, int]]:
    """(benchmark, parameters, launches) of each measurement behind the regressed figures."""
    wanted = {i for row in rows if row.verdict == "regression" and row.now for i in row.now.results}
    found: dict[tuple[str, str], tuple[str, dict, int]] = {}
    for r in store.results(run_id):
        if r.id in wanted:
            params = r.document.get("params", r.params)
            launches = int((r.document.get("derived") or {}).get("launches", 1))
            key = (r.benchmark, json.dumps(params, sort_keys=True))
            found.setdefault(key, (r.benchmark, params, launches))
    return list(found.values())


def declared(benchmark: Benchmark, params: dict) -> dict:
    """A document's parameters as the benchmark takes them: those it declares (a native program
    also writes the ones its wrapper sets itself, such as pa-parbench's mode)."""
    names = {p.name for p in benchmark.declared()}
    return {k: v for k, v in params.items() if not names or k in names}


def remeasure(
    store: Store, run_id: int, rows: Sequence[Row], executor: object
) -> tuple[int, list[Figure]] | None:
    """Launch the measurements behind the regressions into a new run; its id and figures, or
    None where nothing regressed. The run checked must come from this machine."""
    from perfatlas.benchmarks import get
    from perfatlas.machine import Machine
    from perfatlas.runner import Runner

    planned = measurements(store, run_id, rows)
    if not planned:
        return None
    machine = Machine.detect()
    if store.run(run_id)["fingerprint"] != machine.fingerprint:
        raise UserError(
            f"--remeasure measures on this machine, and run {run_id} was measured on another "
            "(its machine fingerprint differs): run the check there"
        )
    runner = Runner(store, machine, executor, remeasure=False)
    with runner.run(None, sys.argv):
        for name, params, launches in planned:
            benchmark = get(name)
            runner.measure(benchmark, declared(benchmark, params), repeat=launches)
    return runner.run_id, run_figures(RunData.load(store, runner.run_id))
