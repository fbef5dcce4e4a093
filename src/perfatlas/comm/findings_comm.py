"""Findings of the communication analyses: ping-pong latency and peak bandwidth, anomalous ranks,
pairs and senders, suspect hosts (their link), and how collectives grow with the process count
(perfatlas.comm.analysis_comm, perfatlas.comm.series_comm); and the anomaly and growth findings read back as
rows and sentences, which the report's sections and the terminal's tables both show."""

from __future__ import annotations

from dataclasses import replace

from perfatlas.comm.analysis_comm import (
    MIN_RELATIVE_DEVIATION,
    ROBUST_Z_LIMIT,
    Anomaly,
    AnomalyReport,
    Figure,
    find_anomalies,
)
from perfatlas.comm.series_comm import CollectiveLine, collective_lines, pingpong_figures
from perfatlas.common.anomaly import MIN_GROUP, remeasure_label
from perfatlas.common.units import format_number, format_size
from perfatlas.findings.compute import RunFindings
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import (
    MEDIAN_CI,
    Finding,
    Sources,
    from_results,
    median_interval,
    median_of,
)
from perfatlas.run.remeasure_anomalies import judges_figures
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

ANOMALY_METHOD = (
    f"leave-one-out robust z of ln(figure) against its group > {ROBUST_Z_LIMIT} (Iglewicz & "
    f"Hoaglin 1993) and more than {MIN_RELATIVE_DEVIATION:.0%} from the others' median"
)
NOT_JUDGED_METHOD = (
    f"groups of fewer than {MIN_GROUP} comparable figures are not judged by the anomaly rule "
    "(of two, which is the odd one?)"
)
SUSPECT_METHOD = "every figure involving the host is an anomaly for the worse, others are not"
GROWTH_METHOD = "least squares against log2 P and against P; the better fit leaves <= half the RSS"


@finding_source(
    "comm ping-pong",
    50,
    {
        "comm.pingpong_latency": Better.LOWER,
        "comm.pingpong_bandwidth": Better.HIGHER,
    },
)
def pingpong_findings(data: RunData) -> list[Finding]:
    found = []
    for f in pingpong_figures(data):
        if f.smallest is not None:
            value, interval = median_of(f.smallest, 1e-3)
            found.append(
                Finding(
                    kind="comm.pingpong_latency",
                    subject=f"{f.label}, {format_size(f.smallest.params['bytes'])}",
                    value=value,
                    unit="us",
                    method=f"half round trip of the smallest message; {MEDIAN_CI}",
                    sources=from_results(f.smallest),
                    **interval,
                )
            )
        if f.peak is not None:
            value, interval = median_of(f.peak, 1e-9)
            found.append(
                Finding(
                    kind="comm.pingpong_bandwidth",
                    subject=f"{f.label}, peak at {format_size(f.peak.params['bytes'])}",
                    value=value,
                    unit="GB/s",
                    method=f"the message size with the highest median; {MEDIAN_CI}",
                    sources=from_results(f.peak),
                    details={"half_peak_bytes": f.half_peak_bytes},
                    **interval,
                )
            )
    return found


def _anomaly(a: Anomaly, report: AnomalyReport) -> Finding:
    scale, unit = (1e-9, "GB/s") if a.metric.endswith("_Bps") else (1e-3, "us")
    return Finding(
        kind="comm.anomaly",
        subject=f"{a.subject} in {a.group}",
        value=a.value * scale,
        unit=unit,
        method=ANOMALY_METHOD,
        sources=Sources(tuple(i for i in (a.result_id, a.remeasured_result_id) if i is not None)),
        verdict=f"{a.relative:+.0%} from the others' median ({'worse' if a.worse else 'better'})"
        + ("" if a.confirmed is None else ", confirmed by its re-measurement"),
        severity="warning" if a.worse else "notice",
        details={
            "others_median": a.median * scale,
            "relative": a.relative,
            "robust_z": a.robust_z,
            "hosts": list(a.hosts),
            "others_interval": [a.others_lo * scale, a.others_hi * scale],
            "confirmed": a.confirmed,
            "remeasured": None if a.remeasured_value is None else a.remeasured_value * scale,
            "remeasured_result": a.remeasured_result_id,
            # the run's totals, so that a report counts from the findings alone
            "figures_checked": report.figures_checked,
            "groups_checked": report.groups_checked,
        },
        # its own samples' interval: a result's, or a hotspot sender's share of its result
        **median_interval(a.ci_lo * scale, a.ci_hi * scale, a.n),
    )


@finding_source(
    "comm anomalies",
    51,
    {
        "comm.anomaly": Better.NEITHER,
        "comm.withdrawn": Better.NEITHER,
        "comm.suspect_host": Better.NEITHER,
        "comm.no_anomaly": Better.NEITHER,
        "comm.not_judged": Better.NEITHER,
    },
)
def anomaly_findings(data: RunData) -> list[Finding]:
    report = find_anomalies(data.results)
    found = [_anomaly(a, report) for a in report.anomalies]
    for a in report.withdrawn:
        found.append(
            replace(
                _anomaly(a, report),
                kind="comm.withdrawn",
                verdict=f"tripped the rule ({a.relative:+.0%}), not confirmed by its "
                "re-measurement: not reported",
                severity="info",
            )
        )
    for s in report.suspects:
        involved = [a.result_id for a in report.anomalies if s.host in a.hosts]
        found.append(
            Finding(
                kind="comm.suspect_host",
                subject=f"host {s.host} in {s.group}",
                value=float(s.flagged),
                unit="figures worse",
                method=SUSPECT_METHOD,
                sources=Sources(tuple(sorted(set(involved)))),
                interval_reason="a count of flagged figures",
                verdict=f"suspect link: every figure involving host {s.host} is worse",
                severity="warning",
            )
        )
    if report.groups_checked and not report.anomalies:
        found.append(
            Finding(
                kind="comm.no_anomaly",
                subject=f"{report.groups_checked} group(s)",
                value=float(report.figures_checked),
                unit="figures checked",
                method=ANOMALY_METHOD,
                sources=from_results(
                    *(
                        r
                        for r in data.results
                        if r.benchmark in ("comm.distance", "comm.complement", "comm.hotspot")
                    )
                ),
                interval_reason="a count of figures",
                verdict="no anomaly",
            )
        )
    return found + [_not_judged(label, figures) for label, figures in report.too_small]


def _not_judged(label: str, figures: list[Figure]) -> Finding:
    """A group too small for the rule: said, so that a reader knows these figures were not
    judged rather than found normal."""
    return Finding(
        kind="comm.not_judged",
        subject=label,
        value=float(len(figures)),
        unit="figures",
        method=NOT_JUDGED_METHOD,
        sources=from_results(*(f.result for f in figures)),
        interval_reason="a count of figures",
        verdict=f"not judged: fewer than {MIN_GROUP} comparable figures",
    )


@finding_source("comm collectives", 52, {"comm.collective_growth": Better.NEITHER})
def growth_findings(data: RunData) -> list[Finding]:
    found = []
    for line in collective_lines(data):
        g = line.growth
        fit = {"logarithmic": g.log_fit, "linear": g.linear_fit}.get(g.verdict)
        per = "doubling of P" if g.verdict == "logarithmic" else "process"
        found.append(
            Finding(
                kind="comm.collective_growth",
                subject=f"{line.label}, P = {', '.join(str(int(p)) for p in line.processes)}",
                value=fit.slope * 1e-3 if fit else None,
                unit=f"us per {per}" if fit else "",
                method=GROWTH_METHOD,
                sources=from_results(*line.results),
                interval_reason="a least-squares slope over the medians",
                verdict=f"{g.verdict}: {g.reason}",
                details={
                    "latency_us": [r.median * 1e-3 for r in line.results],
                    "log_rss": g.log_fit.rss if g.log_fit else None,
                    "linear_rss": g.linear_fit.rss if g.linear_fit else None,
                },
            )
        )
    return found


# -- read back: the anomaly and growth findings as the report's sections and the terminal's tables
# both show them (the details written above are read here, and only here) ------------------------
ANOMALY_HEADER = (
    "figure, in its group",
    "value [95 % CI]",
    "median of the others [group CI]",
    "robust z",
    "verdict",
    "re-measured",
    "hosts",
)


def shown(value: float | None, unit: str) -> str:
    """A finding's figure as the tables show it (its unit us as µs)."""
    if value is None:
        return "-"
    return f"{format_number(value)} {'µs' if unit == 'us' else unit}"


def _with_interval(value: float | None, bounds: list | None, unit: str) -> str:
    if not bounds or None in bounds:
        return shown(value, unit)
    return f"{shown(value, unit)} [{shown(bounds[0], unit)} .. {shown(bounds[1], unit)}]"


def anomaly_rows(found: list[Finding]) -> list[list[str]]:
    """A row (ANOMALY_HEADER) per comm.anomaly or comm.withdrawn finding, as it states it."""
    rows = []
    for f in found:
        d, own = f.details, f.interval
        z = d.get("robust_z")  # None: infinite (the others' spread is 0)
        rows.append(
            [
                f.subject,
                _with_interval(f.value, None if own is None else [own.low, own.high], f.unit),
                _with_interval(d.get("others_median"), d.get("others_interval"), f.unit),
                "∞" if z is None else f"{z:+.1f}",
                f.verdict or "",
                remeasure_label(d.get("confirmed"), shown(d.get("remeasured"), f.unit)),
                " ↔ ".join(dict.fromkeys(d.get("hosts") or [])),
            ]
        )
    return rows


def anomalies_sentence(anomalies: list[Finding]) -> str:
    """How many comm.anomaly findings, how many worse, among how many figures checked."""
    worse = sum(f.severity == "warning" for f in anomalies)
    counts = anomalies[0].details
    among = (
        f" among {counts['figures_checked']} figures in {counts['groups_checked']} group(s)"
        if "figures_checked" in counts  # findings stored before they carried the totals
        else ""
    )
    return f"{len(anomalies)} anomalous figure(s) ({worse} worse than their group){among}."


def suspect_sentence(suspect: Finding) -> str:
    """A comm.suspect_host finding: the host, its count and what to check."""
    verdict = suspect.verdict or "suspect link"
    return (
        f"{verdict[:1].upper() + verdict[1:]} ({suspect.subject}: {int(suspect.value or 0)} "
        "figure(s) worse than the rest); check its cable, port or switch path."
    )


def clean_sentence(clean: Finding) -> str:
    """A comm.no_anomaly finding: no anomaly among the figures checked."""
    return (
        f"{(clean.verdict or 'no anomaly').capitalize()} among {int(clean.value or 0)} "
        f"figures in {clean.subject}."
    )


def not_judged_sentence(unjudged: list[Finding]) -> str:
    """The comm.not_judged findings: the groups too small for the rule."""
    said = "; ".join(f"{f.subject}, {int(f.value or 0)} figure(s): {f.verdict}" for f in unjudged)
    return f"{said}."


def growth_verdict(found: RunFindings, line: CollectiveLine) -> str:
    """A collective's growth with P as its comm.collective_growth finding states it ('-' where
    the run has none): the report's growth table and the terminal's collectives table."""
    finding = found.of_sources("comm.collective_growth").get(from_results(*line.results).results)
    return "-" if finding is None or not finding.verdict else finding.verdict


@judges_figures
def anomalous_ranks(results: list[Result]) -> set[int]:
    """The distance, complement and hotspot figures to measure again (find_anomalies)."""
    return set(find_anomalies(results).to_remeasure)
