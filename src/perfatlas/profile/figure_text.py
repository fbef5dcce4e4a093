"""How a profile's figures are written in every view (the report, the terminal, JSON): seconds
and fractions alike, regions by their names."""

from __future__ import annotations

import math
import re

from perfatlas.common.units import format_number


def share(part: float | None, whole: float | None) -> float | None:
    """part / whole; None when either is unknown, the whole is 0, or the ratio overflows (a
    document's figures are only checked to lie within +-1e20: docs/safety/profiles.md)."""
    if part is None or not whole:
        return None
    ratio = part / whole
    return ratio if math.isfinite(ratio) else None


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(value) >= factor:
            return f"{format_number(value / factor)} {unit}"
    return f"{format_number(value / 1e-9)} ns" if value else "0 s"


def percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{100 * fraction:.1f} %"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _visible(name: str) -> str:
    """A name as drawn: a control character (a tab, a newline) written as its escape, \\x09."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)


def region_labels(document: dict) -> dict[int, str]:
    """Region id -> its names from the outermost, as given (escaped for HTML or terminal markup
    only when drawn, control characters shown as escapes), joined by " > ": "a/b" at the top
    level and "a" > "b" read differently."""
    regions = {region["id"]: region for region in document["regions"]}

    def names(region: dict) -> list[str]:
        chain = []
        while region["parent"] is not None and len(chain) < len(regions):  # a tree (documents)
            chain.append(_visible(region["name"]) or '""')
            region = regions[region["parent"]]
        return chain[::-1]

    return {id_: " > ".join(names(region)) or "(whole program)" for id_, region in regions.items()}
