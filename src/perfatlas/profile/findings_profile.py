"""Findings of a profile against the machine: each row of its join with the comm atlas
(perfatlas.profile.atlas_join) as a finding of kind profile.against_machine, its value the
achieved fraction of the machine and its verdict the join's."""

from __future__ import annotations

from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import Finding, Interval, Sources, from_results
from perfatlas.profile.atlas_join import JoinRow, atlas_join
from perfatlas.store.run_data import RunData

SEVERITY = {"unexplained": "warning", "waiting": "notice"}
METHOD = (
    "achieved fraction = the time the stored comm atlas predicts (each message's one-way "
    "ping-pong time at its size on its link class; a collective's time at the program's "
    "process count and size) / the measured time beyond waiting (the LBST rule); interval from "
    "the atlas's 95 % intervals (docs/profile.md, Against this machine)"
)


def _finding(row: JoinRow, sources: Sources) -> Finding:
    transfer = row.transfer_s
    known = row.achieved is not None and row.predicted_low_s is not None and transfer > 0
    interval = (
        {"interval": Interval(row.predicted_low_s / transfer, row.predicted_high_s / transfer)}
        if known
        else {"interval_reason": "no prediction: " + row.evidence}
    )
    return Finding(
        kind="profile.against_machine",
        subject=f"{row.region}: {row.call}",
        value=row.achieved,
        unit="fraction of the machine",
        method=METHOD,
        sources=sources,
        verdict=f"{row.verdict}: {row.evidence}",
        severity=SEVERITY.get(row.verdict, "info"),
        details={
            "verdict": row.verdict,
            "measured_s": row.measured_s,
            "waiting_s": row.waiting_s,
            "predicted_s": row.predicted_s,
            "messages": row.messages,
            "bytes": row.bytes,
        },
        **interval,
    )


@finding_source("profile against the machine", 90, {"profile.against_machine": Better.HIGHER})
def profile_findings(data: RunData) -> list[Finding]:
    """Every joined row of the run's profiles (a run of perfatlas profile holds one)."""
    sources = from_results(*data.launches)
    return [
        _finding(row, sources)
        for stored in data.profiles
        for row in atlas_join(stored["document"]).rows
    ]
