"""Where one launch of a measurement stands, point by point, while its documents arrive.

A size series (bytes=A,B,...) is one launch that writes its points' documents in order, one or
several per point (two measuring PUs, contention's load levels); each names its point in its
params. A point is finished once a document of a later point arrives or the launch ends; when
the launch dies, the point it died in is named (docs/contract.md, Series).
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks.benchmark import series_param


class SeriesPoints:
    """The points of one launch (a single point when the measurement is no series)."""

    def __init__(self, benchmark: Any, params: dict[str, Any]):
        self.benchmark = benchmark
        self.param = series_param(params, benchmark)
        self.values: list[Any] = params[self.param.name] if self.param else [None]
        self.per_point: list[int] = []  # documents seen of each point reached so far

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def documents(self) -> int:
        return sum(self.per_point)

    def arrived(self, document: dict) -> int:
        """Count a document; returns how many points it shows finished (0 or more)."""
        index = self._index(document)
        finished = max(index + 1 - len(self.per_point), 0) if self.per_point else index
        self.per_point += [0] * (index + 1 - len(self.per_point))
        self.per_point[index] += 1
        return finished

    def failed_at(self) -> int:
        """The index of the point the launch stopped in: the last one reached when it has fewer
        documents than the first point had, else the next."""
        if not self.per_point:
            return 0
        partial = len(self.per_point) > 1 and self.per_point[-1] < self.per_point[0]
        return min(len(self.per_point) - (1 if partial else 0), self.count - 1)

    def label(self, index: int) -> str:
        """point 3 of 5 (bytes=1MiB); 'the launch' when there is no series."""
        if self.param is None:
            return "the launch"
        value = self.param.format(self.values[index])
        return f"point {index + 1} of {self.count} ({self.param.name}={value})"

    def _index(self, document: dict) -> int:
        """The point a document belongs to: its own series value, at or after the last one."""
        if self.param is None:
            return 0
        value = (document.get("params") or {}).get(self.param.name)
        start = max(len(self.per_point) - 1, 0)
        for index in range(start, self.count):
            if self.values[index] == value:
                return index
        return start
