"""Findings of a profile against the machine: each row of its join with the comm atlas
(perfatlas.profile.atlas_join) as a finding of kind profile.against_machine, its value the
achieved fraction of the machine and its verdict the join's; the BSP noise model of its
superstep (noise_cadence) as profile.noise_slowdown, one per process count; a host whose link
the atlas measured slow (perfatlas.comm.host_links), with the heaviest pairs crossing it, as
profile.slow_link."""

from __future__ import annotations

from perfatlas.comm.host_links import SLOW_LINK
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import Finding, Interval, Sources, from_results
from perfatlas.profile.atlas_join import JoinRow, PairJoin, atlas_join, rate_text
from perfatlas.profile.figure_text import seconds
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


def _noise_findings(noise: dict, sources: Sources) -> list[Finding]:
    """The BSP model's slowdown of the program's superstep at each process count."""
    if not noise or noise.get("missing"):
        return []
    return [
        Finding(
            kind="profile.noise_slowdown",
            subject=f"{processes} processes, superstep {seconds(noise['superstep_ns'] * 1e-9)}",
            value=slowdown,
            unit="fraction",
            method="a model: the BSP slowdown E[max of P window losses] / g of this machine's "
            f"noise ({noise['source']}) at the program's superstep g (Petrini, Kerbyson & "
            "Pakin, SC03)",
            sources=sources,
            interval_reason="a model's expectation; beyond the noise run's independent windows "
            "a lower bound",
            details={"independent_windows": noise["independent_windows"]},
        )
        for processes, slowdown in zip(noise["processes"], noise["slowdown"])
    ]


def _slow_link_findings(pairs: list[PairJoin], sources: Sources) -> list[Finding]:
    """One finding per host on a slow link: the pairs of the profile's heaviest that cross it,
    its value the bandwidth the heaviest of them achieved."""
    crossing: dict[str, list[PairJoin]] = {}
    for pair in pairs:
        for host in pair.slow_hosts:
            crossing.setdefault(host, []).append(pair)
    found = []
    for host, members in sorted(crossing.items()):
        heaviest = members[0]  # the pairs come the most bytes first
        names = ", ".join(f"{p.sender} -> {p.receiver}" for p in members)
        found.append(
            Finding(
                kind="profile.slow_link",
                subject=f"{host}'s link: pairs {names}",
                value=heaviest.achieved_Bps,
                unit="byte/s",
                method=f"the atlas's pairs of hosts measured alone: a host's link {SLOW_LINK:g}x "
                "slower than the fastest host's (perfatlas.comm.host_links); achieved: the "
                "heaviest pair's bytes over the time of its sending calls",
                sources=sources,
                verdict=f"slow link: {host}'s, which the atlas measured at "
                f"{rate_text(heaviest.link_Bps)} for these messages; pair "
                f"{heaviest.sender} -> {heaviest.receiver} achieved "
                f"{rate_text(heaviest.achieved_Bps)}, its fastest call "
                f"{rate_text(heaviest.best_Bps)}",
                severity="warning",
                interval_reason="one pair's total over its calls",
                details={
                    "host": host,
                    "pairs": [[p.sender, p.receiver] for p in members],
                    "link_Bps": heaviest.link_Bps,
                    "best_Bps": heaviest.best_Bps,
                },
            )
        )
    return found


@finding_source(
    "profile against the machine",
    90,
    {
        "profile.against_machine": Better.HIGHER,
        "profile.noise_slowdown": Better.LOWER,
        "profile.slow_link": Better.HIGHER,
    },
)
def profile_findings(data: RunData) -> list[Finding]:
    """Every joined row of the run's profiles (a run of perfatlas profile holds one), and the
    noise model of its superstep."""
    sources = from_results(*data.launches)
    found = []
    for stored in data.profiles:
        join = atlas_join(stored["document"])
        found += [_finding(row, sources) for row in join.rows]
        found += _noise_findings(join.noise, sources)
        found += _slow_link_findings(join.pairs, sources)
    return found
