"""The slowdown this machine's OS noise would cause a program's collective cadence: the BSP
model of perfatlas.noise.analysis_noise (Petrini, Kerbyson & Pakin, SC03; Hoefler et al.,
SC10) with the program's own superstep, at its process count and at 10 and 100 times as many.

The superstep g is the program's computation between two collective calls: each rank's CALC
time over its collective calls, averaged over the ranks. The noise is that of the latest noise
run of this machine (its fingerprint), the measurement of the most PUs at once, its series only
(the noise section's detours and spectra are not computed). A model, said so
wherever it is shown: it leaves out communication and correlated noise, and beyond the
independent windows the noise run measured its figure is a lower bound."""

from __future__ import annotations

from typing import Any

from perfatlas.noise.analysis_noise import bsp_slowdown
from perfatlas.noise.series_noise import measurement_groups, series_of
from perfatlas.profile.analysis_profile import whole_program
from perfatlas.profile.figure_text import seconds
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

SCALES = (1, 10, 100)  # the program's process count, and 10x and 100x
MIN_SUPERSTEPS = 10  # collective calls per rank below which a program has no cadence to model


def superstep_ns(document: dict) -> float | None:
    """The program's computation between two collective calls, per rank; None with fewer than
    MIN_SUPERSTEPS collective calls per rank."""
    collectives = sum(c["count"] for c in document["calls"] if c.get("collective"))
    calc = (whole_program(document).get("calc_s") or {}).get("sum")
    if collectives < MIN_SUPERSTEPS * document["tasks"] or not calc or calc <= 0:
        return None
    return 1e9 * calc / collectives  # both summed over the ranks


def _latest_noise_run(store: Store, fingerprint: str) -> int | None:
    row = store.db.execute(
        "SELECT MAX(results.run_id) FROM results JOIN runs ON runs.id = results.run_id "
        "WHERE results.benchmark = 'noise' AND runs.fingerprint = ? AND "
        "results.not_measurable IS NULL",
        (fingerprint,),
    ).fetchone()
    return row[0] if row else None


def noise_model(store: Store, fingerprint: str, document: dict) -> dict[str, Any]:
    """The atlas's `noise` part for this profile: the model's slowdowns, or why there is none
    ({"missing": sentence})."""
    g = superstep_ns(document)
    if g is None:
        return {"missing": f"the program made fewer than {MIN_SUPERSTEPS} collective calls per "
                "rank after computing: no collective cadence to model"}  # fmt: skip
    run_id = _latest_noise_run(store, fingerprint)
    if run_id is None:
        return {"missing": "no stored noise run of this machine (measure one: perfatlas run "
                "quick, or perfatlas measure noise cpus=all)"}  # fmt: skip
    groups = measurement_groups(RunData.load(store, run_id))
    if not groups:
        return {"missing": f"noise run {run_id} holds no noise series"}
    (method, quantum, duration, cpus, _), widest = max(groups.items(), key=lambda kv: len(kv[1]))
    label = f"{str(method).upper()} {seconds(quantum)}, {duration:g} s, {len(widest)} PUs at once"
    processes = tuple(scale * int(document["tasks"]) for scale in SCALES)
    curve = bsp_slowdown([series_of(result) for result in widest], g, processes)
    if curve is None:
        return {"missing": f"the program's superstep of {seconds(g * 1e-9)} is shorter than one "
                f"sample of noise run {run_id} ({label}) or longer than it"}  # fmt: skip
    return {
        "source": f"noise run {run_id}: {label}",
        "superstep_ns": g,
        "window_ns": curve.window_ns,
        "processes": [int(p) for p in curve.processes],
        "slowdown": [float(s) for s in curve.slowdown],
        "independent_windows": curve.independent_windows,
    }
