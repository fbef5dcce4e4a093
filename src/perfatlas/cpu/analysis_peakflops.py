"""cpu.peakflops results as peak rates: one row per precision and ISA, its flop rate per thread
count, and the per-core rate against the nominal clock where the machine states one (the
report's section and the terminal table share these rows)."""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

BENCHMARK = "cpu.peakflops"
ISA_ORDER = ("scalar", "sse", "neon", "avx2", "sve", "avx512")  # narrow to wide
PRECISION_ORDER = ("double", "single")


@dataclass(frozen=True)
class PeakRow:
    """One kernel (precision, ISA): its results by thread count."""

    precision: str
    isa: str
    operations: str  # "fma" or "mul+add"
    lanes: int
    by_threads: dict[int, Result]
    nominal_clock_hz: float | None
    nominal_clock_source: str  # where the clock came from, or why there is none

    @property
    def single_thread(self) -> Result | None:
        return self.by_threads.get(1)

    @property
    def flop_per_cycle(self) -> float | None:
        """One core's median flops per cycle of the nominal clock (None without either)."""
        one = self.single_thread
        if one is None or one.median is None or not self.nominal_clock_hz:
            return None
        return one.median / self.nominal_clock_hz

    @property
    def vector_units(self) -> float | None:
        """flop_per_cycle over one full-width FMA (or mul+add pair) per cycle, 2 x lanes flops:
        how many such operations the core completed per nominal cycle (its FMA pipes x the
        clock's ratio to nominal: 2.0 on two pipes at the nominal clock)."""
        per_cycle = self.flop_per_cycle
        return None if per_cycle is None else vector_operations(per_cycle, self.lanes)


def vector_operations(flop_per_cycle: float, lanes: int) -> float:
    """Full-width FMAs (or mul+add pairs) per cycle: flop per cycle over their 2 x lanes flops."""
    return flop_per_cycle / (2 * lanes)


TSC_SOURCE = (
    "the invariant TSC's rate, which ticks at the nominal (P0, non-turbo) clock on Intel and AMD "
    "CPUs (Intel SDM vol. 3, Time-Stamp Counter; AMD APM vol. 2, TSC)"
)


def nominal_clock(document: dict) -> tuple[float | None, str]:
    """The nominal clock a result's machine states (cpufreq's base_frequency or the model name,
    found by the native program), else the rate of its invariant TSC; else None and why not."""
    derived = document.get("derived", {})
    if derived.get("nominal_clock_hz"):
        return float(derived["nominal_clock_hz"]), str(derived.get("nominal_clock_source", ""))
    timer = document.get("timer") or {}
    if timer.get("tsc_hz") and "invariant" in str(timer.get("source", "")):
        return float(timer["tsc_hz"]), TSC_SOURCE
    return None, str(derived.get("nominal_clock_source", "not reported"))


def _order(isa: str, precision: str) -> tuple[int, int]:
    def rank(value: str, order: tuple[str, ...]) -> int:
        return order.index(value) if value in order else len(order)

    return rank(precision, PRECISION_ORDER), rank(isa, ISA_ORDER)


def peak_rows(data: RunData) -> list[PeakRow]:
    """The measured kernels, double before single, narrow ISA before wide."""
    groups: dict[tuple[str, str], dict[int, Result]] = {}
    for r in data.measured(BENCHMARK, "flop_rate"):
        key = (str(r.params.get("precision")), str(r.params.get("isa")))
        threads = int(r.document.get("derived", {}).get("threads") or r.params.get("threads", 1))
        groups.setdefault(key, {})[threads] = r
    rows = []
    for (precision, isa), by_threads in sorted(
        groups.items(), key=lambda g: _order(g[0][1], g[0][0])
    ):
        document = next(iter(by_threads.values())).document
        derived = document.get("derived", {})
        clock_hz, clock_source = nominal_clock(document)
        rows.append(
            PeakRow(
                precision,
                isa,
                str(derived.get("operations", "")),
                int(derived.get("lanes", 1)),
                dict(sorted(by_threads.items())),
                clock_hz,
                clock_source,
            )
        )
    return rows


def thread_counts(rows: list[PeakRow]) -> list[int]:
    return sorted({t for row in rows for t in row.by_threads})


def unmeasured_kernels(data: RunData) -> list[tuple[str, str, str]]:
    """(precision, isa, why) of the kernels this run could not measure (an ISA the CPU lacks)."""
    found = {
        (str(r.params.get("precision")), str(r.params.get("isa")), r.not_measurable or "")
        for r in data.unmeasurable
        if r.benchmark == BENCHMARK
    }
    return sorted(found, key=lambda k: _order(k[1], k[0]))
