"""The machine's roofline drawn from a run's stored results (no measuring, no drawing here).

Williams, Waterman & Patterson, "Roofline: an insightful visual performance model for multicore
architectures", CACM 52(4), 2009: attainable flop/s = min(peak flop/s, intensity x bandwidth),
intensity = flops / bytes of memory traffic. Here:

- Compute ceilings: `cpu.peakflops` `flop_rate` medians. The peak of a precision is the best ISA
  at 1 thread and at the most threads measured; every ISA is a lower ceiling (Williams' "in-core
  ceilings": without FMA or wide vectors a code cannot reach the peak).
- Bandwidth ceilings: `mem.bandwidth` `bandwidth_Bps` over its working-set series. A working set
  W (all arrays, all threads) is assigned to the level that serves it from hwloc's cache sizes:
  a cache level of per-instance size C serves t threads with C x min(t, instances) bytes (private
  caches add up, a shared one does not); W belongs to the first level that holds it FIT times
  over and that the level below holds less than 1/SPILL of (a transition point belongs to no
  level), and to memory when it is MEMORY_FACTOR times the largest cache level's capacity, as in
  analysis_levels, the last level's size being the effective LLC where the run measured one.
  A level's ceiling is the best operation's plateau: the median of its points' medians, with the
  distribution-free 95 % interval of that median (stats.summarize); a plateau of one working set
  has that point's own median and interval.
- Ridge point: peak / bandwidth, the intensity where a level's diagonal meets the peak.
- Proxies: each places a measured rate at the intensity its document DECLARES (flops and bytes,
  native/app/*): app.spmv's CSR kernel (2 flops per nonzero; compulsory bytes 12 nnz + 20 n + 4,
  Williams et al., SC07), app.madbench's W phase (2 npix^3 flops and 24 npix^2 bytes per bin),
  app.sweep (13 flops per cell-angle; 24 B per cell per iteration). Compulsory traffic gives the
  highest intensity; the no-reuse traffic the document also declares gives the lowest. The bound
  of a point is min(double peak, intensity x memory bandwidth) at its core count (1 or all).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from perfatlas.app.analysis_points import Point, points
from perfatlas.common.stats import summarize
from perfatlas.mem.analysis_levels import MEMORY_FACTOR
from perfatlas.store.result import Result

PEAKFLOPS, FLOP_RATE = "cpu.peakflops", "flop_rate"
BANDWIDTH, BANDWIDTH_METRIC = "mem.bandwidth", "bandwidth_Bps"
MEMORY = "memory"
FIT = 2.0  # a cache level serves a working set it holds twice over ...
SPILL = 2.0  # ... that is twice the capacity of the level below (else: a transition point)
PROXY_PRECISION = "double"  # the proxies compute in double precision
MISSING_HINT = "measure cpu.peakflops and mem.bandwidth to draw the roofline"


@dataclass(frozen=True)
class Estimate:
    """A median with its 95 % interval."""

    median: float
    lo: float
    hi: float

    @classmethod
    def of(cls, result: Result) -> Estimate:
        return cls(result.median, result.ci_lo, result.ci_hi)


@dataclass(frozen=True)
class ComputeCeiling:
    precision: str
    isa: str
    threads: int
    rate: Estimate  # flop/s


@dataclass(frozen=True)
class BandwidthCeiling:
    level: str  # "L1", "L2", ..., "memory"
    threads: int
    op: str  # the operation with the best plateau (and its stores)
    rate: Estimate  # byte/s: median of the plateau's point medians, its 95 % interval
    sizes: tuple[int, ...]  # the working sets on the plateau


@dataclass(frozen=True)
class CacheLevel:
    name: str  # "L1" ...
    size_bytes: int  # one instance (the last level's: the effective LLC, where measured)
    instances: int
    hwloc_bytes: int | None = None  # one instance as hwloc says, where the effective LLC differs


@dataclass(frozen=True)
class ProxyPoint:
    benchmark: str
    label: str
    cores: int  # ranks x threads per rank
    flops: float  # declared, per unit of work (product, repetition, solve)
    bytes_min: float  # declared compulsory traffic of the same unit
    bytes_max: float  # declared traffic without reuse (= bytes_min where only one is declared)
    rate: Estimate  # measured flop/s
    model: str  # the documents' bytes model

    @property
    def intensity(self) -> float:
        """flop/byte of the compulsory traffic (the highest intensity)."""
        return self.flops / self.bytes_min

    @property
    def intensity_low(self) -> float:
        return self.flops / self.bytes_max


# -- levels ---------------------------------------------------------------------------------------
def cache_levels(topology: dict, llc_bytes: int | None = None) -> list[CacheLevel]:
    """hwloc's data and unified caches, one per level (largest instance), in level order; the
    last level no larger than `llc_bytes`, the effective LLC the run measured where given."""
    by_level: dict[int, CacheLevel] = {}
    for entry in topology.get("caches") or []:
        if entry.get("type") not in ("data", "unified") or not entry.get("size_bytes"):
            continue
        level = int(entry["level"])
        found = CacheLevel(f"L{level}", int(entry["size_bytes"]), int(entry.get("count") or 1))
        if level not in by_level or found.size_bytes > by_level[level].size_bytes:
            by_level[level] = found
    levels = [by_level[level] for level in sorted(by_level)]
    if levels and llc_bytes:
        last = levels[-1]
        levels[-1] = CacheLevel(
            last.name, min(last.size_bytes, llc_bytes), last.instances, last.size_bytes
        )
    return levels


def effective_llc(run: dict) -> int | None:
    """The effective LLC that sized the run (perfatlas.mem.cache_probe), None where hwloc's
    did: in a VM or beside noisy neighbours one thread may use far less than hwloc says."""
    llc = (run.get("context") or {}).get("llc") or {}
    return (
        int(llc["effective_bytes"])
        if llc.get("used") == "probe" and llc.get("effective_bytes")
        else None
    )


def level_of(working_set: float, threads: int, caches: list[CacheLevel]) -> str | None:
    """The level serving a working set of all arrays and threads; None between two levels."""
    if not caches:
        return None
    capacities = [c.size_bytes * min(threads, c.instances) for c in caches]
    # Memory is twice the last level as hwloc counts it: a working set beyond the effective
    # LLC but within the L3 may still be served by it (other tenants share it unevenly), and
    # calling its bandwidth memory's would raise the memory roof to the L3's.
    last = caches[-1]
    whole_last = (last.hwloc_bytes or last.size_bytes) * min(threads, last.instances)
    if working_set >= MEMORY_FACTOR * whole_last:
        return MEMORY
    for k, cache in enumerate(caches):
        below = capacities[k - 1] if k else 0.0
        if working_set * FIT <= capacities[k] and working_set >= SPILL * below:
            return cache.name
    return None


def level_names(caches: list[CacheLevel]) -> list[str]:
    return [c.name for c in caches] + [MEMORY]


# -- ceilings -------------------------------------------------------------------------------------
def _threads(result: Result) -> int:
    return int(result.params.get("threads") or len(result.params.get("cpus") or [0]) or 1)


def compute_ceilings(results: Iterable[Result]) -> list[ComputeCeiling]:
    """Every measured (precision, isa, threads) of cpu.peakflops, as stored."""
    return [
        ComputeCeiling(r.params["precision"], r.params["isa"], _threads(r), Estimate.of(r))
        for r in results
        if r.benchmark == PEAKFLOPS and r.metric == FLOP_RATE and r.samples
    ]


def bandwidth_ceilings(
    results: Iterable[Result], caches: list[CacheLevel]
) -> list[BandwidthCeiling]:
    """Per (level, threads): the best operation's plateau over the working sets of that level."""
    plateaus: dict[tuple[str, int, str], list[Result]] = {}
    for r in results:
        if r.benchmark != BANDWIDTH or r.metric != BANDWIDTH_METRIC or not r.samples:
            continue
        threads = _threads(r)
        level = level_of(r.params["bytes"], threads, caches)
        if level is None:
            continue
        p = r.params
        op = p.get("op", "?") + (" (non-temporal)" if p.get("store") == "nt" else "")
        plateaus.setdefault((level, threads, op), []).append(r)
    best: dict[tuple[str, int], BandwidthCeiling] = {}
    for (level, threads, op), found in plateaus.items():
        if len(found) == 1:  # one working set on the plateau: its own samples' interval
            rate = Estimate.of(found[0])
        else:
            summary = summarize([r.median for r in found])
            rate = Estimate(summary.median, summary.ci_lo, summary.ci_hi)
        ceiling = BandwidthCeiling(
            level,
            threads,
            op,
            rate,
            tuple(sorted(r.params["bytes"] for r in found)),
        )
        if (level, threads) not in best or rate.median > best[level, threads].rate.median:
            best[level, threads] = ceiling
    order = level_names(caches)
    return sorted(best.values(), key=lambda c: (c.threads, order.index(c.level)))


# -- proxies --------------------------------------------------------------------------------------
def _estimate(samples: list[float]) -> Estimate:
    s = summarize(samples)
    return Estimate(s.median, s.ci_lo, s.ci_hi)


def _spmv(point: Point) -> ProxyPoint | None:
    rate = point.metrics.get("csr_flops_per_s")
    roof, csr = point.derived.get("roofline"), point.derived.get("csr")
    if rate is None or not roof or not csr:
        return None
    p = point.params
    return ProxyPoint(
        "app.spmv",
        f"SpMV {p.get('problem') or 'file'} n={p.get('n', '?')} {p.get('permute', 'none')}, "
        f"np={p.get('np', 1)}",
        int(p.get("np", 1)) * int(p.get("threads", 1)),
        float(csr["flops_per_product"]),
        float(roof["bytes_min"]),
        float(roof["bytes_max"]),
        Estimate.of(rate),
        str(roof.get("bytes_model", "")),
    )


def _madbench(point: Point) -> ProxyPoint | None:
    rate, roof = point.metrics.get("W_flops_per_s"), point.derived.get("roofline")
    if rate is None or not roof:
        return None
    p = point.params
    return ProxyPoint(
        "app.madbench",
        f"MADbench W npix={p.get('npix')} nbin={p.get('nbin')}, np={p.get('np', 1)}",
        int(p.get("np", 1)),
        float(roof["flops"]),
        float(roof["bytes"]),
        float(roof["bytes"]),
        Estimate.of(rate),
        str(roof.get("bytes_model", "")),
    )


def _sweep(point: Point) -> ProxyPoint | None:
    solve, roof = point.metrics.get("solve_s"), point.derived.get("roofline")
    if solve is None or not roof:
        return None
    flops = float(roof["flops_per_solve"])
    grid = point.derived.get("subgrid") or ["?"] * 3
    return ProxyPoint(
        "app.sweep",
        f"sweep {'x'.join(str(g) for g in grid)} per rank, np={point.params.get('np', 1)}",
        int(point.params.get("np", 1)),
        flops,
        float(roof["bytes_min"]),
        float(roof["bytes_max"]),
        _estimate([flops / s for s in solve.samples if s > 0] or [0.0]),
        str(roof.get("bytes_model", "")),
    )


PROXIES = {"app.spmv": _spmv, "app.madbench": _madbench, "app.sweep": _sweep}


def proxy_points(results: list[Result]) -> list[ProxyPoint]:
    """The proxies' measured points whose documents declare flops and bytes, in run order."""
    found = []
    for benchmark, place in PROXIES.items():
        found += [p for p in (place(point) for point in points(results, benchmark)) if p]
    return [p for p in found if min(p.flops, p.bytes_min, p.bytes_max, p.rate.median) > 0]


# -- the roofline ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Roofline:
    compute: list[ComputeCeiling]
    bandwidth: list[BandwidthCeiling]
    points: list[ProxyPoint]
    levels: list[str]  # the level names, fastest first

    @property
    def missing(self) -> str | None:
        """What the run lacks to draw a roofline, in one sentence; None when it has both."""
        absent = [
            name
            for name, found in ((PEAKFLOPS, self.compute), (BANDWIDTH, self.bandwidth))
            if not found
        ]
        if not absent:
            return None
        what = " and ".join(absent)
        return f"This run has no {what} results: {MISSING_HINT}."

    def compute_threads(self) -> list[int]:
        """1 and the most threads cpu.peakflops measured (the two scopes drawn)."""
        return _scopes(c.threads for c in self.compute)

    def bandwidth_threads(self) -> list[int]:
        return _scopes(c.threads for c in self.bandwidth)

    def peak(self, precision: str, threads: int) -> ComputeCeiling | None:
        """The best ISA's ceiling of a precision at a thread count."""
        found = [c for c in self.compute if c.precision == precision and c.threads == threads]
        return max(found, key=lambda c: c.rate.median, default=None)

    def ceiling(self, level: str, threads: int) -> BandwidthCeiling | None:
        return next((c for c in self.bandwidth if c.level == level and c.threads == threads), None)

    def ridge(
        self,
        precision: str,
        threads: int,
        level: str = MEMORY,
        bandwidth_threads: int | None = None,
    ) -> float | None:
        """flop/byte where the level's bandwidth (at `bandwidth_threads`, else `threads`) meets
        the peak at `threads`; None if either is missing."""
        peak = self.peak(precision, threads)
        bandwidth = self.ceiling(level, threads if bandwidth_threads is None else bandwidth_threads)
        if peak is None or bandwidth is None:
            return None
        return peak.rate.median / bandwidth.rate.median

    def scope(self, cores: int) -> tuple[int, int] | None:
        """(compute threads, bandwidth threads) for a point on `cores` cores: 1, else the most."""
        compute, bandwidth = self.compute_threads(), self.bandwidth_threads()
        if not compute or not bandwidth:
            return None
        if cores > 1:
            return compute[-1], bandwidth[-1]
        return (1, 1) if compute[0] == bandwidth[0] == 1 else None

    def limit(self, point: ProxyPoint) -> tuple[float, str] | None:
        """(bound, "memory" or "compute"): min(double peak, compulsory intensity x memory
        bandwidth) at the point's core count; None where a ceiling is missing."""
        scope = self.scope(point.cores)
        if scope is None:
            return None
        peak, memory = self.peak(PROXY_PRECISION, scope[0]), self.ceiling(MEMORY, scope[1])
        if peak is None or memory is None:
            return None
        by_memory = point.intensity * memory.rate.median
        return (
            (by_memory, MEMORY) if by_memory < peak.rate.median else (peak.rate.median, "compute")
        )

    def bound(self, point: ProxyPoint) -> float | None:
        limit = self.limit(point)
        return None if limit is None else limit[0]


def _scopes(threads: Iterable[int]) -> list[int]:
    counts = sorted(set(threads))
    return [] if not counts else sorted({counts[0], counts[-1]})


def roofline(results: list[Result], topology: dict, llc_bytes: int | None = None) -> Roofline:
    """The roofline of a run's (pooled) results, its hwloc topology and its effective LLC."""
    caches = cache_levels(topology, llc_bytes)
    return Roofline(
        compute_ceilings(results),
        bandwidth_ceilings(results, caches),
        proxy_points(results),
        level_names(caches),
    )
