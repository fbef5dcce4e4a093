"""What a noise series (pa-noise) says: slowdown, detours, spectrum, and the cost at scale.

Every function takes the raw samples (the single source of truth, as stored) and computes; nothing
here is measured or stored. Times are in ns unless a name says otherwise.

The series (one per measuring PU):
- FWQ (fixed work quantum): the durations t_i of back-to-back quanta of identical work. The
  undisturbed time is t_min = min t_i; quantum i lost detour_i = t_i - t_min; it started at
  sum_{j<i} t_j. Slowdown = sum detour_i / (n t_min).
- FTQ (fixed time quantum): the work units c_k completed in interval k of length T. The
  undisturbed count is c_max; interval k lost (c_max - c_k) / c_max * T of its time. Slowdown =
  sum (c_max - c_k) / sum c_k: the extra time over the time the same work takes undisturbed, the
  same quantity as for FWQ.

The spectrum is that of the lost-time fraction x(t) (0: all time computed, 1: all time lost),
sampled on a uniform grid at the quantum rate. FWQ quanta are not uniformly spaced in time (a
disturbed quantum lasts longer), so the cumulative lost time L(t) -- known at every quantum
boundary and taken as linear inside a quantum -- is differenced on the grid: a detour's time lands
where it happened, spread over its quantum, and sum x * step = sum detour exactly. The power
spectral density is Welch's (Hann window, 50 % overlap, mean removed per segment, one-sided,
density scaling, so that its integral is the variance of x). A line ("harmonic") is a local maximum
of the PSD at least LINE_THRESHOLD times the running median around it, up to 1/8 of the grid rate
(higher, a quantum spans so much of a period that a detour cannot be placed within it: a detour
smeared over its quantum, whose boundaries drift against a periodic source, makes sidebands
there); its amplitude is that of a
sinusoid with the line's band power above the background (A = sqrt(2 P_band)); its share of the
lost time comes from epoch folding, not from the spectrum: x is folded at the line's period
(frequency refined on the full-length periodogram), and the mean profile over one period minus
its median (the aperiodic floor) is the lost time that recurs with that period; share = that /
mean(x). A pattern that recurs every 1/f0 also recurs every k/f0: the share at f0 includes the
lost time of patterns at its multiples, and a pulse train at f0 has the same share at f0 and at
every multiple k f0 where it makes a line; such a line is marked "k x f0". Shares of different
lines therefore overlap and do not add up.

The bulk-synchronous (BSP) model (Petrini, Kerbyson & Pakin, "The case of the missing supercomputer
performance", SC03; Tsafrir et al., "System noise, OS clock ticks, and fine-grained parallel
applications", ICS05; Hoefler, Schneider & Lumsdaine, "Characterizing the influence of system noise
on large-scale applications by simulation", SC10): P processes each compute for g, then
synchronize; a superstep lasts g + max_p X_p, where X_p is the time process p lost to noise during
its g of work. With the X_p independent draws from the noise measured here (every window of g of
undisturbed work in the series -- sliding, one sample apart; see window_losses -- pooled over the
measured PUs, with empirical distribution function F), E[max of P] = integral_0^inf (1 - F(x)^P) dx =
sum_i x_(i) ((i/W)^P - ((i-1)/W)^P) over the W sorted window losses x_(i), and the expected
slowdown is E[max of P] / g. Communication, its own noise, and correlation between processes
(co-scheduled noise, which helps) are left out. For P beyond the number of independent windows
measured the expectation approaches the largest window seen: a lower bound, since a longer run
would see rarer, larger detours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from perfatlas.common.stats import Ratio, block_bootstrap_ratio_of_sums

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
GRANULARITIES_NS = (1e6, 10e6)  # BSP superstep compute time g: 1 ms and 10 ms
PROCESSES = (1, 10, 100, 1000, 10_000, 100_000)
LINE_THRESHOLD = 10.0  # a line stands this many times above the running median of the PSD
BACKGROUND_BINS = 16  # half-width of the running median that is the PSD's background
LINE_HALF_WIDTH = 3  # bins either side of a line in its band power (Hann main lobe: 2)
MAX_LINES = 8
MAX_FOLD_BINS = 256
MIN_FOLD_CELLS = 8  # grid cells per period below which folding cannot separate a pulse
BASELINE_PERCENTILE = 0.0  # FWQ's undisturbed quantum: this percentile of the quanta (0: t_min)


@dataclass(frozen=True)
class NoiseSeries:
    """One PU's noise: a time series of samples (FWQ quanta or FTQ intervals)."""

    method: str
    start_ns: np.ndarray  # when each sample started, from the start of the series
    length_ns: np.ndarray  # its wall-clock length
    lost_ns: np.ndarray  # the time it lost to detours
    quantum_ns: float  # FWQ: the undisturbed quantum t_min; FTQ: the interval T

    @property
    def work_ns(self) -> np.ndarray:
        """Undisturbed time of each sample's work."""
        return self.length_ns - self.lost_ns

    @property
    def duration_ns(self) -> float:
        return float(self.start_ns[-1] + self.length_ns[-1])


def fwq_series(
    quantum_ns: np.ndarray | list[float], baseline_percentile: float = BASELINE_PERCENTILE
) -> NoiseSeries:
    """FWQ durations (back to back) -> the series. The undisturbed quantum is the
    `baseline_percentile` of the durations (0: the fastest, t_min); a quantum faster than it lost
    nothing (bench/noise_bias.py measures the bias of each choice against a planted load)."""
    durations = np.asarray(quantum_ns, dtype=float)
    if baseline_percentile > 0:
        baseline = float(np.percentile(durations, baseline_percentile))
    else:
        baseline = float(durations.min())
    ends = np.cumsum(durations)
    lost = np.clip(durations - baseline, 0.0, None)
    return NoiseSeries("fwq", ends - durations, durations, lost, baseline)


def ftq_series(work_per_interval: np.ndarray | list[float], interval_ns: float) -> NoiseSeries:
    """FTQ counts per interval -> the series; c_max is the undisturbed count."""
    counts = np.asarray(work_per_interval, dtype=float)
    most = float(counts.max())
    lost = (most - counts) / most * interval_ns if most > 0 else np.full(len(counts), interval_ns)
    starts = np.arange(len(counts), dtype=float) * interval_ns
    return NoiseSeries("ftq", starts, np.full(len(counts), float(interval_ns)), lost, interval_ns)


# -- slowdown ---------------------------------------------------------------------------------------
def slowdown(series: NoiseSeries) -> float:
    """Time lost / undisturbed time (0.03 = the work took 3 % longer than without noise)."""
    return float(series.lost_ns.sum() / series.work_ns.sum())


def slowdown_interval(series: NoiseSeries, blocks: int = 50) -> Ratio:
    """The slowdown with a 95 % moving-block bootstrap interval over `blocks` stretches of time."""
    return block_bootstrap_ratio_of_sums(series.lost_ns, series.work_ns, blocks=blocks)


# -- detours ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Detours:
    """The distribution of the time each sample lost."""

    samples: int
    percentiles_ns: dict[float, float]  # PERCENTILES -> lost time
    largest_ns: float
    mean_ns: float
    tail_share: float  # share of all lost time in the worst 1 % of the samples
    edges_ns: np.ndarray  # log-spaced histogram bin edges
    counts: np.ndarray
    below: int  # samples that lost less than the first edge (the timer's resolution)


def detours(series: NoiseSeries, resolution_ns: float = 1.0, bins_per_decade: int = 8) -> Detours:
    """Percentiles, the largest, and a log-binned histogram from the timer resolution up."""
    lost = series.lost_ns
    largest = float(lost.max())
    low = max(resolution_ns, 1e-3)
    high = max(largest, low) * 1.0001
    bins = max(1, math.ceil(math.log10(high / low) * bins_per_decade))
    edges = np.geomspace(low, high, bins + 1)
    counts, _ = np.histogram(lost, bins=edges)
    worst = np.sort(lost)[::-1][: math.ceil(len(lost) / 100)]  # the worst 1 % of the samples
    total = float(lost.sum())
    return Detours(
        samples=len(lost),
        percentiles_ns={p: float(np.percentile(lost, p)) for p in PERCENTILES},
        largest_ns=largest,
        mean_ns=float(lost.mean()),
        tail_share=float(worst.sum() / total) if total > 0 else 0.0,
        edges_ns=edges,
        counts=counts,
        below=int(np.count_nonzero(lost < low)),
    )


# -- spectrum ---------------------------------------------------------------------------------------
def lost_fraction(series: NoiseSeries) -> tuple[np.ndarray, float]:
    """The lost-time fraction on a uniform grid of step = the quantum: (x, step_ns)."""
    step = series.quantum_ns
    if series.method == "ftq":
        return series.lost_ns / step, step
    boundaries = np.concatenate([[0.0], series.start_ns + series.length_ns])
    cumulative = np.concatenate([[0.0], np.cumsum(series.lost_ns)])
    cells = int(boundaries[-1] // step)
    grid = np.arange(cells + 1, dtype=float) * step
    return np.diff(np.interp(grid, boundaries, cumulative)) / step, step


def welch(x: np.ndarray, rate_hz: float, segment: int) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Welch PSD (Hann, 50 % overlap, segment means removed): (frequencies, density)."""
    window = np.hanning(segment)
    pieces = sliding_window_view(x, segment)[:: segment // 2]
    pieces = (pieces - pieces.mean(axis=1, keepdims=True)) * window
    power = (np.abs(np.fft.rfft(pieces, axis=1)) ** 2).mean(axis=0)
    density = power / (rate_hz * np.sum(window**2))
    density[1 : -1 if segment % 2 == 0 else None] *= 2.0  # one-sided: fold negative frequencies
    return np.fft.rfftfreq(segment, 1.0 / rate_hz), density


def welch_segment(n: int) -> int | None:
    """The largest power of two with at least 7 half-overlapping segments in n (None if < 64)."""
    if n < 256:
        return None
    return min(2 ** int(math.log2(n / 4)), 2**16)


@dataclass(frozen=True)
class Line:
    """A spectral line of the lost-time fraction."""

    frequency_hz: float
    amplitude: float  # of a sinusoid with the line's band power (0.01: 1 % of the time)
    power_share: float  # the line's band power / the variance of x
    share: float | None  # share of all lost time recurring with period 1/frequency (folding)
    fundamental_hz: float | None = None  # a lower listed line f0 of which this is order x f0
    order: int = 1


@dataclass(frozen=True)
class Spectrum:
    frequency_hz: np.ndarray
    psd: np.ndarray  # (fraction of time)^2 / Hz
    background: np.ndarray  # running median of psd
    resolution_hz: float
    rate_hz: float  # of the grid: 1 / quantum
    line_limit_hz: float  # lines are looked for up to here (a period of MIN_FOLD_CELLS quanta)
    lines: list[Line]


def _running_median(values: np.ndarray, half_width: int) -> np.ndarray:
    padded = np.pad(values, half_width, mode="edge")
    return np.median(sliding_window_view(padded, 2 * half_width + 1), axis=1)


def _periodogram(x: np.ndarray, rate_hz: float) -> tuple[np.ndarray, float]:
    """The full-length periodogram (Hann window, zero padded to at least 4x, a power of two):
    (power, bin width in Hz). Its bins are a small part of 1/duration apart, fine enough to place
    a line for folding over the whole series."""
    padded = 1 << math.ceil(math.log2(4 * len(x)))
    power = np.abs(np.fft.rfft((x - x.mean()) * np.hanning(len(x)), padded)) ** 2
    return power, rate_hz / padded


def _refine(power: np.ndarray, step_hz: float, around_hz: float, half_width_hz: float) -> float:
    """The periodogram's peak near `around_hz`, by parabolic interpolation of log power."""
    low = max(1, int((around_hz - half_width_hz) / step_hz))
    high = min(len(power) - 2, int((around_hz + half_width_hz) / step_hz) + 1)
    if high <= low:
        return around_hz
    k = low + int(np.argmax(power[low : high + 1]))
    a, b, c = np.log(power[k - 1 : k + 2] + 1e-300)
    offset = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c < 0 else 0.0
    return (k + offset) * step_hz


def periodic_share(x: np.ndarray, step_ns: float, frequency_hz: float) -> float | None:
    """Share of the lost time in x that recurs with period 1/frequency (epoch folding).

    x is folded at the period into one phase bin per grid cell of the period (at most
    MAX_FOLD_BINS, with at least 20 cells in every bin). The mean profile minus its median bin
    (the aperiodic floor), averaged over the bins weighted by the cells each holds, is the lost
    time that comes back every period; over mean(x) it is the share. Aperiodic detours that land
    in the periodic bins count too (on random detours alone the share stays within a few percent
    of 0), and a pattern that fills more than half the period raises the floor and is
    undercounted. None where a period spans fewer than MIN_FOLD_CELLS grid cells, or nothing was
    lost."""
    cells = 1e9 / (frequency_hz * step_ns)
    total = float(x.mean())
    if cells < MIN_FOLD_CELLS or total <= 0:
        return None
    # about one cell per bin (whole cells where the period is locked to the grid), and enough
    # cells in every bin to average
    bins = int(min(MAX_FOLD_BINS, round(cells), len(x) // 20))
    times_s = (np.arange(len(x)) + 0.5) * step_ns * 1e-9
    phase = np.minimum((np.mod(times_s * frequency_hz, 1.0) * bins).astype(int), bins - 1)
    occupancy = np.bincount(phase, minlength=bins)
    seen = occupancy > 0
    profile = np.bincount(phase, weights=x, minlength=bins)[seen] / occupancy[seen]
    weights = occupancy[seen] / occupancy.sum()
    periodic = np.dot(profile - np.median(profile), weights)
    return float(min(1.0, max(0.0, periodic / total)))


def _candidate_lines(
    frequency: np.ndarray,
    psd: np.ndarray,
    background: np.ndarray,
    variance: float,
    highest_hz: float,
) -> list[tuple[float, float, float]]:
    """(frequency, amplitude, power share) of local maxima LINE_THRESHOLD above the background
    up to `highest_hz`, strongest first, at most 2 * MAX_LINES."""
    df = float(frequency[1])
    k = np.arange(LINE_HALF_WIDTH + 1, len(psd) - LINE_HALF_WIDTH - 1)  # whole bands, no DC
    k = k[frequency[k] <= highest_hz - 2 * df]  # still foldable once refined
    ratio = np.divide(psd, background, out=np.zeros_like(psd), where=background > 0)
    peaks = k[(psd[k] >= psd[k - 1]) & (psd[k] > psd[k + 1]) & (ratio[k] >= LINE_THRESHOLD)]
    found = []
    for peak in peaks:
        band = slice(peak - LINE_HALF_WIDTH, peak + LINE_HALF_WIDTH + 1)
        excess = np.clip(psd[band] - background[band], 0, None)
        power = float(excess.sum() * df)
        centroid = float((frequency[band] * excess).sum() / excess.sum())
        found.append((centroid, math.sqrt(2 * power), power / variance if variance > 0 else 0.0))
    found.sort(key=lambda line: -line[1])
    kept: list[tuple[float, float, float]] = []
    for line in found:  # one line per main lobe
        if all(abs(line[0] - other[0]) > 2 * LINE_HALF_WIDTH * df for other in kept):
            kept.append(line)
    return kept[: 2 * MAX_LINES]


def _label_multiples(lines: list[Line], df: float) -> list[Line]:
    """Mark a line at k f0 (k >= 2) of a lower listed line f0 that is itself no such multiple: a
    pattern that is not a sinusoid (a short detour every 1/f0) has lines at every k f0. Of several
    such f0 the one with the largest share is named (within 0.01: the nearest, smallest k). Kept
    in order."""
    roots: list[Line] = []
    labelled: dict[int, Line] = {}
    for index in sorted(range(len(lines)), key=lambda i: lines[i].frequency_hz):
        line = lines[index]
        tolerance = max(2 * df, 1e-3 * line.frequency_hz)
        bases = [
            root
            for root in roots
            if round(line.frequency_hz / root.frequency_hz) >= 2
            and abs(
                line.frequency_hz - round(line.frequency_hz / root.frequency_hz) * root.frequency_hz
            )
            <= tolerance
        ]
        if bases:
            most = max(b.share or 0.0 for b in bases)
            base = max(
                (b for b in bases if (b.share or 0.0) >= most - 0.01), key=lambda b: b.frequency_hz
            )
            order = round(line.frequency_hz / base.frequency_hz)
            line = replace(line, fundamental_hz=base.frequency_hz, order=order)
        else:
            roots.append(line)
        labelled[index] = line
    return [labelled[i] for i in range(len(lines))]


def spectrum(series: NoiseSeries) -> Spectrum | None:
    """Welch PSD of the lost-time fraction, its lines and their shares (None if too short)."""
    x, step = lost_fraction(series)
    segment = welch_segment(len(x))
    if segment is None:
        return None
    rate = 1e9 / step
    frequency, psd = welch(x, rate, segment)
    background = _running_median(psd, BACKGROUND_BINS)
    df = float(frequency[1])
    highest = rate / MIN_FOLD_CELLS
    candidates = _candidate_lines(frequency, psd, background, float(x.var()), highest)
    power, power_step = _periodogram(x, rate) if candidates else (np.zeros(3), 1.0)
    lines = []
    for f, amplitude, power_share in candidates:
        refined = _refine(power, power_step, f, 1.5 * df)
        lines.append(Line(refined, amplitude, power_share, periodic_share(x, step, refined)))
    lines = _label_multiples(lines[:MAX_LINES], df)
    return Spectrum(frequency, psd, background, df, rate, highest, lines)


# -- bulk-synchronous model -------------------------------------------------------------------------
def window_losses(series: NoiseSeries, granularity_ns: float) -> tuple[np.ndarray, int] | None:
    """Time lost while doing `granularity_ns` of undisturbed work, for windows that start one
    sample's worth of work apart, and the samples per window (g / quantum); None when no window
    fits. Windows are laid out in work, not wall time, as supersteps are: a detour then counts in
    every window whose work spans it, however long it lasted.

    FWQ: the detours of g / t_min consecutive quanta. FTQ: from the moment the work first
    reached w to the moment it first reached w + g (work inside an interval taken as evenly
    spread), minus g, for w = 0, T, 2T, ... in undisturbed time."""
    per_window = round(granularity_ns / series.quantum_ns)
    if per_window < 1 or per_window > len(series.lost_ns):
        return None
    if series.method != "ftq":
        cumulative = np.concatenate([[0.0], np.cumsum(series.lost_ns)])
        return cumulative[per_window:] - cumulative[:-per_window], per_window
    rate = series.work_ns / series.quantum_ns  # share of each interval spent working
    done = np.concatenate([[0.0], np.cumsum(rate)])  # work done by each boundary, in intervals

    def first_reached(work: np.ndarray) -> np.ndarray:  # in intervals since the start
        after = np.maximum(np.searchsorted(done, work - 1e-12, side="left"), 1)
        return after - 1 + (work - done[after - 1]) / np.maximum(rate[after - 1], 1e-300)

    starts = np.arange(int(np.floor(done[-1] - per_window + 1e-9)) + 1, dtype=float)
    if not len(starts):
        return None
    wall = first_reached(starts + per_window) - first_reached(starts)
    return np.maximum(wall - per_window, 0.0) * series.quantum_ns, per_window


def expected_max(values: np.ndarray, processes: np.ndarray | list[int]) -> np.ndarray:
    """E[max of P independent draws] from the empirical distribution of `values`, for each P:
    sum_i x_(i) ((i/W)^P - ((i-1)/W)^P)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    fractions = np.arange(len(ordered) + 1) / len(ordered)
    result = []
    for p in np.atleast_1d(processes):
        cdf_power = fractions ** float(p)
        result.append(float(np.dot(ordered, np.diff(cdf_power))))
    return np.array(result)


@dataclass(frozen=True)
class BspCurve:
    granularity_ns: float  # g as asked
    window_ns: float  # g as realized: whole samples of undisturbed work
    processes: np.ndarray
    slowdown: np.ndarray  # E[max of P] / g (0.05: supersteps take 5 % longer)
    windows: int  # sliding windows pooled
    independent_windows: int  # non-overlapping windows pooled: the tail is known up to ~this P


def bsp_slowdown(
    series: list[NoiseSeries],
    granularity_ns: float,
    processes: tuple[int, ...] = PROCESSES,
) -> BspCurve | None:
    """Expected BSP slowdown for granularity g and each P, from the pooled window losses."""
    pooled, independent, windows_ns = [], 0, []
    for one in series:
        found = window_losses(one, granularity_ns)
        if found is None:
            continue
        losses, per_window = found
        pooled.append(losses / (per_window * one.quantum_ns))  # each PU against its own g
        independent += (len(losses) + per_window - 1) // per_window  # non-overlapping ones
        windows_ns.append(per_window * one.quantum_ns)
    if not pooled:
        return None
    fractions = np.concatenate(pooled)
    p = np.array(processes, dtype=float)
    return BspCurve(
        granularity_ns,
        float(np.mean(windows_ns)),
        p,
        expected_max(fractions, p),
        len(fractions),
        independent,
    )
