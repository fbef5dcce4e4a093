"""The stored comm atlas of this machine as an application model needs it: one-way ping-pong
time against message size and 8-byte MPI_Allreduce latency against process count, from the
latest run of this machine (its fingerprint) that measured each (comm.pingpong, comm.allreduce).

app.hydro's model (perfatlas.app.analysis_hydro) reads them from the document, where
bench_hydro puts them before the document is stored, so that a result keeps the atlas it was
modelled with. Interpolation is piecewise linear in log-log (sizes) and in log2 P (processes),
held constant beyond the ends but for message sizes, which extrapolate at the largest
measured size's time per byte.
"""

from __future__ import annotations

import bisect
import json
import math
from typing import Any

from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store

ALLREDUCE_BYTES = 8  # the time step's reduction: one double per rank


def _latest_run(store: Store, fingerprint: str, benchmark: str, where: str, args: tuple) -> list:
    rows = store.db.execute(
        "SELECT results.run_id, results.id, results.params, results.median, results.document "
        "FROM results JOIN runs ON runs.id = results.run_id WHERE results.benchmark = ? "
        "AND results.metric = 'latency_ns' AND results.median IS NOT NULL AND "
        f"results.not_measurable IS NULL AND runs.fingerprint = ? {where} "
        "ORDER BY results.run_id DESC, results.id",
        (benchmark, fingerprint, *args),
    ).fetchall()
    if not rows:
        return []
    latest = rows[0][0]
    return [row for row in rows if row[0] == latest]


def stored_atlas(store: Store, machine: Machine) -> dict[str, Any]:
    """{"pingpong": [[bytes, one-way ns], ...], "allreduce": [[processes, ns], ...],
    "source": sentence}; a missing part is an empty list and the sentence says so."""
    pingpong: dict[int, float] = {}
    said = []
    for run_id, _, text, median, document in _latest_run(
        store, machine.fingerprint, "comm.pingpong", "", ()
    ):
        params = json.loads(text)
        if params.get("direction", "uni") != "uni" or "bytes" not in params:
            continue
        link = (json.loads(document).get("placement") or {}).get("link", "")
        pingpong.setdefault(int(params["bytes"]), float(median))
        source = f"comm.pingpong of run {run_id} ({link or 'link unknown'})"
    said.append(source if pingpong else "no stored comm.pingpong of this machine")
    allreduce: dict[int, float] = {}
    for run_id, _, text, median, _ in _latest_run(
        store, machine.fingerprint, "comm.allreduce", "", ()
    ):
        params = json.loads(text)
        if params.get("bytes") == ALLREDUCE_BYTES and "processes" in params:
            allreduce.setdefault(int(params["processes"]), float(median))
            source = f"comm.allreduce of run {run_id} (8 B)"
    said.append(source if allreduce else "no stored 8-byte comm.allreduce of this machine")
    return {
        "pingpong": sorted([b, t] for b, t in pingpong.items()),
        "allreduce": sorted([p, t] for p, t in allreduce.items()),
        "source": "; ".join(said),
    }


def _between(x: float, xs: list[float], ys: list[float]) -> float:
    """Linear interpolation of (xs, ys) at x, held at the ends."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    share = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + share * (ys[i] - ys[i - 1])


def message_ns(pingpong: list[list[float]], size: float) -> float:
    """One-way time of a message of `size` bytes: log-log interpolation between measured sizes
    (0 B counted as 1 B); beyond the largest, its time plus the extra bytes at its time per
    byte."""
    sizes = [max(float(b), 1.0) for b, _ in pingpong]
    times = [float(t) for _, t in pingpong]
    if size > sizes[-1]:
        return times[-1] * size / sizes[-1]
    logs = [math.log(s) for s in sizes]
    return math.exp(_between(math.log(max(size, 1.0)), logs, [math.log(t) for t in times]))


def allreduce_ns(allreduce: list[list[float]], processes: int) -> float:
    """8-byte allreduce latency on `processes` ranks: 0 on one; else interpolated in log2 P."""
    if processes <= 1:
        return 0.0
    counts = [math.log2(p) for p, _ in allreduce]
    return _between(math.log2(processes), counts, [float(t) for _, t in allreduce])
