"""Findings of the noise analysis: each PU's slowdown with its interval, its strongest spectral
lines, and the BSP cost at scale (perfatlas.noise.series_noise, perfatlas.noise.analysis_noise); and the
slowdown and BSP findings read back as the report's and the terminal's noise tables show them."""

from __future__ import annotations

from perfatlas.common.units import format_number
from perfatlas.findings.compute import RunFindings
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import Finding, Sources, from_results, of_kind, ratio_of
from perfatlas.noise.analysis_noise import GRANULARITIES_NS, PROCESSES, Line
from perfatlas.noise.series_noise import CoreNoise, NoiseMeasurement, noise_measurements
from perfatlas.store.run_data import RunData

STRONGEST_LINES = 3  # lines per PU, by band power
SLOWDOWN_METHOD = (
    "time lost to detours / undisturbed time of the series (FWQ: against the fastest quantum; "
    "FTQ: against the largest count), 95 % moving-block bootstrap interval over 50 stretches "
    "of time (Kuensch 1989)"
)
LINE_METHOD = (
    "peak of Welch's PSD of the lost-time fraction >= 10x its running median; share of the lost "
    "time recurring with its period by epoch folding"
)
BSP_METHOD = (
    "expected maximum over P processes of the lost time in windows of g of work, pooled over "
    "the measured PUs, / g (Hoefler, Schneider & Lumsdaine, SC10)"
)


def slowdown_text(finding: Finding | None, dim: bool = False) -> str:
    """'3.1 % [2.9, 3.4]', a PU's slowdown as its noise.slowdown finding states it (the report's
    and the terminal's tables); `dim`: the interval in rich's dim markup. '-' without one."""
    if finding is None or finding.value is None:
        return "-"
    if finding.interval is None:
        return f"{format_number(finding.value)} %"
    bounds = f"[{format_number(finding.interval.low)}, {format_number(finding.interval.high)}]"
    return f"{format_number(finding.value)} % " + (f"[dim]{bounds}[/]" if dim else bounds)


def detour_cells(finding: Finding | None) -> list[str]:
    """A PU's p99 lost time, largest detour and strongest line with its share of the lost time,
    as its noise.slowdown finding states them (the terminal's noise table); '-' without one."""
    d = finding.details if finding else {}
    hz, share = d.get("top_line_hz"), d.get("top_line_share")
    line = "-" if hz is None else f"{hz:.0f} Hz"
    if hz is not None and share is not None:
        line += f" ({100 * share:.0f} %)"
    return [_us(d.get("p99_lost_ns")), _us(d.get("largest_lost_ns")), line]


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{format_number(ns / 1e3)} us"


def _where(m: NoiseMeasurement, core: CoreNoise) -> str:
    return f"cpu {core.cpu} ({m.label})"


def strongest_lines(core: CoreNoise, count: int = STRONGEST_LINES) -> list[Line]:
    """The lines of the largest band power, strongest first. Not by share of the lost time:
    a pulse train has the same share at its frequency, its multiples and any weak subharmonic
    the folding meets (perfatlas.noise.analysis_noise), so shares tie where powers do not."""
    lines = core.spectrum.lines if core.spectrum else []
    return sorted(lines, key=lambda line: line.power_share, reverse=True)[:count]


def _slowdown(m: NoiseMeasurement, core: CoreNoise) -> Finding:
    value, interval = ratio_of(core.slowdown, scale=100.0)
    top = next(iter(strongest_lines(core, 1)), None)
    return Finding(
        kind="noise.slowdown",
        subject=_where(m, core),
        value=value,
        unit="%",
        method=SLOWDOWN_METHOD,
        sources=from_results(core.result),
        verdict=f"strongest line {top.frequency_hz:.4g} Hz" if top else "no spectral line",
        details={
            "p99_lost_ns": core.detours.percentiles_ns[99.0],
            "largest_lost_ns": core.detours.largest_ns,
            "top_line_hz": float(top.frequency_hz) if top else None,
            "top_line_share": top.share if top else None,  # of the lost time (None: unfolded)
            "samples": len(core.series.lost_ns),
        },
        **interval,
    )


def _line(m: NoiseMeasurement, core: CoreNoise, line: Line) -> Finding:
    share = f"{100 * line.share:.0f} % of the lost time" if line.share else "no folded share"
    harmonic = f", {line.order} x {line.fundamental_hz:.4g} Hz" if line.fundamental_hz else ""
    return Finding(
        kind="noise.line",
        subject=f"{_where(m, core)}, {line.frequency_hz:.4g} Hz",
        value=float(line.frequency_hz),
        unit="Hz",
        method=LINE_METHOD,
        sources=from_results(core.result),
        interval_reason="a line's frequency is the refined periodogram peak: no interval",
        verdict=f"{share} recurs with this period{harmonic}",
        details={
            "share": line.share,
            "power_share": line.power_share,
            "amplitude": line.amplitude,
            "fundamental_hz": None if line.fundamental_hz is None else float(line.fundamental_hz),
            "order": line.order,
        },
    )


def _pooled(m: NoiseMeasurement) -> Sources:
    """The results a measurement's BSP model pools: every PU's."""
    return Sources(tuple(sorted(c.result.id for c in m.cores)))


def bsp_cells(found: RunFindings, m: NoiseMeasurement) -> list[str]:
    """The BSP slowdown at scale for each g of GRANULARITIES_NS as the measurement's
    noise.bsp_slowdown findings state it: '253.9 %', '≥ 1148 %' where the finding is a lower
    bound, '-' where the run has none (the terminal's noise table)."""
    pooled = _pooled(m).results
    mine = {
        f.details.get("granularity_ns"): f
        for f in of_kind(found.findings, "noise.bsp_slowdown")
        if f.sources.results == pooled
    }
    cells = []
    for g in GRANULARITIES_NS:
        f = mine.get(g)
        if f is None or f.value is None:
            cells.append("-")
        else:
            cells.append(
                f"{'≥ ' if f.details.get('lower_bound') else ''}{format_number(f.value)} %"
            )
    return cells


def _bsp(m: NoiseMeasurement) -> list[Finding]:
    widest = max(PROCESSES)
    found = []
    for curve in m.bsp:
        bound = widest > curve.independent_windows
        found.append(
            Finding(
                kind="noise.bsp_slowdown",
                subject=f"{m.label}, g = {curve.granularity_ns / 1e6:g} ms, P = {widest:g}",
                value=100.0 * float(curve.slowdown[-1]),
                unit="%",
                method=BSP_METHOD,
                sources=_pooled(m),
                interval_reason="an expectation over the pooled windows (a model), not a sample "
                "statistic",
                verdict="lower bound: P exceeds the independent windows measured"
                if bound
                else "expected superstep slowdown",
                severity="notice" if curve.slowdown[-1] > 0.1 else "info",
                details={
                    "granularity_ns": curve.granularity_ns,  # placed in the noise table
                    "lower_bound": bound,
                    "processes": [int(p) for p in curve.processes],
                    "slowdown_percent": [100.0 * float(s) for s in curve.slowdown],
                    "independent_windows": curve.independent_windows,
                    "window_ns": curve.window_ns,
                },
            )
        )
    return found


@finding_source(
    "noise",
    40,
    {
        "noise.slowdown": Better.LOWER,
        "noise.bsp_slowdown": Better.LOWER,
        "noise.line": Better.NEITHER,
    },
)
def noise_findings(data: RunData) -> list[Finding]:
    found = []
    for m in noise_measurements(data):
        for core in m.cores:
            found.append(_slowdown(m, core))
            found += [_line(m, core, line) for line in strongest_lines(core)]
        found += _bsp(m)
    return found
