"""A run's results grouped into series for drawing (a curve per series), and the context read
back from their documents (binding, pages, page size) that a plot states beside its lines."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfatlas.common.units import format_cpu_list, format_size, parse_cpu_list
from perfatlas.store.result import Result


# -- series ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Curve:
    """One line to draw: medians with their 95 % CI, x in bytes (or any positive quantity)."""

    label: str
    x: np.ndarray
    median: np.ndarray
    ci_lo: np.ndarray
    ci_hi: np.ndarray
    color: tuple | str | None = None
    linestyle: str = "-"
    marker: str = "o"


@dataclass
class Series:
    """Results that differ only in working set, sorted by it: one line of a plot."""

    key: tuple
    label: str
    results: list[Result]

    @property
    def sizes(self) -> np.ndarray:
        return np.array([r.params["bytes"] for r in self.results], dtype=float)

    def values(self, field: str, scale: float = 1.0) -> np.ndarray:
        return np.array([getattr(r, field) for r in self.results], dtype=float) * scale

    def curve(self, scale: float = 1.0, label: str | None = None, **style) -> Curve:
        return Curve(
            label or self.label,
            self.sizes,
            self.values("median", scale),
            self.values("ci_lo", scale),
            self.values("ci_hi", scale),
            **style,
        )

    def context(self) -> str:
        return placement_context([r.document for r in self.results], [r.n for r in self.results])


def group_series(
    results: list[Result], key: Callable[[Result], Hashable], label: Callable[[Any], str]
) -> list[Series]:
    """Results grouped by key (first appearance order), each group sorted by working set."""
    groups: dict[Hashable, list[Result]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    return [
        Series(
            k if isinstance(k, tuple) else (k,),
            label(k),
            sorted(rs, key=lambda r: r.params["bytes"]),
        )
        for k, rs in groups.items()
    ]


# -- context read back from the documents ----------------------------------------------------------
def _distinct(values: list[str]) -> str:
    unique = list(dict.fromkeys(v for v in values if v))
    if not unique:
        return ""
    return (
        unique[0]
        if len(unique) == 1
        else " / ".join(unique[:3]) + (" ..." if len(unique) > 3 else "")
    )


def binding_text(placement: dict) -> str:
    """'cpu 0 (bound: 0)' per thread, or what was applied when it differs from what was asked."""
    threads = placement.get("threads") or []
    if not threads:
        return ""
    requested = [t.get("cpu_requested") for t in threads]
    allowed = [str(t.get("cpus_allowed", "?")) for t in threads]
    exact = all(a != "?" and parse_cpu_list(a) == [r] for r, a in zip(requested, allowed))
    asked = format_cpu_list([r for r in requested if r is not None])
    if exact:
        return f"{len(threads)} thread{'s' * (len(threads) > 1)} bound to cpu {asked} (read back)"
    return f"threads asked cpu {asked}, allowed {', '.join(allowed)} (NOT bound as asked)"


def pages_text(placement: dict) -> str:
    on_node = placement.get("pages_on_node") or {}
    parts = [f"node {node} {share:.0%}" for node, share in sorted(on_node.items())]
    text = f"pages on {', '.join(parts)}" if parts else ""
    policy = placement.get("mempolicy")
    return f"{policy} policy, {text}" if policy and text else policy or text


def page_size_text(placement: dict) -> str:
    page = placement.get("page_bytes")
    if not page:
        return ""
    huge = placement.get("huge_page_fraction")
    text = f"{format_size(page)} pages"
    if page > 4096 and huge is not None:
        text += f" ({huge:.0%} of buffer on huge pages)"
    return text


def placement_context(documents: list[dict], counts: list[int]) -> str:
    """One line: binding read back, memory placement, page size, samples per point."""
    placements = [d.get("placement") or {} for d in documents]
    parts = [
        _distinct([binding_text(p) for p in placements]),
        _distinct([pages_text(p) for p in placements]),
        _distinct([page_size_text(p) for p in placements]),
    ]
    if counts:
        low, high = min(counts), max(counts)
        parts.append(f"{low} samples/point" if low == high else f"{low}-{high} samples/point")
    return " · ".join(p for p in parts if p)
