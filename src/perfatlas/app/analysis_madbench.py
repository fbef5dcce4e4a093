"""app.madbench: the four phases of one MADbench iteration per configuration (np, gangs, I/O),
each phase's share of np x rank 0's measured DGEMM rate, the bytes each phase moves, and the
correctness figures the document carries (docs/contract.md)."""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.app.analysis_points import PhaseStack, Point, phase_stack
from perfatlas.store.result import Result

BENCHMARK = "app.madbench"
PHASES = ("dSdC", "invD", "W", "dLdC")
CHECK_LIMIT = 1e-8  # native/app/madbench: every check below it, or the run fails (status 3)


def problem(params: dict) -> str:
    """The map and spectrum a point computed: every configuration of it does the same work."""
    return f"npix={params.get('npix')} nbin={params.get('nbin')} lbin={params.get('lbin')}"


def configuration(params: dict) -> str:
    """np, gangs and I/O mode, and the throttles and block size where they are not the default."""
    shown = [f"np={params.get('np')}", f"ngang={params.get('ngang')}", f"io={params.get('io')}"]
    for key, default in (("rmod", 1), ("wmod", 1), ("bsize", 64)):
        if params.get(key, default) != default:
            shown.append(f"{key}={params[key]}")
    return " ".join(shown)


def phases(point: Point) -> PhaseStack | None:
    """dSdC, invD, W, dLdC (seconds per repetition, from a barrier to the slowest rank)."""
    return phase_stack(point, [(name, f"{name}_s") for name in PHASES])


@dataclass(frozen=True)
class PhaseFigures:
    name: str
    time: Result  # seconds
    rate: Result | None  # flop/s: the phase's flops over its time
    percent_of_dgemm: Result | None  # 100 x rate / (np x rank 0's DGEMM rate), per repetition
    io_wait: Result | None  # seconds the slowest-waiting rank was blocked on its file transfers
    flops: float  # the phase's flop count (derived.flops)
    bytes_read: int  # per repetition, all ranks
    bytes_written: int


def phase_figures(point: Point) -> list[PhaseFigures]:
    d = point.derived
    found = []
    for name in PHASES:
        if f"{name}_s" not in point.metrics:
            continue
        found.append(
            PhaseFigures(
                name,
                point.metrics[f"{name}_s"],
                point.metrics.get(f"{name}_flops_per_s"),
                point.metrics.get(f"{name}_percent_of_dgemm"),
                point.metrics.get(f"{name}_io_wait_s"),
                float((d.get("flops") or {}).get(name, 0)),
                int((d.get("bytes_read") or {}).get(name, 0)),
                int((d.get("bytes_written") or {}).get(name, 0)),
            )
        )
    return found


@dataclass(frozen=True)
class Correctness:
    inverse_error: float  # max|D^-1 (D d) - d| / max|d|
    trace_identity_error: float  # |sum_b C_b tr W_b + noise tr D^-1 - npix| / npix
    likelihood_identity_error: float
    limit: float
    invD_trace: float
    invD_checksum: float  # the sum of D^-1's elements
    trace_W: list[float]  # per bin (up to 64 bins)
    dLdC: list[float]
    spectrum_correction: list[float]

    @property
    def passed(self) -> bool:
        worst = max(self.inverse_error, self.trace_identity_error, self.likelihood_identity_error)
        return worst <= self.limit


def correctness(point: Point) -> Correctness:
    d = point.derived
    checks = d.get("checks") or {}
    return Correctness(
        inverse_error=float(checks["inverse_error"]),
        trace_identity_error=float(checks["trace_identity_error"]),
        likelihood_identity_error=float(checks["likelihood_identity_error"]),
        limit=CHECK_LIMIT,
        invD_trace=float(d["invD_trace"]),
        invD_checksum=float(d["invD_checksum"]),
        trace_W=[float(v) for v in d.get("trace_W") or []],
        dLdC=[float(v) for v in d.get("dLdC") or []],
        spectrum_correction=[float(v) for v in d.get("spectrum_correction") or []],
    )
