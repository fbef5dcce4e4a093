"""app.spmv: predicted (E1, E2) against measured efficiency of the remote-access variants, and the
node-level CSR kernel against its roofline bound (docs/contract.md, native/app/spmv/document.c).

Measured efficiency is given twice. The document's: the slowest rank's median local time over
the slowest rank's median variant time (per-rank medians, max over ranks). From the stored
samples: median(baseline_s) / median(variant_s), where each sample is already the slowest rank's
time per product, with a percentile-bootstrap 95 % interval (stats.ratio); this is the one the
report draws, since it carries its spread. Both use the variant's own baseline (local for y = A x,
local_transposed for y = A^T x).

Roofline: bytes per product between bytes_min (x read once per distinct column a rank touches)
and bytes_max (x read once per nonzero), with 8 B value + 4 B column index per nonzero and 8 B y
+ 4 B row pointer per row (rows + 1 per rank), write-allocate not counted; 2 flops per nonzero. The bound is intensity
x bandwidth, intensity = 2 nnz / bytes; the fraction of the bound uses the stored median rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perfatlas.app.analysis_points import Point
from perfatlas.common.stats import Ratio, ratio
from perfatlas.store.result import Result

BENCHMARK = "app.spmv"
BASELINES = ("local", "local_transposed", "csr")  # not remote variants


def matrix_name(params: dict) -> str:
    """The matrix: the file's name or the generated mesh, and its permutation."""
    name = (
        Path(params["matrix"]).name
        if params.get("matrix")
        else f"{params.get('problem')} n={params.get('n')}"
    )
    if params.get("permute") == "random":
        name += f" permuted (seed {params.get('seed')})"
    return name


def configuration(params: dict) -> str:
    return f"np={params.get('np')} threads={params.get('threads')}"


@dataclass(frozen=True)
class Variant:
    matrix: str
    configuration: str
    name: str
    operation: str  # y = A x or y = A^T x
    model: str | None  # E1, E2, or None (no model: read_shared)
    t_r_kind: str | None  # get or accumulate
    f: float  # whole matrix: remote accesses / nonzeros
    r: float | None  # whole matrix: remote accesses / distinct remote elements
    t_l_ns: list[float]  # per rank: the baseline's median time per nonzero
    t_r_ns: list[float] | None  # per rank: the median get (or accumulate) latency
    predicted: float | None  # the document's whole-product model efficiency
    measured_document: float | None  # the document's (per-rank medians)
    measured: Ratio | None  # from the stored samples, with its 95 % interval
    not_measurable: str | None = None


def _number(value) -> float | None:
    return None if value is None else float(value)


def measured_efficiency(point: Point, variant: str, baseline: str) -> Ratio | None:
    """median(baseline_s) / median(variant_s) of the stored samples with a bootstrap interval."""
    base, own = point.metrics.get(f"{baseline}_s"), point.metrics.get(f"{variant}_s")
    if base is None or own is None:
        return None
    return ratio(base.samples, own.samples)


def variants(point: Point) -> list[Variant]:
    """The remote variants of a point, in the document's order (csr and the baselines left out)."""
    d = point.derived
    t_r = d.get("t_r") or {}
    found = []
    for name, v in (d.get("variants") or {}).items():
        if name in BASELINES:
            continue
        kind = v.get("t_r")
        baseline = v.get("baseline") or ("local_transposed" if "A^T" in v["operation"] else "local")
        base = (d["variants"].get(baseline) or {}).get("per_rank") or {}
        latency = (t_r.get(kind) or {}).get("median_ns") if kind else None
        found.append(
            Variant(
                matrix=matrix_name(point.params),
                configuration=configuration(point.params),
                name=name,
                operation=v["operation"],
                model=None if v.get("model") in (None, "none") else v["model"],
                t_r_kind=kind,
                f=float(d["f"]),
                r=_number(d.get("r")),
                t_l_ns=[float(x) for x in base.get("ns_per_nonzero") or []],
                t_r_ns=[float(x) for x in latency] if latency else None,
                predicted=_number(v.get("predicted_efficiency")),
                measured_document=_number(v.get("measured_efficiency")),
                measured=measured_efficiency(point, name, baseline),
                not_measurable=v.get("not_measurable"),
            )
        )
    return found


@dataclass(frozen=True)
class Roofline:
    matrix: str
    configuration: str
    rate: Result  # csr_flops_per_s (flop/s)
    nnz: int
    bytes_min: float
    bytes_max: float
    bytes_model: str
    bandwidth: float | None  # byte/s
    bandwidth_source: str  # where the bandwidth came from, or why it is missing

    @property
    def flops(self) -> float:
        return 2.0 * self.nnz

    @property
    def bytes_per_nonzero(self) -> tuple[float, float]:
        return self.bytes_min / self.nnz, self.bytes_max / self.nnz

    @property
    def intensity(self) -> tuple[float, float]:
        """flop/byte, from the most bytes (no reuse of x) to the fewest (perfect reuse)."""
        return self.flops / self.bytes_max, self.flops / self.bytes_min

    @property
    def bound(self) -> tuple[float, float] | None:
        """flop/s the bandwidth allows at the two intensities; None without a bandwidth."""
        if not self.bandwidth:
            return None
        low, high = self.intensity
        return low * self.bandwidth, high * self.bandwidth

    @property
    def fraction_of_bound(self) -> tuple[float, float] | None:
        """The measured median rate over the bound at the fewest and at the most bytes."""
        bound = self.bound
        if bound is None or self.rate.median is None:
            return None
        return self.rate.median / bound[1], self.rate.median / bound[0]


def roofline(point: Point) -> Roofline | None:
    """The CSR kernel against its bound; None when the point has no csr result."""
    rate = point.metrics.get("csr_flops_per_s")
    roof = point.derived.get("roofline")
    if rate is None or not roof:
        return None
    bandwidth = roof.get("bandwidth_Bps")
    source = roof.get("bandwidth_source") if bandwidth else roof.get("bandwidth_missing")
    return Roofline(
        matrix=matrix_name(point.params),
        configuration=configuration(point.params),
        rate=rate,
        nnz=int(point.derived["nnz"]),
        bytes_min=float(roof["bytes_min"]),
        bytes_max=float(roof["bytes_max"]),
        bytes_model=str(roof.get("bytes_model", "")),
        bandwidth=_number(bandwidth),
        bandwidth_source=str(source or ("given (bandwidth=)" if bandwidth else "missing")),
    )
