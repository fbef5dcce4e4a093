"""Re-measure what a check found regressed (perfatlas check --remeasure).

The measurements behind the regressed figures (a result's own, a finding's source results) are
launched once more, with the parameters their documents hold, each as many times as it was
launched before (--repeat), into a NEW run of the same store: the runs a check reads are never
changed. The new run's argv is the check's command line, so `perfatlas show` tells what it
re-measures; its findings are computed as for any run, and its figures are matched with the
regressed ones (perfatlas.regression.verdicts.confirm). As after a run's anomalies
(perfatlas.run.remeasure_anomalies), a re-measurement is never re-measured.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from perfatlas.benchmarks.benchmark import Benchmark
from perfatlas.common.errors import UserError
from perfatlas.regression.run_figures import Figure, run_figures
from perfatlas.regression.verdicts import Row
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData


def measurements(checked: RunData, rows: Sequence[Row]) -> list[tuple[str, dict, int]]:
    """(benchmark, parameters, launches) of each measurement behind the regressed figures."""
    wanted = {i for row in rows if row.verdict == "regression" and row.now for i in row.now.results}
    found: dict[tuple[str, str], tuple[str, dict, int]] = {}
    for r in checked.launches:
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
    store: Store, checked: RunData, rows: Sequence[Row], executor: object
) -> tuple[int, list[Figure]] | None:
    """Launch the measurements behind the regressions into a new run; its id and figures, or
    None where nothing regressed. The run checked must come from this machine."""
    from perfatlas.benchmarks import get
    from perfatlas.machine.topology import Machine
    from perfatlas.run.runner import Runner

    run_id = checked.run["id"]
    planned = measurements(checked, rows)
    if not planned:
        return None
    machine = Machine.detect()
    if checked.run["fingerprint"] != machine.fingerprint:
        raise UserError(
            f"--remeasure measures on this machine, and run {run_id} was measured on another "
            "(its machine fingerprint differs): run the check there"
        )
    runner = Runner(store, machine, executor, remeasure=False)
    with runner.run(None, sys.argv):
        for name, params, launches in planned:
            benchmark = get(name)
            runner.measure(benchmark, declared(benchmark, params), repeat=launches)
    return runner.run_id, run_figures(runner.data)
