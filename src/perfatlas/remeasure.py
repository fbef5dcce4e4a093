"""Re-measure before reporting: a figure that passes the anomaly rule (perfatlas.anomaly) is
measured again before it is reported.

After a run's measurements, the runner (perfatlas.runner.Runner) asks which groups of stored
figures are unsettled (a figure passes the rule, or differs while the others are too spread to
tell; perfatlas.anomaly.unsettled) and have not been re-measured: communication figures
(perfatlas.comm.analysis) and node figures (perfatlas.cluster.analysis_nodes).
Each planned measurement that yielded one is launched once more, with the same parameters on the
same ranks and hosts (the same launch options: mpirun arguments, hostfile), `--repeat` times as
before. Its documents are stored in the same run beside the originals, each carrying

    "remeasure": {"of": [result ids], "reason": "..."}

(docs/contract.md): the link to the results it re-measures. The analyses keep re-measurements
apart from what they re-measure (store.pool_launches, report.data.RunData.measured) and report an
anomaly only when both measurements pass the rule (perfatlas.anomaly.each). A whole
measurement is repeated rather than the one pair or node: its figures are judged against a group
measured under the same conditions, and the re-measured group gives that group. A re-measurement
is never re-measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from perfatlas.anomaly import REMEASURE_KEY
from perfatlas.planned import Planned
from perfatlas.store import Result
from perfatlas.warning import WarningRecord

REASON = "its figures passed the anomaly rule (perfatlas.anomaly); measured again to confirm"
JUDGED = ("comm.distance", "comm.complement", "comm.hotspot")  # figures judged by the rule


def may_trip(measurements: list[Planned], on_hosts: bool) -> bool:
    """Whether any of these measurements can yield figures the rule judges: the communication
    patterns, or any node-level benchmark run on several hosts (node asymmetry)."""
    return on_hosts or any(p.benchmark.name in JUDGED for p in measurements)


def tripped(results: list[Result]) -> list[Result]:
    """Results of the groups to measure again (perfatlas.anomaly.unsettled: a figure passes the
    anomaly rule, or the group is too spread to tell) that have no re-measurement yet."""
    from perfatlas.cluster.analysis_nodes import node_groups
    from perfatlas.comm.analysis import find_anomalies

    ids = set(find_anomalies(results).to_remeasure)
    ids |= {g.figures[0].result.id for g in node_groups(results) if g.unsettled}
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
