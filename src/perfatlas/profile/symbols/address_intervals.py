"""Address intervals [start, end) that may nest, each with a value: the innermost (latest
starting) one that holds an address, by bisection over the starts and the running maximum of
the ends (so that an interval starting earlier and reaching past the address is still found)."""

from __future__ import annotations

from bisect import bisect_right


class Intervals:
    """[start, end) intervals with a value, that may nest: the innermost that holds an address."""

    def __init__(self) -> None:
        self._items: list[tuple[int, int, object]] = []
        self._starts: list[int] = []
        self._reach: list[int] = []  # the largest end of the items up to each one

    def add(self, start: int, end: int, value: object) -> None:
        # Address 0 is where linkers leave code of discarded sections (a tombstone, not code).
        if 0 < start < end:
            self._items.append((start, end, value))
            self._starts = []

    def find(self, address: int) -> object | None:
        if not self._starts and self._items:
            self._items.sort(key=lambda item: (item[0], -item[1]))
            self._starts = [item[0] for item in self._items]
            reach = 0
            self._reach = [reach := max(reach, item[1]) for item in self._items]
        at = bisect_right(self._starts, address) - 1
        while at >= 0 and self._reach[at] > address:
            start, end, value = self._items[at]
            if address < end:
                return value
            at -= 1
        return None
