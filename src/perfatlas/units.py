"""Parse and format the quantities users type: sizes (binary suffixes), durations, CPU lists."""

from __future__ import annotations

import re

from perfatlas.errors import UserError

_SIZE_FACTORS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kib": 2**10,
    "m": 2**20,
    "mib": 2**20,
    "g": 2**30,
    "gib": 2**30,
    "t": 2**40,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_DURATION_FACTORS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_NUMBER_WITH_UNIT = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE
)


def parse_size(text: str | int, what: str = "size") -> int:
    """'1GiB' -> 1073741824. KiB/MiB/GiB (and K/M/G) are binary; kB/MB/GB are SI."""
    if isinstance(text, int):
        return text
    match = _NUMBER_WITH_UNIT.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_FACTORS:
        raise UserError(f"{what} '{text}' is not a size: write e.g. 4096, 64KiB, 256MiB or 1GiB")
    value = float(match.group(1)) * _SIZE_FACTORS[unit]
    if value != int(value):
        raise UserError(f"{what} '{text}' is not a whole number of bytes")
    return int(value)


def geometric_sizes(low: int, high: int, per_doubling: int = 1) -> list[int]:
    """low..high with per_doubling points per 2x, rounded to 64 bytes (cache lines), ascending."""
    sizes, k = [], 0
    while True:
        size = int(round(low * 2 ** (k / per_doubling) / 64) * 64) or low
        if size > high:
            return sorted(set(sizes))
        sizes.append(size)
        k += 1


def parse_size_series(text: str, what: str = "bytes") -> list[int]:
    """A series of sizes: '16KiB,1MiB' (a list), or '4KiB..64MiB/2' (geometric, 2 points per
    doubling; '/N' may be left out for one per doubling); a single size gives a list of one."""
    text = text.strip()
    if ".." in text:
        bounds, _, per = text.partition("/")
        low_text, _, high_text = bounds.partition("..")
        low, high = parse_size(low_text, what), parse_size(high_text, what)
        try:
            per_doubling = int(per) if per else 1
        except ValueError:
            per_doubling = 0
        if low <= 0 or high < low or per_doubling < 1:
            raise UserError(
                f"{what}='{text}' is not a size series: write FROM..TO/N with 0 < FROM <= TO and "
                "N points per doubling (e.g. 4KiB..64MiB/2)"
            )
        return geometric_sizes(low, high, per_doubling)
    return [parse_size(word, what) for word in text.split(",")]


def format_size(n_bytes: float) -> str:
    """1073741824 -> '1 GiB'; 1536 -> '1.5 KiB' (binary prefixes, as the report labels them)."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n_bytes) >= factor:
            return f"{n_bytes / factor:.4g} {unit}"
    return f"{n_bytes:.4g} B"


def parse_duration(text: str | float, what: str = "duration") -> float:
    """'10s' -> 10.0, '20ms' -> 0.02 (seconds). A bare number is seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    match = _NUMBER_WITH_UNIT.match(str(text))
    unit = (match.group(2).lower() or "s") if match else None
    if not match or unit not in _DURATION_FACTORS:
        raise UserError(f"{what} '{text}' is not a duration: write e.g. 500ms, 10s or 2min")
    return float(match.group(1)) * _DURATION_FACTORS[unit]


def parse_cpu_list(text: str | list[int], what: str = "cpus") -> list[int]:
    """'0-2,5' -> [0, 1, 2, 5] (the Linux cpulist format)."""
    if isinstance(text, list):
        return text
    cpus: list[int] = []
    for part in str(text).split(","):
        bounds = part.strip().split("-")
        if len(bounds) > 2 or not all(b.strip().isdigit() for b in bounds):
            raise UserError(f"{what} '{text}' is not a CPU list: write e.g. 0, 0,1 or 0-3")
        low, high = int(bounds[0]), int(bounds[-1])
        if high < low:
            raise UserError(f"{what} '{text}' has a descending range {part}")
        cpus.extend(range(low, high + 1))
    return cpus


def format_cpu_list(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    parts: list[str] = []
    for cpu in sorted(set(cpus)):
        if parts and cpu == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{cpu}"
        else:
            parts.append(str(cpu))
    return ",".join(parts)


def format_value(value: float | None, unit: str) -> str:
    """A measured value with its unit, SI-scaled (docs/architecture.md, Units: GB = 10^9 bytes)."""
    if value is None:
        return "-"
    if unit == "byte/s":
        for prefix, factor in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(value) >= factor:
                return f"{value / factor:.4g} {prefix}B/s"
        return f"{value:.4g} B/s"
    if unit == "ns" and abs(value) >= 1e6:
        return f"{value / 1e6:.4g} ms"
    if unit == "ns" and abs(value) >= 1e3:
        return f"{value / 1e3:.4g} us"
    return f"{value:.4g} {unit}".strip()
