"""Re-measure before reporting: a figure that passes the anomaly rule (perfatlas.common.anomaly) is
measured again before it is reported.

After a run's measurements, the runner (perfatlas.run.runner.Runner) asks which groups of stored
figures are unsettled (a figure passes the rule, or differs while the others are too spread to
tell; perfatlas.common.anomaly.unsettled) and have not been re-measured. The domains that apply
the rule say which, each with a judge it registers (@judges_figures): communication figures
(perfatlas.comm.findings_comm) and node figures (perfatlas.cluster.findings_nodes).
Each planned measurement that yielded one is launched once more, with the same parameters on the
same ranks and hosts (the same launch options: mpirun arguments, hostfile), `--repeat` times as
before. Its documents are stored in the same run beside the originals, each carrying

    "remeasure": {"of": [result ids], "reason": "..."}

(docs/contract.md): the link to the results it re-measures. The analyses keep re-measurements
apart from what they re-measure (store.result.pool_launches, store.run_data.RunData.measured) and report an
anomaly only when both measurements pass the rule (perfatlas.common.anomaly.each). A whole
measurement is repeated rather than the one pair or node: its figures are judged against a group
measured under the same conditions, and the re-measured group gives that group. A re-measurement
is never re-measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from perfatlas.common.anomaly import REMEASURE_KEY
from perfatlas.common.discovery import import_modules
from perfatlas.common.warning import WarningRecord
from perfatlas.plan.planned import Planned
from perfatlas.store.result import Result

REASON = "its figures passed the anomaly rule (perfatlas.common.anomaly); measured again to confirm"

# The domains that apply the rule, each a function from a run's results to the ids of those to
# measure again, registered with @judges_figures in a findings_* module of the domain (found as
# the findings are: perfatlas.common.discovery).
Judge = Callable[[list[Result]], set[int]]
_JUDGES: list[Judge] = []


def judges_figures(judge: Judge) -> Judge:
    _JUDGES.append(judge)
    return judge


def judges() -> tuple[Judge, ...]:
    import_modules("findings")
    return tuple(_JUDGES)


def may_trip(measurements: list[Planned], on_hosts: bool) -> bool:
    """Whether any of these measurements can yield figures the rule judges: a benchmark that
    declares it (Benchmark.anomaly_judged: the communication patterns), or any node-level
    benchmark run on several hosts (node asymmetry)."""
    return on_hosts or any(p.benchmark.anomaly_judged for p in measurements)


def tripped(results: list[Result]) -> list[Result]:
    """Results of the groups to measure again (perfatlas.common.anomaly.unsettled: a figure passes the
    anomaly rule, or the group is too spread to tell) that have no re-measurement yet."""
    ids = set().union(*(judge(results) for judge in judges()))
    return [r for r in results if r.id in ids]


def measured_by(planned: Planned, result: Result) -> bool:
    """Whether `result` comes from `planned`: its benchmark, and every parameter both hold
    equal (a document adds parameters of its own: the host of a node, a series' point)."""
    if result.benchmark != planned.benchmark.name:
        return False
    return all(result.params[k] == v for k, v in planned.params.items() if k in result.params)


def again(measurements: list[Planned], results: list[Result]) -> list[Planned]:
    """The planned measurements to launch once more, each marked as the re-measurement of its
    tripped results."""
    chosen = tripped(results)
    found = []
    for planned in measurements:
        of = sorted(r.id for r in chosen if measured_by(planned, r))
        if of:
            found.append(
                replace(planned, annotate=_marked(planned.annotate, of), note=" (re-measured)")
            )
    return found


def _marked(
    annotate: Callable[[dict], list[WarningRecord]] | None, of: list[int]
) -> Callable[[dict[str, Any]], list[WarningRecord]]:
    def mark(document: dict[str, Any]) -> list[WarningRecord]:
        warnings = annotate(document) if annotate else []
        document[REMEASURE_KEY] = {"of": of, "reason": REASON}
        return warnings

    return mark
