"""The communication part of the terminal summary: small-message latency, peak bandwidth,
collectives vs process count with their growth, RMA latencies, and the anomalies: the ping-pong
headline, the growth and the anomalies as the run's findings state them."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from perfatlas.comm import findings_comm as stated
from perfatlas.comm.series_comm import CASE_TITLES, collective_lines, pingpong_figures, rma_results
from perfatlas.common.anomaly import MIN_EFFECT, ROBUST_Z_LIMIT
from perfatlas.common.units import format_number, format_size
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import of_kind
from perfatlas.findings.render import figure_text
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table

MAX_ANOMALY_ROWS = 8


def _ci(result: Result | None, scale: float, unit: str) -> str:
    if result is None or result.median is None:
        return "-"
    m, lo, hi = (format_number(v * scale) for v in (result.median, result.ci_lo, result.ci_hi))
    return f"{m} {unit} [dim][{lo}, {hi}][/]"


@summary_table("pingpong", 50, ("comm.pingpong",))
def pingpong_table(data: RunData) -> Table | None:
    figures = pingpong_figures(data)
    if not figures:
        return None
    table = titled_table(
        "MPI ping-pong [95 % CI]",
        "line",
        "latency, smallest message",
        "peak bandwidth",
        "at",
        "n½",
        right=(1, 2, 3, 4),
    )
    found = run_findings(data)
    for f in figures:
        latency = found.of_result("comm.pingpong_latency", f.smallest)
        peak = found.of_result("comm.pingpong_bandwidth", f.peak)
        half = peak.details.get("half_peak_bytes") if peak else None
        at = f"{format_size(f.smallest.params['bytes'])}: " if latency and f.smallest else ""
        table.add_row(
            f.label,
            at + figure_text(latency, format_number, dim=True, unit="µs"),
            figure_text(peak, format_number, dim=True, unit="GB/s"),
            format_size(f.peak.params["bytes"]) if f.peak else "-",
            format_size(half) if half is not None else "-",
        )
    return table


@summary_table("collectives", 60, ("comm.allreduce", "comm.barrier"))
def collectives_table(data: RunData) -> Table | None:
    lines = collective_lines(data)
    if not lines:
        return None
    table = titled_table(
        "MPI collectives (smallest vector): median latency per call vs processes P",
        "collective",
        "P: latency",
        "growth, as found",
    )
    found = run_findings(data)
    smallest = {}
    for line in lines:
        smallest[line.benchmark] = min(smallest.get(line.benchmark, line.bytes), line.bytes)
    for line in [line for line in lines if line.bytes == smallest[line.benchmark]]:
        cells = ", ".join(
            f"{r.params['processes']}: {format_number(r.median * 1e-3)} µs" for r in line.results
        )
        table.add_row(line.label, cells, escape(stated.growth_verdict(found, line)))
    return table


@summary_table("rma", 70, ("comm.rma",))
def rma_table(data: RunData) -> Table | None:
    results = [
        r
        for r in rma_results(data)
        if r.params.get("type") == "double" and r.params.get("count") == 1
    ]
    if not results:
        return None
    cases = list(dict.fromkeys(r.params["case"] for r in results))
    table = titled_table(
        "MPI one-sided latency of one double [95 % CI]",
        "op",
        *[CASE_TITLES.get(c, c) for c in cases],
        right=tuple(range(1, len(cases) + 1)),
    )
    for op in dict.fromkeys(r.params["op"] for r in results):
        cells = []
        for case in cases:
            hit = [r for r in results if r.params["op"] == op and r.params["case"] == case]
            cells.append(_ci(hit[0], 1.0, "ns") if hit else "-")
        table.add_row(op, *cells)
    return table


@summary_table("comm anomalies", 80, ("comm.distance", "comm.complement", "comm.hotspot"))
def anomaly_table(data: RunData) -> Table | None:
    """The anomalies, suspect hosts, withdrawn figures and groups not judged, as the run's
    findings state them (the report's patterns section shows the same rows and sentences)."""
    found = run_findings(data).findings
    anomalies, clean = of_kind(found, "comm.anomaly"), of_kind(found, "comm.no_anomaly")
    withdrawn, unjudged = of_kind(found, "comm.withdrawn"), of_kind(found, "comm.not_judged")
    if not (anomalies or clean or withdrawn or unjudged):
        return None
    said = f": {stated.anomalies_sentence(anomalies)}" if anomalies else ""
    table = titled_table(
        f"MPI anomalies (robust z > {ROBUST_Z_LIMIT}, 95 % CI apart from the others', "
        f"> {MIN_EFFECT:.0%} from their median; re-measured){escape(said)}",
        *stated.ANOMALY_HEADER,
        right=(1, 2, 3),
    )
    blank = [""] * (len(stated.ANOMALY_HEADER) - 1)
    listed = anomalies[:MAX_ANOMALY_ROWS]
    for f, row in zip(listed, stated.anomaly_rows(listed)):
        cells = [escape(cell) for cell in row]
        table.add_row(*(f"[red]{c}[/]" if f.severity == "warning" else c for c in cells))
    if len(anomalies) > len(listed):
        more = len(anomalies) - len(listed)
        table.add_row(f"... {more} more: perfatlas show {data.run['id']}", *blank)
    for suspect in of_kind(found, "comm.suspect_host"):
        table.add_row(f"[red]{escape(stated.suspect_sentence(suspect))}[/]", *blank)
    for row in stated.anomaly_rows(withdrawn):
        table.add_row(*(f"[dim]{escape(cell)}[/]" for cell in row))
    if unjudged:
        table.add_row(escape(stated.not_judged_sentence(unjudged)), *blank)
    for f in clean:
        table.add_row(f"[green]{escape(stated.clean_sentence(f))}[/]", *blank)
    return table
