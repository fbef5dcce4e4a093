"""What a sweep's stored launches say: speedup and parallel efficiency per metric (per phase of an
application proxy), run-to-run variability per point, and the policies side by side.

Definitions (stated once, used by the CLI table and the report):
- a point is one (benchmark, fixed parameters, metric, threads, bind, mempolicy); its launches are
  the sweep's repetitions, each a stored result with its own samples;
- speedup S(p) = T(p0) / T(p) for times (unit s), R(p) / R(p0) for rates, where p0 is the
  smallest thread count of the same policy (1 when swept from 1), with a bootstrap 95 % interval
  of the ratio of medians over the pooled samples (stats.ratio);
- parallel efficiency E(p) = S(p) * p0 / p;
- run-to-run variability: the coefficient of variation (sample standard deviation / mean) and the
  spread ((max - min) / median) of the launches' medians, and their distribution.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from perfatlas.common.stats import Ratio, Summary, ratio, summarize
from perfatlas.common.units import format_value
from perfatlas.store.result import Result

# Parameters that a sweep sets per point (placement.params_for derives cpus and node from them).
AXES = ("threads", "bind", "mempolicy", "cpus", "node")


@dataclass(frozen=True)
class SweepPoint:
    benchmark: str
    metric: str
    unit: str
    fixed: str  # the parameters every point of the sweep shares, as JSON
    threads: int
    bind: str
    mempolicy: str
    launches: tuple[Result, ...]

    @property
    def policy(self) -> str:
        return f"bind={self.bind} mem={self.mempolicy}"

    @property
    def lower_is_better(self) -> bool:
        return self.unit == "s"

    @cached_property
    def samples(self) -> np.ndarray:
        return np.concatenate([np.asarray(r.samples, dtype=float) for r in self.launches])

    @cached_property
    def summary(self) -> Summary:
        return summarize(self.samples)

    @cached_property
    def launch_medians(self) -> np.ndarray:
        return np.array([np.median(r.samples) for r in self.launches])

    @property
    def cv(self) -> float | None:
        """Run-to-run coefficient of variation of the launch medians (None for one launch)."""
        m = self.launch_medians
        return float(np.std(m, ddof=1) / np.mean(m)) if len(m) > 1 and np.mean(m) else None

    @property
    def spread(self) -> float | None:
        m = self.launch_medians
        return float((m.max() - m.min()) / np.median(m)) if len(m) > 1 and np.median(m) else None

    def obtained(self, key: str) -> list:
        return [(r.document.get("sweep") or {}).get("obtained", {}).get(key) for r in self.launches]

    @property
    def migrations(self) -> float | None:
        values = [m for m in self.obtained("migrations") if m is not None]
        return float(np.median(values)) if values else None

    @property
    def remote_fraction(self) -> float | None:
        values = [f for f in self.obtained("remote_fraction") if f is not None]
        return float(np.median(values)) if values else None


def sweep_points(results: list[Result]) -> list[SweepPoint]:
    """The launches of a sweep run grouped into points, in plan order of first appearance."""
    groups: dict[tuple, list[Result]] = defaultdict(list)
    for r in results:
        if "sweep" not in r.document or not r.samples:
            continue
        fixed = {k: v for k, v in r.params.items() if k not in AXES}
        key = (
            r.benchmark,
            r.metric,
            r.unit,
            json.dumps(fixed, sort_keys=True),
            int(r.params["threads"]),
            r.params["bind"],
            r.params["mempolicy"],
        )
        groups[key].append(r)
    points = [SweepPoint(*key, tuple(launches)) for key, launches in groups.items()]
    return sorted(points, key=lambda p: (p.benchmark, p.fixed, p.metric, p.policy, p.threads))


@dataclass(frozen=True)
class Scaling:
    point: SweepPoint
    base: SweepPoint  # the same policy's smallest thread count
    speedup: Ratio

    @property
    def efficiency(self) -> float:
        return self.speedup.median * self.base.threads / self.point.threads


def series_key(point: SweepPoint) -> tuple:
    return (point.benchmark, point.fixed, point.metric, point.policy)


def scaling(points: list[SweepPoint]) -> list[Scaling]:
    """Speedup and efficiency of every point against its policy's smallest thread count."""
    series: dict[tuple, list[SweepPoint]] = defaultdict(list)
    for p in points:
        series[series_key(p)].append(p)
    found = []
    for members in series.values():
        base = min(members, key=lambda p: p.threads)
        for p in sorted(members, key=lambda p: p.threads):
            faster, slower = (base, p) if p.lower_is_better else (p, base)
            found.append(Scaling(p, base, ratio(faster.samples, slower.samples)))
    return found


def fastest_and_best_scaling(scalings: list[Scaling]) -> dict[tuple, tuple[str, str]]:
    """Per (benchmark, fixed, metric, threads): the fastest policy and the best-scaling one
    (they differ, as the Sun Performance Library study shows)."""
    by_threads: dict[tuple, list[Scaling]] = defaultdict(list)
    for s in scalings:
        p = s.point
        by_threads[(p.benchmark, p.fixed, p.metric, p.threads)].append(s)
    verdicts = {}
    for key, members in by_threads.items():
        sign = 1 if members[0].point.lower_is_better else -1
        fastest = min(members, key=lambda s: sign * s.point.summary.median)
        best = max(members, key=lambda s: s.efficiency)
        verdicts[key] = (fastest.point.policy, best.point.policy)
    return verdicts


def print_sweep(results: list[Result]) -> None:
    """The sweep's table on the terminal: every point with its speedup and variability (nothing
    when the results hold no sweep)."""
    from perfatlas.terminal.run_views import console, titled_table

    scalings = scaling(sweep_points(results))
    if not scalings:
        return
    table = titled_table(
        "sweep: median of all launches (95 % CI), speedup against the policy's fewest threads, "
        "run-to-run CV of the launch medians",
        "benchmark",
        "metric",
        "policy",
        "threads",
        "median",
        "speedup",
        "efficiency",
        "launch CV",
        "migrations",
        right=(3, 4, 5, 6, 7, 8),
    )
    for s in scalings:
        p = s.point
        host = json.loads(p.fixed).get("host")  # a node of a run on several (perfatlas.cluster)
        table.add_row(
            f"{p.benchmark} on {host}" if host else p.benchmark,
            p.metric,
            p.policy,
            str(p.threads),
            format_value(p.summary.median, p.unit),
            f"{s.speedup.median:.2f} [{s.speedup.ci_lo:.2f}, {s.speedup.ci_hi:.2f}]",
            f"{s.efficiency:.0%}",
            "-" if p.cv is None else f"{p.cv:.1%}",
            "-" if p.migrations is None else f"{p.migrations:g}",
        )
    console.print(table)
