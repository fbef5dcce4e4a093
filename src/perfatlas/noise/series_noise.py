"""How the noise results of a run become per-PU analyses (no plotting here).

Shared by the report section and the terminal summary, so both say the same thing. The stored raw
samples are the single source of truth: everything is computed from them here, each time.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.common.stats import Ratio
from perfatlas.common.units import format_cpu_list
from perfatlas.noise import analysis_noise as analysis
from perfatlas.report.series import binding_text
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData


@dataclass(frozen=True)
class CoreNoise:
    """One measuring PU of a noise measurement, analysed."""

    result: Result
    cpu: int
    series: analysis.NoiseSeries
    slowdown: Ratio  # fraction, 95 % block-bootstrap CI
    detours: analysis.Detours
    spectrum: analysis.Spectrum | None


@dataclass(frozen=True)
class NoiseMeasurement:
    """One launch of pa-noise (or several pooled by --repeat): every PU that measured at once."""

    method: str
    quantum_s: float
    duration_s: float
    cpus: list[int]
    cores: list[CoreNoise]
    bsp: list[analysis.BspCurve]  # one per granularity that the series can hold
    host: str | None = None  # the node, in a run on several (perfatlas.cluster)

    @property
    def label(self) -> str:
        quantum = (
            f"{self.quantum_s * 1e6:g} us"
            if self.quantum_s < 1e-3
            else f"{self.quantum_s * 1e3:g} ms"
        )
        at_once = "at once" if len(self.cpus) > 1 else "alone"
        on = f" on {self.host}" if self.host else ""
        return (
            f"{self.method.upper()} {quantum}, {self.duration_s:g} s, "
            f"cpu{'s' * (len(self.cpus) > 1)} {format_cpu_list(self.cpus)} {at_once}{on}"
        )

    @property
    def binding(self) -> str:
        return binding_text(self.cores[0].result.document.get("placement") or {})

    @property
    def timer(self) -> dict:
        return self.cores[0].result.document.get("timer") or {}


def series_of(result: Result) -> analysis.NoiseSeries:
    """The noise series of one stored result, from its raw samples."""
    if result.metric == "work_per_interval":
        derived = result.document.get("derived") or {}
        interval_ns = derived.get("interval_ns") or result.params["quantum"] * 1e9
        return analysis.ftq_series(result.samples, interval_ns)
    return analysis.fwq_series(result.samples)


def _core(result: Result) -> CoreNoise:
    series = series_of(result)
    resolution = (result.document.get("timer") or {}).get("resolution_ns") or 1.0
    return CoreNoise(
        result=result,
        cpu=int(result.params.get("cpu", (result.params.get("cpus") or [0])[0])),
        series=series,
        slowdown=analysis.slowdown_interval(series),
        detours=analysis.detours(series, resolution),
        spectrum=analysis.spectrum(series),
    )


def measurement_groups(data: RunData) -> dict[tuple, list[Result]]:
    """The run's noise results by measurement, (method, quantum, duration, cpus, host) -> the
    results of its PUs, in the order they were stored."""
    groups: dict[tuple, list[Result]] = {}
    for result in data.measured("noise"):
        p = result.params
        key = (
            p.get("method"),
            p.get("quantum"),
            p.get("duration"),
            tuple(p.get("cpus") or []),
            p.get("host"),
        )
        groups.setdefault(key, []).append(result)
    return groups


def noise_measurements(data: RunData) -> list[NoiseMeasurement]:
    """The run's noise measurements, in the order they were stored, each with its PUs analysed."""
    measurements = []
    for (method, quantum, duration, cpus, host), results in measurement_groups(data).items():
        cores = [_core(r) for r in results]
        curves = [
            analysis.bsp_slowdown([c.series for c in cores], g) for g in analysis.GRANULARITIES_NS
        ]
        measurements.append(
            NoiseMeasurement(
                method=str(method),
                quantum_s=float(quantum),
                duration_s=float(duration),
                cpus=list(cpus),
                cores=cores,
                bsp=[curve for curve in curves if curve is not None],
                host=host,
            )
        )
    return measurements
