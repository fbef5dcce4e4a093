"""Times read off a measured curve: piecewise linear in log-log between measured message sizes,
held at the smallest, and beyond the largest extrapolated at its time per byte (a link's
bandwidth does not rise past what was measured)."""

from __future__ import annotations

import bisect
import math

MEDIAN, LOW, HIGH = 0, 1, 2  # a point's figures: [median, interval low, interval high]


def between(x: float, xs: list[float], ys: list[float]) -> float:
    """Linear interpolation of (xs, ys) at x, held at the ends."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    share = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + share * (ys[i] - ys[i - 1])


def message_ns(curve: list[list[float]], size: float, figure: int = MEDIAN) -> float:
    """One-way time of a message of `size` bytes on a ping-pong curve ([[bytes, ns, ...]]; the
    figure of each point after its size: MEDIAN, LOW or HIGH): log-log interpolation between
    measured sizes (0 B counted as 1 B); beyond the largest, its time plus the extra bytes at
    its time per byte."""
    sizes = [max(float(point[0]), 1.0) for point in curve]
    times = [float(point[1 + figure]) for point in curve]
    if size > sizes[-1]:
        return times[-1] * size / sizes[-1]
    logs = [math.log(s) for s in sizes]
    return math.exp(between(math.log(max(size, 1.0)), logs, [math.log(t) for t in times]))
