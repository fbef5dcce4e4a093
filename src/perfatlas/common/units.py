"""Parse and format the quantities users type: sizes (binary suffixes), durations, CPU lists.

Every value is checked for finiteness and range before it is used, against limits that name
themselves in the sentence that refuses them (docs/safety/store-and-values.md): a size at most
MAX_BYTES, a duration at most MAX_SECONDS, a CPU number (or thread count) at most MAX_CPU, checked
before a range is expanded, and a size series of at most MAX_SERIES_POINTS sizes.
"""

from __future__ import annotations

import math
import re

from perfatlas.common.errors import UserError

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
    r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE | re.ASCII
)
_WHOLE = re.compile(r"^[0-9]{1,20}$", re.ASCII)

MAX_BYTES = 2**60  # 1 EiB: more than any machine's memory, far below a 64-bit count
MAX_SECONDS = 7 * 86400.0  # one week: longer than any measurement or scenario perfatlas makes
MAX_CPU = (
    8191  # Linux's largest CPU number (NR_CPUS is at most 8192); also the largest thread count
)
MAX_SERIES_POINTS = 1000  # sizes one series may hold


def parse_size(text: str | int, what: str = "size") -> int:
    """'1GiB' -> 1073741824. KiB/MiB/GiB (and K/M/G) are binary; kB/MB/GB are SI."""
    if isinstance(text, int) and not isinstance(text, bool):
        return _size_in_range(text, text, what)
    match = _NUMBER_WITH_UNIT.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_FACTORS:
        raise UserError(f"{what} '{text}' is not a size: write e.g. 4096, 64KiB, 256MiB or 1GiB")
    value = float(match.group(1)) * _SIZE_FACTORS[unit]
    _size_in_range(value, text, what)
    if value != int(value):
        raise UserError(f"{what} '{text}' is not a whole number of bytes")
    return int(value)


def _a_number(value: float, text: object, what: str) -> None:
    if math.isnan(value):
        raise UserError(f"{what} '{text}' is not a number")


def _size_in_range(value: float, text: object, what: str) -> int:
    _a_number(value, text, what)
    if not math.isfinite(value) or value > MAX_BYTES:
        raise UserError(f"{what} '{text}' is more than 1 EiB (2^60 bytes), the largest size taken")
    if value < 0:
        raise UserError(f"{what} '{text}' is negative")
    return int(value)


def geometric_sizes(low: int, high: int, per_doubling: int = 1) -> list[int]:
    """low..high with per_doubling points per 2x, rounded to 64 bytes (cache lines), ascending;
    at most MAX_SERIES_POINTS of them (counted before any is made)."""
    if low < 1 or high < low or per_doubling < 1:
        raise UserError(
            f"a size series needs 0 < from <= to and per_doubling >= 1, not "
            f"{low}..{high}/{per_doubling}"
        )
    if math.log2(high / low) * per_doubling + 1 > MAX_SERIES_POINTS:
        raise UserError(
            f"the size series {format_size(low)}..{format_size(high)} with {per_doubling} points "
            f"per doubling has more than {MAX_SERIES_POINTS} sizes, the most one series takes"
        )
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
        per_doubling = int(per) if _WHOLE.match(per.strip()) else (0 if per else 1)
        if low <= 0 or high < low or per_doubling < 1:
            raise UserError(
                f"{what}='{text}' is not a size series: write FROM..TO/N with 0 < FROM <= TO and "
                "N points per doubling (e.g. 4KiB..64MiB/2)"
            )
        return geometric_sizes(low, high, per_doubling)
    return [parse_size(word, what) for word in split_series(text, what, "sizes")]


def split_series(text: str, what: str, points: str = "values") -> list[str]:
    """The words of a listed series ('0,50,100'), at most MAX_SERIES_POINTS of them; each is
    then parsed as one value of the parameter."""
    words = [word.strip() for word in text.split(",")]
    if len(words) > MAX_SERIES_POINTS:
        raise UserError(
            f"{what} lists {len(words)} {points}, more than {MAX_SERIES_POINTS}, the most one "
            "series takes"
        )
    return words


def format_size(n_bytes: float) -> str:
    """1073741824 -> '1 GiB'; 1536 -> '1.5 KiB' (binary prefixes, as the report labels them)."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n_bytes) >= factor:
            return f"{n_bytes / factor:.4g} {unit}"
    return f"{n_bytes:.4g} B"


def parse_duration(text: str | float, what: str = "duration") -> float:
    """'10s' -> 10.0, '20ms' -> 0.02 (seconds). A bare number is seconds; at most a week."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        match = _NUMBER_WITH_UNIT.match(str(text))
        unit = (match.group(2).lower() or "s") if match else None
        if not match or unit not in _DURATION_FACTORS:
            raise UserError(f"{what} '{text}' is not a duration: write e.g. 500ms, 10s or 2min")
        seconds = float(match.group(1)) * _DURATION_FACTORS[unit]
    _a_number(seconds, text, what)
    if not math.isfinite(seconds) or seconds > MAX_SECONDS:
        raise UserError(f"{what} '{text}' is longer than a week, the longest duration taken")
    if seconds < 0:
        raise UserError(f"{what} '{text}' is negative")
    return seconds


def parse_cpu_list(text: str | list[int], what: str = "cpus") -> list[int]:
    """'0-2,5' -> [0, 1, 2, 5] (the Linux cpulist format). Every number is at most MAX_CPU,
    checked before a range is expanded."""
    if isinstance(text, list):
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in text):
            raise UserError(f"{what} {text!r} is not a list of CPU numbers")
        return [_cpu_in_range(c, text, what) for c in text]
    cpus: list[int] = []
    for part in str(text).split(","):
        bounds = [b.strip() for b in part.split("-")]
        if len(bounds) > 2 or not all(_WHOLE.match(b) for b in bounds):
            raise UserError(f"{what} '{text}' is not a CPU list: write e.g. 0, 0,1 or 0-3")
        low, high = (_cpu_in_range(int(b), text, what) for b in (bounds[0], bounds[-1]))
        if high < low:
            raise UserError(f"{what} '{text}' has a descending range {part}")
        cpus.extend(range(low, high + 1))
        if len(cpus) > MAX_CPU + 1:
            raise UserError(f"{what} '{text}' lists more than {MAX_CPU + 1} CPUs")
    return cpus


def _cpu_in_range(cpu: int, text: object, what: str) -> int:
    if not 0 <= cpu <= MAX_CPU:
        raise UserError(
            f"{what} '{text}' names {cpu}, not between 0 and {MAX_CPU}: Linux numbers at most "
            "8192 CPUs (NR_CPUS), and perfatlas starts no more threads than that"
        )
    return cpu


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


def format_number(value: float, digits: int = 3) -> str:
    """`digits` significant digits, but never an exponent for figures up to 10^6: 1160, not 1.16e+03."""
    if 10**digits <= abs(value) < 1e6:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"
