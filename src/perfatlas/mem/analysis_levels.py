"""Memory levels from a latency-vs-working-set curve: plateaus, boundaries, and hwloc beside them.

Method
------
1. Segment y = log(median latency) into constant pieces by *optimal partitioning* (Jackson et al.,
   "An algorithm for optimal partitioning of data on an interval", IEEE SPL 12(2), 2005): the
   Bellman recursion F(t) = min_{s<t} F(s) + C(y[s:t]) + beta, with C the least-squares cost
   sum (y_i - mean)^2 of one segment, gives the exact minimum of cost + beta * segments in O(n^2).
2. beta is a BIC (Schwarz) penalty for a change in mean with Gaussian noise: each new segment adds
   two parameters (its mean and its start), so beta = 2 sigma^2 ln n (Yao 1988). sigma is estimated
   robustly from the first differences of y (MAD / sqrt 2: steps are few, so most differences are
   noise) and floored at NOISE_FLOOR, because a real plateau drifts by a few per cent (page
   colouring, prefetchers, TLB reach) more than its samples scatter. So noise does not split a
   plateau while a real level step (1.5x or more in latency) costs far more than beta.
   Adjacent segments whose points together stay within FLAT are then joined: on a quiet machine
   the points scatter less than a plateau drifts, and the exact partition cuts a short plateau
   (two working sets one doubling apart, as a VM's share of a shared L3 gives at one point per
   doubling) into single points, which step 3 would drop as transitions.
3. Adjacent segments of `min_points` or more working sets whose latencies differ by less than
   `min_step` are one level cut by an outlier, a drift or a slow ramp: they are merged with what
   lies between. Short segments after the last of them join it when within `min_step` too (the
   sweep ended while the latency still crept up, as memory's does past the last cache).
4. Such a segment is a plateau if it spans more than MIN_EXTENT in working set; the others are
   transitions (the ramp between two levels, where part of the working set still hits the faster
   level, comes out of step 1 as a staircase of short segments). Cache capacities of successive
   levels differ by 4x or more, so a real level spans several doublings. One doubling is enough
   if the latency stays within FLAT over it (a ramp rises faster; a sparse sweep, or a shared
   cache that the hypervisor or other tenants keep small, gives such short levels); the last
   segment may be shorter still, because the sweep ended on it.
5. A plateau's latency is the median of its points' medians. Its capacity estimate is the largest
   working set still on it (a lower bound, exact to the sweep's spacing); the boundary drawn in
   the report is the geometric midpoint between that working set and the first one beyond it.
6. Plateaus are matched to hwloc's data/unified caches by size (one to one, in order, within a
   factor MATCH_FACTOR of the boundary), then those left over pair up in order (a level that
   holds much less than hwloc says, e.g. a shared L3 in a VM, is still that level). The last
   plateau is "memory" when it starts beyond the largest cache or holds working sets of
   MEMORY_FACTOR times its size, which no cache can serve (an L3 that noisy neighbours keep full
   shows as memory reached early, and hwloc's L3 as "not detected"). Detected levels and hwloc's
   caches are reported side by side, so a disagreement is visible, not hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from perfatlas.machine.caches import Cache

NOISE_FLOOR = 0.02  # relative latency drift tolerated inside one plateau (sigma of log latency)
MIN_POINTS = 2  # working sets a plateau needs; fewer is a transition
MIN_EXTENT = 2.2  # a plateau spans more than one doubling of working set (the last may be shorter)
ONE_DOUBLING = 1.9  # two working sets one doubling apart (sizes are rounded to 64 bytes)
FLAT = 1.15  # ... or one doubling, if its latencies stay within this ratio
MIN_STEP = 1.5  # adjacent levels differ at least this much in latency (real ones: 2x and more)
MATCH_FACTOR = 2.5  # a plateau matches an hwloc cache whose size is within this factor
MIN_SERIES_POINTS = 5  # fewer working sets than this: no level detection
MEMORY_FACTOR = 2  # a plateau holding working sets of 2x the largest cache is memory's


@dataclass(frozen=True)
class Level:
    """One plateau of the latency curve."""

    name: str  # "L1", "L2", ... (from the matched hwloc cache), "memory", or "plateau N"
    latency_ns: float  # median of the plateau's point medians
    first_bytes: int  # smallest working set on the plateau
    last_bytes: int  # largest working set on the plateau
    next_bytes: int | None  # first working set beyond it; None when the sweep ended on it
    first_index: int  # indices into the series sorted by working set
    last_index: int
    cache: Cache | None  # the matched hwloc cache
    matched_by: str | None = None  # "size" (within MATCH_FACTOR) or "order" (size disagrees)

    @property
    def capacity_bytes(self) -> int | None:
        """Estimated capacity: the largest working set still on the plateau (None for memory)."""
        return None if self.name == "memory" else self.last_bytes

    @property
    def boundary_bytes(self) -> float | None:
        """Where the level ends: geometric midpoint of the last working set on and the first off."""
        if self.next_bytes is None:
            return None
        return math.sqrt(self.last_bytes * self.next_bytes)

    @property
    def points(self) -> int:
        return self.last_index - self.first_index + 1


# -- segmentation --------------------------------------------------------------------------------
def optimal_partition(values: np.ndarray, penalty: float) -> list[tuple[int, int]]:
    """Segments [start, stop) minimizing sum of squared deviations + penalty per segment (exact)."""
    y = np.asarray(values, dtype=float)
    n = len(y)
    sum1 = np.concatenate(([0.0], np.cumsum(y)))
    sum2 = np.concatenate(([0.0], np.cumsum(y * y)))

    def cost(start: int, stop: int) -> float:
        total = sum1[stop] - sum1[start]
        return max(0.0, sum2[stop] - sum2[start] - total * total / (stop - start))

    best = [-penalty] + [math.inf] * n  # best[t]: optimal cost of y[:t]
    last_start = [0] * (n + 1)
    for stop in range(1, n + 1):
        for start in range(stop):
            candidate = best[start] + cost(start, stop) + penalty
            if candidate < best[stop]:
                best[stop], last_start[stop] = candidate, start
    segments = []
    stop = n
    while stop > 0:
        segments.append((last_start[stop], stop))
        stop = last_start[stop]
    return segments[::-1]


def noise_sigma(log_values: np.ndarray, floor: float = NOISE_FLOOR) -> float:
    """Robust noise level of log latency: MAD of first differences / sqrt 2, at least `floor`."""
    diffs = np.diff(log_values)
    if len(diffs) < 2:
        return floor
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    return max(floor, 1.4826 * mad / math.sqrt(2.0))


def bic_penalty(log_values: np.ndarray, floor: float = NOISE_FLOOR) -> float:
    """beta = 2 sigma^2 ln n: two parameters (mean, start) per extra segment (Schwarz / Yao)."""
    n = max(len(log_values), 2)
    return 2.0 * noise_sigma(log_values, floor) ** 2 * math.log(n)


# -- plateaus ------------------------------------------------------------------------------------
def join_flat_runs(
    segments: list[tuple[int, int]], latencies: np.ndarray, flat: float = FLAT
) -> list[tuple[int, int]]:
    """Adjacent segments [start, stop) whose points together stay within `flat` become one.

    Where the points scatter less than a plateau drifts (a quiet machine, or two working sets one
    doubling apart), the exact partition cuts a plateau into single points, and single points are
    transitions: a level of two points, e.g. a VM's share of a shared L3, would be lost.
    """
    joined: list[tuple[int, int]] = []
    for start, stop in segments:
        if joined:
            first = joined[-1][0]
            run = latencies[first:stop]
            if run.max() / run.min() <= flat:
                joined[-1] = (first, stop)
                continue
        joined.append((start, stop))
    return joined


def plateau_spans(
    sizes: np.ndarray,
    latencies: np.ndarray,
    min_points: int = MIN_POINTS,
    min_step: float = MIN_STEP,
    floor: float = NOISE_FLOOR,
) -> list[tuple[int, int]]:
    """Index ranges [first, last] of the plateaus (sizes ascending), in working-set order."""
    y = np.log(np.asarray(latencies, dtype=float))
    segments = join_flat_runs(optimal_partition(y, bic_penalty(y, floor)), latencies)
    spans = [(a, b - 1) for a, b in segments if b - a >= min_points]
    while len(spans) > 1:  # step 3: rejoin a level cut in two, closest pair first
        medians = [float(np.median(latencies[a : b + 1])) for a, b in spans]
        steps = [max(m1, m2) / min(m1, m2) for m1, m2 in zip(medians, medians[1:])]
        closest = int(np.argmin(steps))
        if steps[closest] >= min_step:
            break
        spans[closest : closest + 2] = [(spans[closest][0], spans[closest + 1][1])]
    last = len(y) - 1
    if spans and spans[-1][1] < last:  # the sweep ends in short segments: still the same level?
        a, b = spans[-1]
        level = float(np.median(latencies[a : b + 1]))
        tail = latencies[b + 1 :]
        if np.all(np.maximum(tail / level, level / tail) < min_step):
            spans[-1] = (a, last)

    def is_level(a: int, b: int) -> bool:
        extent, rise = sizes[b] / sizes[a], latencies[a : b + 1].max() / latencies[a : b + 1].min()
        return extent > MIN_EXTENT or (extent > ONE_DOUBLING and rise <= FLAT) or b == last

    return [(a, b) for a, b in spans if is_level(a, b)]


def _match(
    spans: list[tuple[int, int]], sizes: np.ndarray, caches: list[Cache]
) -> dict[int, tuple[Cache, str]]:
    """Plateau index -> (hwloc cache, "size" or "order"), one to one and order preserving.

    First by size, nearest in log size first, within MATCH_FACTOR. Then plateaus and caches left
    over between two size matches (or before the first, after the last) pair up in order when
    they are equally many: the level is there, but holds less (or more) than hwloc says.
    """
    pairs = []
    for p, (_, last) in enumerate(spans):
        if last + 1 < len(sizes):
            boundary = math.sqrt(sizes[last] * sizes[last + 1])
            distances = [abs(math.log(c.size_bytes / boundary)) for c in caches]
        else:  # the sweep ended on this plateau: its capacity is at least sizes[last]
            distances = [max(0.0, math.log(sizes[last] / c.size_bytes)) for c in caches]
        pairs += [(d, p, c) for c, d in enumerate(distances) if d <= math.log(MATCH_FACTOR)]
    chosen: dict[int, tuple[int, str]] = {}
    for _, p, c in sorted(pairs):
        used = {d for d, _ in chosen.values()}
        if p in chosen or c in used:
            continue
        if all((p < q) == (c < d) for q, (d, _) in chosen.items()):
            chosen[p] = (c, "size")
    anchors = [(-1, -1), *sorted((p, c) for p, (c, _) in chosen.items()), (len(spans), len(caches))]
    for (p0, c0), (p1, c1) in zip(anchors, anchors[1:]):
        if p1 - p0 == c1 - c0 > 1:
            for k in range(1, p1 - p0):
                chosen[p0 + k] = (c0 + k, "order")
    return {p: (caches[c], how) for p, (c, how) in chosen.items()}


def detect_levels(
    sizes: list[int] | np.ndarray,
    latencies: list[float] | np.ndarray,
    caches: list[Cache] | None = None,
    min_points: int = MIN_POINTS,
    min_step: float = MIN_STEP,
) -> list[Level]:
    """The memory levels of one latency series (sizes ascending, one median latency per size)."""
    order = np.argsort(np.asarray(sizes))
    sizes = np.asarray(sizes, dtype=float)[order]
    latencies = np.asarray(latencies, dtype=float)[order]
    if len(sizes) < MIN_SERIES_POINTS or not np.all(latencies > 0):
        return []
    spans = plateau_spans(sizes, latencies, min_points, min_step)
    caches = caches or []
    largest = max((c.size_bytes for c in caches), default=None)
    memory = None  # index of the memory plateau: the last, if no cache can hold its working sets
    if largest is not None and spans:
        first, last = spans[-1]
        if sizes[first] > largest or sizes[last] >= MEMORY_FACTOR * largest:
            memory = len(spans) - 1
    matched = _match(spans[:memory] if memory is not None else spans, sizes, caches)
    levels = []
    for p, (first, last) in enumerate(spans):
        cache, matched_by = matched.get(p, (None, None))
        if p == memory:
            name = "memory"
        elif cache is not None:
            name = f"L{cache.level}"
        elif not caches:
            name = f"L{p + 1}"
        else:
            name = f"plateau {p + 1}"
        levels.append(
            Level(
                name=name,
                latency_ns=float(np.median(latencies[first : last + 1])),
                first_bytes=int(sizes[first]),
                last_bytes=int(sizes[last]),
                next_bytes=int(sizes[last + 1]) if last + 1 < len(sizes) else None,
                first_index=first,
                last_index=last,
                cache=cache,
                matched_by=matched_by,
            )
        )
    return levels


@dataclass(frozen=True)
class Comparison:
    """One row of 'detected vs hwloc': a level, a cache, or both."""

    name: str
    level: Level | None
    cache: Cache | None

    @property
    def ratio(self) -> float | None:
        """Detected capacity / hwloc size (1.0: the curve agrees with hwloc)."""
        if self.level is None or self.cache is None or self.level.capacity_bytes is None:
            return None
        return self.level.capacity_bytes / self.cache.size_bytes


def compare_with_hwloc(levels: list[Level], caches: list[Cache]) -> list[Comparison]:
    """Detected levels and hwloc caches side by side, by size; each appears exactly once."""
    rows = [Comparison(level.name, level, level.cache) for level in levels]
    matched = {level.cache for level in levels if level.cache is not None}
    for cache in caches:
        if cache not in matched:
            rows.append(Comparison(f"L{cache.level}", None, cache))

    def key(row: Comparison) -> float:
        if row.level is not None:
            return row.level.last_bytes if row.level.name != "memory" else math.inf
        return row.cache.size_bytes

    return sorted(rows, key=key)
