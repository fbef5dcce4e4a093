"""Program synthesis: a program file for pa-parbench (one kernel invocation per line) that lasts a
target runtime on the dedicated machine and has a target behaviour -- average transfer rate
(bytes the kernels name per second), flop rate, write fraction (stored bytes over all bytes) at
a thread count -- spread evenly over its runtime with some variation around the average.

Method. The runtime is cut into slices of random length (50-200 ms; longer when the candidate
variants' line overhead is large, so that it stays a small part of a slice). Slice k asks for
the target rates times a factor f_k = 1 + variation u_k (u_k uniform in [-1, 1], the factors
then scaled so that their time-weighted mean is exactly 1). Within a slice, y_i is the share of
the slice's time spent in the passes of variant i; the slice's rates are linear in y:

    sum_i y_i B_i = B_k,   sum_i y_i F_i = F_k,   sum_i y_i (S_i - w B_i) = 0,   sum_i y_i = 1 - O/dt

(B, F, S: a variant's transfer, flop and store rates from the base data; O the overhead --
setup, check, free -- of the lines used, time at zero rate). This is solved as non-negative
least squares (Lawson & Hanson) with each rate row scaled by its target, so errors are relative;
the solution is basic: at most four variants per slice. Variants are drawn from a seeded pool of
12 candidates per slice (variety), or from all candidates when the pool cannot reach the goal.
Repeats are the shares over the pass times, rounded; what rounding and infeasible slices leave
is carried into the next slice's goal (error diffusion), so the whole program hits the target.
Everything is deterministic for a seed. A job may instead give an explicit kernel mix: each
slice then holds every variant of the mix for its share of the slice's time.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

import numpy as np

from perfatlas.common.errors import UserError
from perfatlas.common.units import format_value
from perfatlas.scenario.nnls import nnls
from perfatlas.scenario.variants import Variant

TOLERANCE = 0.02  # the program's predicted rates against the target, relative
SLICE_S = (0.05, 0.2)  # slice length range before the overhead rule below
OVERHEADS_PER_SLICE = 10  # a slice lasts at least 10 typical line overheads
PASS_FRACTION = 0.1  # a candidate's pass and line set-up last at most a tenth of a slice
POOL = 12  # candidates drawn per slice
STARTUP_S = 0.045  # pa-parbench start to its first line (hwloc topology, OpenMP): 43-49 ms here
VARIATION = 0.2
TIME_WEIGHT = 3.0  # the time row counts more than a rate row: slices keep their length


def rate_text(value: float | None, unit: str) -> str:
    """4.2e9 byte/s -> '4.2 GB/s', 1e9 flop/s -> '1 Gflop/s' (SI prefixes)."""
    if unit == "byte/s" or value is None:
        return format_value(value, unit)
    if not unit:
        return f"{value:.3g}"
    for prefix, factor in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= factor:
            return f"{value / factor:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


@dataclass(frozen=True)
class Target:
    transfer_rate: float | None = None  # byte/s, over all threads
    flop_rate: float | None = None  # flop/s
    write_fraction: float | None = None  # stored bytes / bytes named

    def describe(self) -> str:
        parts = [
            f"transfer rate {rate_text(self.transfer_rate, 'byte/s')}"
            if self.transfer_rate is not None
            else "",
            f"flop rate {rate_text(self.flop_rate, 'flop/s')}"
            if self.flop_rate is not None
            else "",
            f"write fraction {self.write_fraction:.3g}" if self.write_fraction is not None else "",
        ]
        return ", ".join(p for p in parts if p) or "no rates"


@dataclass(frozen=True)
class Line:
    variant: Variant
    repeat: int
    slice: int

    @property
    def seconds(self) -> float:
        return self.variant.overhead_s + self.repeat * self.variant.pass_s

    def text(self) -> str:
        v = self.variant
        return (
            f"kernel={v.kernel} bytes={v.bytes} stride={v.stride} threads={v.threads} "
            f"repeat={self.repeat}"
        )


@dataclass(frozen=True)
class Slice:
    duration_s: float
    factor: float  # this slice's rates are the target's times this
    pool: tuple[Variant, ...]  # what it was solved over (a refinement re-solves over these)


@dataclass
class Program:
    threads: int
    runtime_s: float  # the target
    seed: int
    variation: float
    target: Target | None = None
    mix: tuple[tuple[Variant, float], ...] = ()  # (variant, share of the time), when explicit
    startup_s: float = STARTUP_S
    slices: list[Slice] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)

    @property
    def predicted_s(self) -> float:
        return self.startup_s + sum(line.seconds for line in self.lines)

    def behaviour(self) -> dict[str, float]:
        """Predicted runtime and rates over the whole runtime (startup and overheads at rate 0)."""
        seconds = self.predicted_s
        named = sum(line.repeat * line.variant.bytes_per_pass for line in self.lines)
        stored = sum(line.repeat * line.variant.store_bytes_per_pass for line in self.lines)
        flops = sum(line.repeat * line.variant.flops_per_pass for line in self.lines)
        return {
            "runtime_s": seconds,
            "transfer_rate": named / seconds,
            "flop_rate": flops / seconds,
            "write_fraction": stored / named if named else 0.0,
        }

    def variants(self) -> list[Variant]:
        return list({line.variant.key: line.variant for line in self.lines}.values())

    def text(self, title: str) -> str:
        """The program file: a header saying what it is for, then one line per invocation."""
        b = self.behaviour()
        asked = (
            self.target.describe()
            if self.target
            else "explicit mix " + ", ".join(f"{v.label} {share:.0%}" for v, share in self.mix)
        )
        header = [
            f"# perfatlas scenario program: {title}",
            f"# asked: runtime {self.runtime_s:.4g} s, {asked}, {self.threads} thread(s)",
            f"# predicted on the dedicated machine: runtime {b['runtime_s']:.4g} s, "
            f"transfer rate {rate_text(b['transfer_rate'], 'byte/s')}, flop rate "
            f"{rate_text(b['flop_rate'], 'flop/s')}, write fraction {b['write_fraction']:.3g}",
            f"# {len(self.slices)} slices, variation {self.variation:.0%}, seed {self.seed} "
            "(perfatlas.scenario.synthesis)",
        ]
        body, current = [], -1
        for line in self.lines:
            if line.slice != current:
                current = line.slice
                piece = self.slices[current]
                body.append(
                    f"# slice {current} ({piece.duration_s:.3f} s, rates x{piece.factor:.2f})"
                )
            body.append(line.text())
        return "\n".join(header + body) + "\n"


# -- limits --------------------------------------------------------------------------------------
def maximum_rates(candidates: list[Variant]) -> dict[str, tuple[float, Variant]]:
    """The highest transfer rate, flop rate and write fraction among the candidates."""

    def write_fraction(v: Variant) -> float:
        return v.store_bytes_per_pass / v.bytes_per_pass if v.bytes_per_pass else 0.0

    measures = {
        "transfer_rate": lambda v: v.transfer_rate,
        "flop_rate": lambda v: v.flop_rate,
        "write_fraction": write_fraction,
    }
    return {
        name: (measure(best), best)
        for name, measure in measures.items()
        for best in [max(candidates, key=measure)]
    }


def check_reachable(target: Target, candidates: list[Variant], threads: int, where: str) -> None:
    """One sentence naming the limit when a rate is above what any candidate does alone."""
    if not candidates:
        raise UserError(f"{where}: the base data holds no kernel variant with {threads} thread(s)")
    highest = maximum_rates(candidates)
    units = {"transfer_rate": "byte/s", "flop_rate": "flop/s", "write_fraction": ""}
    for name, unit in units.items():
        asked = getattr(target, name)
        if asked is None:
            continue
        limit, best = highest[name]
        if asked < 0 or (name == "write_fraction" and asked > 1):
            raise UserError(f"{where}: {name.replace('_', ' ')} {asked:g} is out of range")
        if asked > limit * (1 + 1e-9):
            what = name.replace("_", " ")
            raise UserError(
                f"{where}: {what} {rate_text(asked, unit)} is above the "
                f"{rate_text(limit, unit)} that the base data shows this machine can do with "
                f"{threads} thread(s) (the highest, {best.label})"
            )


# -- slices --------------------------------------------------------------------------------------
def slice_bounds(candidates: list[Variant]) -> tuple[float, float]:
    """50-200 ms, stretched so that a slice lasts many typical line overheads."""
    typical = float(np.median([v.overhead_s for v in candidates]))
    low = max(SLICE_S[0], OVERHEADS_PER_SLICE * typical)
    return low, low * SLICE_S[1] / SLICE_S[0]


def usable_candidates(candidates: list[Variant]) -> list[Variant]:
    """Those whose pass is short enough to mix finely and whose line set-up is small: each at
    most a tenth of the shortest slice. (A 67 MB copy, 67 ms of set-up, in 50-200 ms slices
    would make the program last twice its target.)"""
    if not candidates:
        return []
    limit = PASS_FRACTION * slice_bounds(candidates)[0]
    return [v for v in candidates if v.pass_s <= limit and v.overhead_s <= limit]


def cut_slices(seconds: float, low: float, high: float, rng: random.Random) -> list[float]:
    durations, total = [], 0.0
    while total < seconds:
        durations.append(rng.uniform(low, high))
        total += durations[-1]
    durations[-1] -= total - seconds
    if len(durations) > 1 and durations[-1] < low / 2:
        last = durations.pop()
        durations[-1] += last
    return durations


def variation_factors(durations: list[float], variation: float, rng: random.Random) -> list[float]:
    """1 + variation u, u uniform in [-1, 1], scaled to a time-weighted mean of exactly 1."""
    raw = [1.0 + variation * rng.uniform(-1.0, 1.0) for _ in durations]
    mean = sum(f * d for f, d in zip(raw, durations)) / sum(durations)
    return [f / mean for f in raw]


# -- one slice -----------------------------------------------------------------------------------
def _rates(variants: list[Variant], target: Target) -> list[tuple[np.ndarray, float | None]]:
    """The rate rows of the system: (rate of each variant, the asked average or None). The
    write fraction w is the row S - w B, asked to average 0 (linear in the shares)."""
    w = target.write_fraction
    return [
        (np.array([v.transfer_rate for v in variants]), target.transfer_rate),
        (np.array([v.flop_rate for v in variants]), target.flop_rate),
        (
            np.array([v.store_rate - (w or 0.0) * v.transfer_rate for v in variants]),
            None if w is None else 0.0,
        ),
    ]


def solve_slice(
    pool: list[Variant], target: Target, goals: list[float | None], seconds: float
) -> tuple[dict[int, float], float]:
    """Seconds of passes per pool index for a slice of `seconds` whose rows must reach `goals`
    (amounts: bytes, flops, stored - w named bytes); returns them and the largest relative miss."""
    rows, rhs, scales = [], [], []
    for (rate, _), goal in zip(_rates(pool, target), goals):
        if goal is None:
            continue
        asked = goal / seconds
        scale = max(abs(asked), 1e-3 * float(np.abs(rate).max()), 1e-30)
        rows.append(rate / scale)
        rhs.append(asked / scale)
        scales.append(scale)
    overhead = 0.0
    chosen: dict[int, float] = {}
    miss = float("inf")
    for _ in range(3):  # the lines used decide the overhead, which decides the time left
        busy = max(0.2, 1.0 - overhead / seconds)
        a = np.vstack(rows + [np.full(len(pool), TIME_WEIGHT)])
        b = np.array(rhs + [TIME_WEIGHT * busy])
        shares = nnls(a, b)
        chosen = {i: share * seconds for i, share in enumerate(shares) if share > 1e-12}
        reached = a[:-1] @ shares if rows else np.zeros(0)
        miss = float(np.max(np.abs(reached - b[:-1]), initial=0.0))
        new_overhead = sum(pool[i].overhead_s for i in chosen)
        if abs(new_overhead - overhead) < 1e-6:
            break
        overhead = new_overhead
    return chosen, miss


# -- the program -----------------------------------------------------------------------------------
@dataclass
class _Tally:
    seconds: float = 0.0
    named: float = 0.0
    flops: float = 0.0
    stored: float = 0.0

    def add(self, line: Line) -> None:
        v = line.variant
        self.seconds += line.seconds
        self.named += line.repeat * v.bytes_per_pass
        self.flops += line.repeat * v.flops_per_pass
        self.stored += line.repeat * v.store_bytes_per_pass


def _lines(allocation: dict[Variant, float], index: int) -> list[Line]:
    lines = []
    for variant, seconds in allocation.items():
        repeat = round(seconds / variant.pass_s)
        if repeat >= 1:
            lines.append(Line(variant, repeat, index))
    return lines


def _fill(program: Program, candidates: list[Variant], rng: random.Random | None) -> None:
    """Lines for every slice of `program`, the goals diffused from slice to slice."""
    target = program.target
    rates = (
        [r for _, r in _rates(candidates, target)] if target else [None, None, None]
    )  # the asked averages
    whole = program.runtime_s
    weighted_total = sum(s.factor * s.duration_s for s in program.slices)
    tally, elapsed, weighted = _Tally(seconds=program.startup_s), program.startup_s, 0.0
    program.lines = []
    for index, piece in enumerate(program.slices):
        elapsed += piece.duration_s
        weighted += piece.factor * piece.duration_s
        seconds = max(elapsed - tally.seconds, 0.25 * piece.duration_s)
        if program.mix:
            allocation = _mix_allocation(program.mix, piece.pool, seconds)
        else:
            share = weighted / weighted_total
            w = target.write_fraction or 0.0
            done = (tally.named, tally.flops, tally.stored - w * tally.named)
            goals = [None if r is None else r * whole * share - d for r, d in zip(rates, done)]
            allocation = _target_allocation(piece, candidates, target, goals, seconds, rng)
        for line in _lines(allocation, index):
            program.lines.append(line)
            tally.add(line)


def _mix_allocation(
    mix: tuple[tuple[Variant, float], ...], pool: tuple[Variant, ...], seconds: float
) -> dict[Variant, float]:
    overhead = sum(v.overhead_s for v in pool)
    busy = max(0.2 * seconds, seconds - overhead)
    shares = {v.key: share for v, share in mix}
    return {v: shares[v.key] * busy for v in pool}


def _target_allocation(
    piece: Slice,
    candidates: list[Variant],
    target: Target,
    goals: list[float | None],
    seconds: float,
    rng: random.Random | None,
) -> dict[Variant, float]:
    pool = list(piece.pool)
    chosen, miss = solve_slice(pool, target, goals, seconds)
    if miss > 1e-3 and rng is not None and len(pool) < len(candidates):
        pool = candidates  # the drawn pool cannot reach this goal: every candidate may
        chosen, miss = solve_slice(pool, target, goals, seconds)
    return {pool[i]: s for i, s in chosen.items()}


def synthesize(
    *,
    runtime_s: float,
    threads: int,
    candidates: list[Variant],
    target: Target | None = None,
    mix: list[tuple[Variant, float]] | None = None,
    seed: int = 1,
    variation: float = VARIATION,
    startup_s: float = STARTUP_S,
    where: str = "job",
) -> Program:
    """A program of `runtime_s` on `threads` threads reaching `target` (or running `mix`)."""
    if (target is None) == (mix is None):
        raise UserError(f"{where}: give a target behaviour or an explicit kernel mix, not both")
    if not math.isfinite(runtime_s):  # the slices would never reach it (scenario.py's limits)
        raise UserError(f"{where}: runtime {runtime_s:g} s is not finite")
    rng = random.Random(seed)
    if mix:
        total = sum(share for _, share in mix)
        mix_norm = tuple((v, share / total) for v, share in mix)
        usable = [v for v, _ in mix_norm]
    else:
        mix_norm = ()
        check_reachable(target, candidates, threads, where)
        usable = usable_candidates(candidates)
        if not usable:
            low = slice_bounds(candidates)[0]
            fastest = min(candidates, key=lambda v: v.pass_s)
            raise UserError(
                f"{where}: every candidate variant's pass lasts longer than {PASS_FRACTION * low:.3g}"
                f" s (the shortest, {fastest.label}, {fastest.pass_s:.3g} s): allow smaller "
                "working sets"
            )
        check_reachable(target, usable, threads, where)
    low, high = slice_bounds(usable)
    if runtime_s <= startup_s + low / 2:
        raise UserError(
            f"{where}: runtime {runtime_s:g} s is too short: the program needs more than "
            f"{startup_s + low / 2:.3g} s (start-up and one slice)"
        )
    durations = cut_slices(runtime_s - startup_s, low, high, rng)
    factors = variation_factors(durations, variation if target else 0.0, rng)
    slices = []
    for duration, factor in zip(durations, factors):
        ordered = sorted(usable, key=lambda v: v.key)
        pool = tuple(rng.sample(ordered, min(POOL, len(ordered)))) if target else tuple(usable)
        slices.append(Slice(duration, factor, pool))
    program = Program(
        threads=threads,
        runtime_s=runtime_s,
        seed=seed,
        variation=variation if target else 0.0,
        target=target,
        mix=mix_norm,
        startup_s=startup_s,
        slices=slices,
    )
    _fill(program, usable, rng)
    if target:
        check_hit(program, where)
    return program


def misses(program: Program) -> dict[str, float]:
    """Relative miss of each asked rate by the predicted program (the runtime's too)."""
    b = program.behaviour()
    found = {"runtime_s": b["runtime_s"] / program.runtime_s - 1.0}
    if program.target:
        for name in ("transfer_rate", "flop_rate", "write_fraction"):
            asked = getattr(program.target, name)
            if asked is not None:
                found[name] = (b[name] - asked) / asked if asked else b[name]
    return found


def check_hit(program: Program, where: str) -> None:
    off = {name: miss for name, miss in misses(program).items() if abs(miss) > TOLERANCE}
    if off:
        b = program.behaviour()
        reached = Target(b["transfer_rate"], b["flop_rate"], b["write_fraction"])
        raise UserError(
            f"{where}: no mix of the base data's {program.threads}-thread variants reaches "
            f"{program.target.describe()} together within {TOLERANCE:.0%} (the closest program "
            f"has {reached.describe()}, runtime {b['runtime_s']:.3g} s)"
        )


def refine(program: Program, measured: dict[tuple, Variant], startup_s: float) -> Program:
    """The program re-solved with pass times and line overheads measured in a dedicated run:
    the same slices over the same variants, repeats recomputed (no new variants)."""
    slices = [
        replace(piece, pool=tuple(measured.get(v.key, v) for v in piece.pool))
        for piece in program.slices
    ]
    mix = tuple((measured.get(v.key, v), share) for v, share in program.mix)
    refined = replace(program, slices=slices, mix=mix, startup_s=startup_s, lines=[])
    if not program.mix:  # re-solve each slice over the variants it used, not a new pool
        used: dict[int, list[Variant]] = {}
        for line in program.lines:
            used.setdefault(line.slice, []).append(measured.get(line.variant.key, line.variant))
        refined.slices = [
            replace(piece, pool=tuple(used.get(i, piece.pool))) for i, piece in enumerate(slices)
        ]
    _fill(refined, [], None)
    return refined
