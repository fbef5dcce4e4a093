"""The loaded-latency curves of a run: latency against the bandwidth the injectors achieved, and
where the memory system saturates (no drawing here).

Every point of a `delay` series holds three metrics taken over the same samples: the loaded
latency, the idle latency of the samples interleaved with them (injectors spinning), and the
injected bandwidth. A curve's idle latency pools the idle samples of all its points. The
saturation point is the first point, in order of increasing measured bandwidth, whose loaded /
idle ratio of medians has the lower end of its 95 % bootstrap interval at or above
SATURATION_RATIO: the latency has at least doubled, with confidence (MLC and McCalpin call this
the knee of the curve; a threshold on the ratio is reproducible where a fitted knee is not).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from perfatlas.common.stats import Ratio, Summary, ratio, summarize
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

BENCHMARK = "mem.loaded_latency"
SATURATION_RATIO = 2.0  # loaded / idle latency that marks saturation
POINT_KEYS = ("delay",)  # what varies along one curve


@dataclass(frozen=True)
class LoadedPoint:
    delay_ns: int
    latency: Result  # loaded
    idle: Result
    bandwidth: Result  # injected, byte/s
    slowdown: Ratio  # loaded / idle latency, from the point's own interleaved samples


@dataclass(frozen=True)
class LoadedCurve:
    mix: str
    cpu: int
    injectors: list[int]
    points: list[LoadedPoint]  # by increasing measured bandwidth
    idle: Summary  # every point's idle samples pooled
    node: str = "local"  # of the chased buffer (the native document's params)
    inject_node: str = "same"  # of the injectors' buffers; same: as node

    @property
    def label(self) -> str:
        label = f"mix={self.mix}, cpu {self.cpu}, {len(self.injectors)} injector(s)"
        if (self.node, self.inject_node) == ("local", "same"):
            return label
        injected = self.node if self.inject_node == "same" else self.inject_node
        return f"{label}, chased memory {self.node}, injected {injected}"

    @property
    def saturation(self) -> LoadedPoint | None:
        """The first point whose latency at least doubled (lower CI bound >= SATURATION_RATIO)."""
        return next((p for p in self.points if p.slowdown.ci_lo >= SATURATION_RATIO), None)

    @property
    def peak(self) -> LoadedPoint:
        """The point of the highest measured bandwidth."""
        return self.points[-1]


def _curve_key(params: dict) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in POINT_KEYS}, sort_keys=True)


def loaded_curves(data: RunData) -> list[LoadedCurve]:
    """One curve per mix and placement of the run's mem.loaded_latency results."""
    by_point: dict[str, dict[int, dict[str, Result]]] = {}
    for r in data.measured(BENCHMARK):
        point = by_point.setdefault(_curve_key(r.params), {})
        point.setdefault(int(r.params.get("delay", 0)), {})[r.metric] = r
    curves = []
    for points in by_point.values():
        whole = [
            (delay, m)
            for delay, m in points.items()
            if {"latency_ns", "idle_latency_ns", "injected_Bps"} <= set(m)
        ]
        if not whole:
            continue
        made = [
            LoadedPoint(
                delay,
                m["latency_ns"],
                m["idle_latency_ns"],
                m["injected_Bps"],
                ratio(m["latency_ns"].samples, m["idle_latency_ns"].samples),
            )
            for delay, m in whole
        ]
        made.sort(key=lambda p: (p.bandwidth.median or 0.0, -p.delay_ns))
        params = made[0].latency.params
        curves.append(
            LoadedCurve(
                str(params.get("mix", "read")),
                int(params.get("cpu", 0)),
                list(params.get("injectors") or []),
                made,
                summarize([v for p in made for v in p.idle.samples]),
                str(params.get("node", "local")),
                str(params.get("inject_node", "same")),
            )
        )
    return sorted(curves, key=lambda c: (c.mix, c.cpu, c.injectors, c.node, c.inject_node))
