"""The stored comm results a machine's atlas is made of (perfatlas.comm.comm_atlas,
perfatlas.comm.host_links): one metric of one benchmark of one machine fingerprint, each row
with its run's topology and host, and the rule that of each part (a link class, a process
count, a pair of hosts) the latest run that measured it is taken."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from perfatlas.launch.launchers import mpi_family
from perfatlas.store.database import Store


@dataclass(frozen=True)
class StoredRow:
    run_id: int
    params: dict
    figures: list[float]  # MEDIAN, LOW, HIGH (an interval missing is the median)
    document: dict
    topology: dict | None
    host: str | None


def stored_rows(
    store: Store, fingerprint: str, benchmark: str, metric: str = "latency_ns"
) -> list[StoredRow]:
    """The `metric` results of `benchmark` of machine `fingerprint`, the latest run first."""
    rows = store.db.execute(
        "SELECT results.run_id, results.params, results.median, results.ci_lo, results.ci_hi, "
        "results.document, runs.topology, runs.host FROM results JOIN runs ON runs.id = "
        "results.run_id WHERE results.benchmark = ? AND results.metric = ? AND "
        "results.median IS NOT NULL AND results.not_measurable IS NULL AND runs.fingerprint = ? "
        "ORDER BY results.run_id DESC, results.id",
        (benchmark, metric, fingerprint),
    ).fetchall()
    found = []
    for run_id, params, median, low, high, document, topology, host in rows:
        figures = [float(median), float(low if low is not None else median)]
        figures.append(float(high if high is not None else median))
        topology = json.loads(topology) if topology else None
        found.append(
            StoredRow(run_id, json.loads(params), figures, json.loads(document), topology, host)
        )
    return found


def latest_per(rows: list[StoredRow], key: Callable[[StoredRow], Hashable | None]) -> dict:
    """key -> (run id, rows): of each key, the rows of the latest run that measured it."""
    found: dict[Hashable, tuple[int, list[StoredRow]]] = {}
    for row in rows:
        group = key(row)
        if group is None:
            continue
        run, members = found.setdefault(group, (row.run_id, []))
        if row.run_id == run:
            members.append(row)
    return found


def sources_sentence(benchmark: str, parts: dict, name: Callable[[Any], str]) -> str:
    """Where each part comes from: "comm.barrier of run 3 (P=2, P=4)"."""
    if not parts:
        return f"no stored {benchmark} of this machine"
    runs: dict[int, list[str]] = {}
    for group, (run, _) in sorted(parts.items(), key=lambda kv: str(kv[0])):
        runs.setdefault(run, []).append(name(group))
    return "; ".join(
        f"{benchmark} of run {run} ({', '.join(groups)})" for run, groups in sorted(runs.items())
    )


def family_of(document: dict) -> str:
    return mpi_family(str((document.get("placement") or {}).get("mpi_library") or ""))
