"""perfatlas check: a run against a baseline (a named baseline or a run id), figure by figure.

Refused with one sentence (exit status 2): an unknown run or baseline, a baseline from another
machine (its fingerprint, perfatlas.machine.topology.Machine.fingerprint) without --any-machine, unknown
metrics, and a run with nothing comparable to the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from perfatlas.common.errors import UserError
from perfatlas.common.safe_names import NAME_RULE, check_name
from perfatlas.regression.run_figures import run_figures
from perfatlas.regression.verdicts import Row, compare
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData


@dataclass(frozen=True)
class Check:
    run_id: int
    baseline_id: int
    against: str  # how the baseline was named: 'baseline NAME' or 'run N'
    rows: list[Row]
    data: RunData  # the run checked, as read once (remeasure reads its launches from here)


def baseline_name(name: str) -> str:
    """A baseline's name: the safe_names rule, and not a run reference (a number, 'last')."""
    if name == "last" or (name.isascii() and name.isdigit()):
        raise UserError(f"baseline name {name!r} reads as a run id: give a name ({NAME_RULE})")
    return check_name(name, "baseline name")


def resolve_against(store: Store, ref: str) -> tuple[int, str]:
    """--against: a run id or 'last' (a run), else a baseline's name."""
    if ref == "last" or (ref.isascii() and ref.isdigit()):
        run_id = store.resolve_run(ref)
        return run_id, f"run {run_id}"
    run_id = store.baseline_run(baseline_name(ref))["id"]
    return run_id, f"baseline {ref} (run {run_id})"


def check(
    store: Store,
    run_ref: str,
    against: str,
    tolerance: float,
    metrics: Sequence[str] = (),
    any_machine: bool = False,
) -> Check:
    """The verdicts of run `run_ref` against `against` (this module's docstring)."""
    run_id = store.resolve_run(run_ref)
    baseline_id, named = resolve_against(store, against)
    run, base = store.run(run_id), store.run(baseline_id)
    if run["fingerprint"] != base["fingerprint"] and not any_machine:
        raise UserError(
            f"{named} was measured on another machine ({base['host']}, fingerprint "
            f"{base['fingerprint']}) than run {run_id} ({run['host']}, {run['fingerprint']}): "
            "give --any-machine to compare them anyway"
        )
    baseline_figures = run_figures(RunData.load(store, baseline_id))
    if not baseline_figures:
        raise UserError(f"{named} has no figure to compare (no result with samples)")
    data = RunData.load(store, run_id)
    rows = compare(baseline_figures, run_figures(data), tolerance, metrics)
    if all(r.verdict == "not comparable" for r in rows):
        raise UserError(
            f"run {run_id} has nothing comparable to {named}: no figure of the same benchmark, "
            "parameters and metric with a direction that is worse"
        )
    return Check(run_id, baseline_id, named, rows, data)
