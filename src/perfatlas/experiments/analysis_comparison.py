"""Two runs compared (perfatlas compare): per-point and per-benchmark ratios with intervals.

- A point is a result of run B and the result of run A with the same benchmark, parameters and
  metric; a sweep's launches of one point are pooled first (store.result.pool_launches). Its ratio is
  median(B) / median(A) with a percentile-bootstrap 95 % interval (stats.ratio).
- A benchmark's ratio (per metric) is the geometric mean of its points' ratios, with a bootstrap
  interval over the points (resampling points, seeded), since points of one benchmark are the
  units that vary (Fleming & Wallace, CACM 1986, on summarizing ratios by the geometric mean).
- An expected ratio (`--expect`, e.g. the clock ratio 1.333) is what a point's interval is held
  against: the verdict says whether it is consistent with it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from perfatlas.common.stats import CONFIDENCE, Ratio, ratio
from perfatlas.store.result import Result, pool_launches


@dataclass(frozen=True)
class PointRatio:
    a: Result
    b: Result
    ratio: Ratio

    @property
    def threads(self) -> int | None:
        value = self.b.params.get("threads")
        return int(value) if isinstance(value, int | float) else None

    def verdict(self, expect: float | None) -> str:
        reference = 1.0 if expect is None else expect
        if self.ratio.ci_lo <= reference <= self.ratio.ci_hi:
            return "same" if expect is None else "as expected"
        above = self.ratio.ci_lo > reference
        if expect is None:
            return "higher" if above else "lower"
        return "above expected" if above else "below expected"


def _key(result: Result) -> tuple:
    return (result.benchmark, json.dumps(result.params, sort_keys=True), result.metric)


def point_ratios(a: list[Result], b: list[Result]) -> list[PointRatio]:
    """Every result of B that has a match in A, as B / A."""
    by_key = {_key(r): r for r in pool_launches(a) if r.samples}
    found = []
    for rb in pool_launches(b):
        ra = by_key.get(_key(rb))
        if ra is not None and rb.samples:
            found.append(PointRatio(ra, rb, ratio(rb.samples, ra.samples)))
    return found


def geometric_mean_ratio(ratios: list[float], resamples: int = 2000, seed: int = 0) -> Ratio:
    """Geometric mean of ratios with a percentile-bootstrap interval over them."""
    logs = np.log(np.asarray(ratios, dtype=float))
    rng = np.random.default_rng(seed)
    means = rng.choice(logs, size=(resamples, len(logs))).mean(axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    return Ratio(
        median=float(np.exp(logs.mean())),
        ci_lo=float(np.exp(np.quantile(means, tail))),
        ci_hi=float(np.exp(np.quantile(means, 1.0 - tail))),
    )


def benchmark_ratios(points: list[PointRatio]) -> dict[tuple[str, str], tuple[Ratio, int]]:
    """(benchmark, metric) -> (geometric mean ratio with interval, number of points)."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for p in points:
        groups[(p.b.benchmark, p.b.metric)].append(p.ratio.median)
    return {key: (geometric_mean_ratio(values), len(values)) for key, values in groups.items()}


def thread_series(points: list[PointRatio]) -> dict[tuple[str, str, str], list[PointRatio]]:
    """Points that differ only in their thread count, as series: (benchmark, metric, the other
    parameters) -> points by threads (the ratio against thread count)."""
    series: dict[tuple[str, str, str], list[PointRatio]] = defaultdict(list)
    for p in points:
        if p.threads is None:
            continue
        others = {k: v for k, v in p.b.params.items() if k not in ("threads", "cpus")}
        series[(p.b.benchmark, p.b.metric, json.dumps(others, sort_keys=True))].append(p)
    return {
        key: sorted(members, key=lambda p: p.threads or 0)
        for key, members in series.items()
        if len({p.threads for p in members}) > 1
    }
