"""Findings of the proxies' models against measurement: app.spmv's E1/E2 efficiency of the remote
variants and its CSR kernel against the roofline, app.sweep's KBA pipeline efficiency, app.hydro's
SAGE cycle time (perfatlas.app.analysis_spmv, analysis_sweep, analysis_hydro)."""

from __future__ import annotations

from perfatlas.app import analysis_hydro
from perfatlas.app.analysis_points import points
from perfatlas.app.analysis_spmv import BENCHMARK as SPMV
from perfatlas.app.analysis_spmv import roofline, variants
from perfatlas.app.analysis_sweep import weak_scaling
from perfatlas.common.stats import Ratio
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import MEDIAN_CI, RATIO_CI, Finding, from_results, median_of, ratio_of
from perfatlas.store.run_data import RunData


def model_verdict(predicted: float | None, measured: Ratio) -> str:
    """Whether a model's figure lies in the measured interval, and by how much it misses."""
    if predicted is None:
        return "no model for this variant"
    if measured.ci_lo <= predicted <= measured.ci_hi:
        return f"the model's {predicted:.3g} lies in the measured interval"
    side = "over" if predicted > measured.ci_hi else "under"
    return f"the model {side}-predicts: {predicted:.3g} against {measured.median:.3g} measured"


def _agrees(predicted: float | None, measured: Ratio) -> bool:
    return predicted is None or measured.ci_lo <= predicted <= measured.ci_hi


@finding_source(
    "app.spmv model",
    61,
    {
        "app.spmv.efficiency": Better.HIGHER,
        "app.spmv.roofline": Better.HIGHER,
    },
)
def spmv_findings(data: RunData) -> list[Finding]:
    found = []
    for point in points(data.results, SPMV):
        sources = from_results(*point.metrics.values())
        for v in variants(point):
            if v.measured is None:
                continue
            value, interval = ratio_of(v.measured)
            found.append(
                Finding(
                    kind="app.spmv.efficiency",
                    subject=f"{v.name} ({v.operation}), {v.matrix}, {v.configuration}",
                    value=value,
                    unit="efficiency",
                    method=f"measured: median(baseline_s) / median(variant_s), {RATIO_CI}; "
                    f"predicted: the document's {v.model or 'no'} model",
                    sources=sources,
                    verdict=model_verdict(v.predicted, v.measured),
                    severity="info" if _agrees(v.predicted, v.measured) else "notice",
                    details={"predicted": v.predicted, "model": v.model, "f": v.f, "r": v.r},
                    **interval,
                )
            )
        roof = roofline(point)
        fraction = roof.fraction_of_bound if roof else None
        if roof is not None and fraction is not None:
            found.append(
                Finding(
                    kind="app.spmv.roofline",
                    subject=f"CSR kernel, {roof.matrix}, {roof.configuration}",
                    value=roof.rate.median / 1e9,
                    unit="Gflop/s",
                    method="median rate against intensity x bandwidth at the most and the fewest "
                    "bytes per product",
                    sources=from_results(roof.rate),
                    interval_reason="the bound is a range of intensities, not an interval",
                    verdict=f"{100 * fraction[0]:.0f}-{100 * fraction[1]:.0f} % of the "
                    "bandwidth bound",
                    details={
                        "fraction_of_bound": list(fraction),
                        "bandwidth_Bps": roof.bandwidth,
                        "bandwidth_source": roof.bandwidth_source,
                    },
                )
            )
    return found


@finding_source("app.sweep model", 63, {"app.sweep.efficiency": Better.HIGHER})
def sweep_findings(data: RunData) -> list[Finding]:
    found = []
    for series in weak_scaling(data.results):
        for p in series.points:
            if p.measured is None or p.np == 1:
                continue
            value, interval = ratio_of(p.measured)
            found.append(
                Finding(
                    kind="app.sweep.efficiency",
                    subject=f"{series.label}, np={p.np} ({p.px}x{p.py})",
                    value=value,
                    unit="efficiency",
                    method=f"measured: g(1) / g(np) of the grind times, {RATIO_CI}; predicted: "
                    "the KBA pipeline model 8 Nb / (8 Nb + 2 (px - 1) + 3 (py - 1))",
                    sources=from_results(p.grind, *(series.reference.metrics.values())),
                    verdict=model_verdict(p.model_efficiency, p.measured),
                    severity="info" if _agrees(p.model_efficiency, p.measured) else "notice",
                    details={
                        "predicted": p.model_efficiency,
                        "model_without_overlap": p.model_without_overlap,
                        "pipeline_steps": p.pipeline_steps,
                    },
                    **interval,
                )
            )
    return found


@finding_source("app.hydro model", 64, {"app.hydro.cycle": Better.LOWER})
def hydro_findings(data: RunData) -> list[Finding]:
    """Each point's measured cycle time against the SAGE model's (analysis_hydro)."""
    found = []
    for series in analysis_hydro.weak_scaling(data.results):
        for p in series.points:
            value, interval = median_of(p.cycle)
            if value is None:
                continue
            predicted = p.model.cycle_s if p.model is not None else None
            measured = Ratio(value, p.cycle.ci_lo or value, p.cycle.ci_hi or value)
            found.append(
                Finding(
                    kind="app.hydro.cycle",
                    subject=f"{series.label}, np={p.np}",
                    value=value,
                    unit="s",
                    method=f"measured: {MEDIAN_CI}; predicted: c t_cell + gather/scatter by "
                    "ping-pong + reductions by allreduce (Kerbyson et al., SC2001)",
                    sources=from_results(p.cycle, *p.phases.values()),
                    verdict=model_verdict(predicted, measured)
                    if p.model is not None
                    else f"no model: {p.model_missing}",
                    severity="info" if _agrees(predicted, measured) else "notice",
                    details={
                        "predicted_s": predicted,
                        "efficiency": p.efficiency.median if p.efficiency else None,
                        "neighbours_max": p.neighbours_max,
                    },
                    **interval,
                )
            )
    return found
