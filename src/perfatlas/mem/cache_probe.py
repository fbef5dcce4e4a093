"""The effective last-level cache: how much of it this program can use, from a short latency probe.

hwloc reports the LLC the hardware (or the hypervisor) declares. In a VM that figure can be far
from what a program gets: on a 2-core Xeon VM hwloc reported 480 MiB of L3 while the latency curve
reached memory after a few MiB, so sweeps sized as multiples of the LLC went to gigabytes. The
suites therefore size from the *effective* LLC, measured here, bounded by hwloc's.

Method (the lmbench lat_mem_rd curve, McVoy & Staelin 1996, read at one threshold):
1. One launch of pa-mem-latency measures a size series with the `page` chain (random lines
   within pages, pages in random order: caches and memory without TLB misses) from 128 KiB to
   8 MiB at 2 points per doubling, then one reference working set of 4x hwloc's LLC (at most
   1 GiB and a quarter of memory), whose latency M is memory's; the whole series twice over, 5
   samples of 2 ms per point. The fastest sample of each size counts, since interference (other
   tenants streaming through a shared cache, preemption) only ever slows a sample down; and the
   reference is measured in the same launch and passes as the curve, so that a burst of
   interference cannot inflate M alone (on the shared development VM a reference measured on
   its own came out at 63 to 129 ns from one probe to the next, and an inflated M put the
   threshold above memory's real latency).
2. The effective LLC is the largest working set before the curve rises for good to M/2 or more:
   the last point below M/2 after which no point falls below it again (so one slow sample in the
   cache region does not end it). Past the LLC's capacity the chase misses ever more often; at
   M/2 about half its loads go to memory, which happens within ~2x of a level's capacity.
3. The series continues in further launches (also twice over), 8x larger each (never beyond
   hwloc's LLC), only while its last two points are still below M/2.
4. Bounded by hwloc's LLC (no program gets more than the hardware has). When memory cannot be told
   apart (the reference fits under hwloc's LLC, or even the smallest point is as slow as memory),
   hwloc's figure is used and the record says why.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from perfatlas.common.errors import UserError
from perfatlas.common.units import format_size, geometric_sizes
from perfatlas.launch.native import run_json
from perfatlas.machine.topology import Machine

FIRST_BYTES = 128 * 2**10  # above any L1: the probe looks for the last level, not the first
FIRST_CHUNK_TO = 8 * 2**20  # the first launch's series ends here (the VM's effective L3 and more)
CHUNK_GROWTH = 8  # each further launch extends the series 8x
PER_DOUBLING = 2
REFERENCE_FACTOR = 4  # memory's latency at 4x hwloc's LLC ...
REFERENCE_MAX = 2**30  # ... at most 1 GiB ...
REFERENCE_MEMORY_SHARE = 0.25  # ... and a quarter of memory
MEMORY_SHARE = 0.5  # the LLC ends where latency rises for good to half of memory's
SAMPLES, MIN_SAMPLE_TIME = 5, "2ms"
PASSES = 2  # the series is measured twice over, the faster of each point kept


@dataclass(frozen=True)
class LlcSizing:
    """hwloc's LLC, the effective one, and which of them sizes the run."""

    hwloc_bytes: int
    effective_bytes: int | None  # None where it could not be measured
    used: str  # "probe" or "hwloc"
    why: str  # one sentence
    memory_latency_ns: float | None = None
    curve: list[tuple[int, float]] = field(default_factory=list)  # (bytes, fastest ns)
    seconds: float = 0.0  # what the probe cost
    launches: int = 0

    @property
    def bytes(self) -> int:
        """The LLC that sizes follow."""
        if self.used == "probe" and self.effective_bytes:
            return self.effective_bytes
        return self.hwloc_bytes

    def record(self) -> dict:
        """The run context's "llc" entry (perfatlas.machine.topology.Machine.llc_sizing)."""
        record = asdict(self)
        record["curve"] = [[size, latency] for size, latency in self.curve]
        return record

    def sentence(self) -> str:
        effective = format_size(self.effective_bytes) if self.effective_bytes else "not measured"
        chosen = "effective" if self.used == "probe" else "hwloc's"
        return (
            f"LLC: hwloc {format_size(self.hwloc_bytes)}, effective {effective}; sizes use "
            f"{chosen} ({self.why})"
        )


def not_probed(machine: Machine, why: str = "not probed") -> LlcSizing:
    """hwloc's LLC as the sizing one: plans computed without measuring (perfatlas run --plan)."""
    return LlcSizing(machine.last_level_cache_bytes, None, "hwloc", why)


def effective_llc(
    curve: list[tuple[int, float]], memory_latency_ns: float, hwloc_bytes: int
) -> tuple[int | None, str]:
    """The effective LLC of a latency curve (bytes ascending, ns) and one sentence; None
    when the curve shows no cache level before memory. Bounded by hwloc's LLC."""
    threshold = MEMORY_SHARE * memory_latency_ns
    points = sorted(curve)
    if not points:
        return None, "no working set was measured"
    rise = len(points)  # index from which every point is at half memory's latency or more
    while rise > 0 and points[rise - 1][1] >= threshold:
        rise -= 1
    if rise == 0:
        return None, (
            f"even {format_size(points[0][0])} is as slow as memory "
            f"({points[0][1]:.3g} ns vs {memory_latency_ns:.3g} ns): no cache level to size from"
        )
    found = points[rise - 1][0]
    if found >= hwloc_bytes:
        return hwloc_bytes, "the latency curve stays in cache up to hwloc's LLC"
    beyond = (
        f"{format_size(points[rise][0])} is at {points[rise][1]:.3g} ns"
        if rise < len(points)
        else "the series ended there"
    )
    return found, (
        f"latency rises for good to half of memory's ({memory_latency_ns:.3g} ns) past "
        f"{format_size(found)}: {beyond}"
    )


def _latencies(sizes: list[int], cpu: int, passes: int = 1) -> list[tuple[int, float]]:
    """One launch of pa-mem-latency over a size series, `passes` times over: (bytes, fastest
    sample's ns) per size, ascending. Interference (other tenants streaming through the shared
    cache, a preempted sample) only makes a sample slower, so the fastest of the samples of every
    pass is what the cache holds when left alone; passes a second apart see other bursts."""
    documents = run_json(
        "pa-mem-latency",
        [
            f"bytes={','.join(str(s) for s in sizes * passes)}",
            "chain=page",
            f"cpus={cpu}",
            f"samples={SAMPLES}",
            f"min_sample_time={MIN_SAMPLE_TIME}",
        ],
    )
    fastest: dict[int, float] = {}
    for d in documents if isinstance(documents, list) else [documents]:
        if d.get("samples"):
            size, ns = int(d["params"]["bytes"]), float(min(d["samples"]["latency_ns"]))
            fastest[size] = min(ns, fastest.get(size, ns))
    return sorted(fastest.items())


def probe(machine: Machine) -> LlcSizing:
    """Measure the effective LLC (seconds: a few launches of the latency probe)."""
    started = time.monotonic()
    hwloc = machine.last_level_cache_bytes
    cpu = machine.cpus_for_threads(1)[0]
    reference = int(
        min(REFERENCE_FACTOR * hwloc, REFERENCE_MAX, REFERENCE_MEMORY_SHARE * machine.memory_bytes)
    )
    reference -= reference % 4096
    low, high = FIRST_BYTES, min(FIRST_CHUNK_TO, hwloc)
    first = dict(_latencies([*geometric_sizes(low, high, PER_DOUBLING), reference], cpu, PASSES))
    if reference not in first:
        return LlcSizing(
            hwloc, None, "hwloc", "the latency probe measured nothing (not measurable)"
        )
    memory = first.pop(reference)
    curve = sorted(first.items())
    launches = 1
    while high < hwloc and not _reached_memory(curve, memory):
        low, high = high, min(high * CHUNK_GROWTH, hwloc)
        sizes = [size for size in geometric_sizes(low, high, PER_DOUBLING) if size > low]
        curve += _latencies(sizes, cpu, PASSES)
        launches += 1
    seconds = time.monotonic() - started
    if reference <= hwloc:
        found = None
        why = (
            f"memory's latency is not reachable here: {format_size(reference)} (the most the "
            f"probe may use) fits under hwloc's {format_size(hwloc)}"
        )
    else:
        found, why = effective_llc(curve + [(reference, memory)], memory, hwloc)
    return LlcSizing(
        hwloc,
        found,
        "probe" if found else "hwloc",
        why,
        memory,
        curve + [(reference, memory)],
        round(seconds, 2),
        launches,
    )


def _reached_memory(curve: list[tuple[int, float]], memory_latency_ns: float) -> bool:
    """The series' last two points are at half memory's latency or more: the LLC lies behind."""
    tail = sorted(curve)[-2:]
    return len(tail) == 2 and all(
        latency >= MEMORY_SHARE * memory_latency_ns for _, latency in tail
    )


def sizing_for(choice: str, machine: Machine) -> LlcSizing:
    """`perfatlas run --llc`: 'probe' (measure it), 'hwloc' (hwloc's figure), or a size given by
    the user (an effective LLC measured before, e.g. by 'perfatlas doctor')."""
    from perfatlas.common.units import parse_size

    hwloc = machine.last_level_cache_bytes
    if choice == "probe":
        return probe(machine)
    if choice == "hwloc":
        return not_probed(machine, "--llc hwloc")
    given = parse_size(choice, "--llc")
    if given <= 0:
        raise UserError(f"--llc {choice} must be probe, hwloc or a size above 0")
    return LlcSizing(hwloc, given, "probe", f"given on the command line (--llc {choice})")
