"""All statistics of perfatlas, in one place (Hoefler & Belli, SC15).

Medians with nonparametric confidence intervals from order statistics (Le Boudec, "Performance
Evaluation of Computer and Communication Systems", 2010, Thm. 2.1), warnings that say what to do,
and ratios of medians with bootstrap intervals for comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from perfatlas.common.warning import Kind, WarningRecord

CONFIDENCE = 0.95
CV_WARNING = 0.05  # coefficient of variation above which a result is flagged unstable
RESOLUTION_FACTOR = 10  # a sample must last at least this many timer resolutions
MIN_SAMPLES_FOR_CI = 6  # below this no symmetric order-statistic interval reaches 95 %


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    ci_lo: float
    ci_hi: float
    ci_coverage: float  # exact coverage of [ci_lo, ci_hi] for the median
    min: float
    max: float
    mean: float
    cv: float  # standard deviation / mean (0 for a single sample)


@dataclass(frozen=True)
class Ratio:
    median: float
    ci_lo: float
    ci_hi: float


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """1-based ranks (j, k) with P(x_(j) <= median <= x_(k)) >= confidence, and that coverage.

    Coverage of [x_(j), x_(n+1-j)] is 1 - 2 P(B(n, 1/2) <= j - 1). Takes the narrowest symmetric
    pair; for n < 6 no pair reaches 95 % and the full range is returned with its true coverage.
    """
    if n < 1:
        raise ValueError("no samples")
    coverage = 1.0 - 2.0 * _binomial_half_cdf(n, (n + 1) // 2)  # coverage[j - 1] for rank j
    j = max(1, int(np.count_nonzero(coverage >= confidence)))  # coverage falls as j grows
    return j, n + 1 - j, float(coverage[j - 1])


def _binomial_half_cdf(n: int, count: int) -> np.ndarray:
    """P(B(n, 1/2) <= i) for i = 0 .. count-1: exact integers up to n = 1000 (2^n still fits a
    double), beyond in log space, so that series of 10^5 samples (noise) summarize in O(n)."""
    if n <= 1000:
        term, total, cdf = 1, 0, []
        for i in range(count):
            total += term
            cdf.append(total * 0.5**n)
            term = term * (n - i) // (i + 1)
        return np.array(cdf)
    i = np.arange(1, count, dtype=float)
    log_comb = np.concatenate([[0.0], np.cumsum(np.log((n - i + 1) / i))])
    return np.cumsum(np.exp(log_comb - n * math.log(2.0)))


def summarize(samples: list[float] | np.ndarray) -> Summary:
    values = np.sort(np.asarray(samples, dtype=float))
    n = len(values)
    j, k, coverage = median_ci_ranks(n)
    mean = float(values.mean())
    cv = float(values.std(ddof=1) / mean) if n > 1 and mean != 0 else 0.0
    return Summary(
        n=n,
        median=float(np.median(values)),
        ci_lo=float(values[j - 1]),
        ci_hi=float(values[k - 1]),
        ci_coverage=coverage,
        min=float(values[0]),
        max=float(values[-1]),
        mean=mean,
        cv=cv,
    )


def warnings_for(
    summary: Summary,
    sample_seconds: list[float] | None = None,
    resolution_ns: float | None = None,
    metric: str | None = None,
) -> list[WarningRecord]:
    """What is doubtful about a result's `metric`, each with the fix (hyperfine/pyperf style)."""
    found = []
    if summary.cv > CV_WARNING:
        found.append(
            WarningRecord(
                Kind.UNSTABLE,
                f"unstable: coefficient of variation {summary.cv:.1%} exceeds {CV_WARNING:.0%}",
                "stop other load, pin threads, or raise samples= / --repeat",
                metric,
            )
        )
    if summary.n < MIN_SAMPLES_FOR_CI:
        found.append(
            WarningRecord(
                Kind.FEW_SAMPLES,
                f"only {summary.n} samples: the interval is the full range with "
                f"{summary.ci_coverage:.0%} coverage",
                f"use samples={MIN_SAMPLES_FOR_CI} or more for a 95 % CI",
                metric,
            )
        )
    if sample_seconds and resolution_ns:
        shortest = min(sample_seconds)
        if shortest < RESOLUTION_FACTOR * resolution_ns * 1e-9:
            found.append(
                WarningRecord(
                    Kind.TOO_SHORT,
                    f"too short: a sample lasted {shortest * 1e9:.0f} ns, under "
                    f"{RESOLUTION_FACTOR}x the timer resolution ({resolution_ns:.0f} ns)",
                    "raise min_sample_time=",
                    metric,
                )
            )
    return found


def ratio(
    numerator: list[float] | np.ndarray,
    denominator: list[float] | np.ndarray,
    resamples: int = 2000,
    seed: int = 0,
) -> Ratio:
    """Ratio of medians with a percentile-bootstrap interval (seeded: the same data, the same CI)."""
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    rng = np.random.default_rng(seed)
    boot_a = np.median(rng.choice(a, size=(resamples, len(a))), axis=1)
    boot_b = np.median(rng.choice(b, size=(resamples, len(b))), axis=1)
    ratios = boot_a / boot_b
    tail = (1.0 - CONFIDENCE) / 2.0
    return Ratio(
        median=float(np.median(a) / np.median(b)),
        ci_lo=float(np.quantile(ratios, tail)),
        ci_hi=float(np.quantile(ratios, 1.0 - tail)),
    )


def block_bootstrap_ratio_of_sums(
    numerator: np.ndarray,
    denominator: np.ndarray,
    blocks: int = 50,
    resamples: int = 2000,
    seed: int = 0,
) -> Ratio:
    """sum(numerator) / sum(denominator) of a time series, with a moving-block bootstrap interval.

    The series is cut into `blocks` contiguous blocks (correlated neighbours stay together:
    Kuensch, Ann. Statist. 1989), blocks are drawn with replacement, and the percentile interval
    of the resampled ratios is returned beside the ratio of the full series. Seeded.
    """
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    point = float(a.sum() / b.sum())
    blocks = max(1, min(blocks, len(a)))
    edges = np.linspace(0, len(a), blocks + 1).astype(int)
    sums_a, sums_b = np.add.reduceat(a, edges[:-1]), np.add.reduceat(b, edges[:-1])
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, blocks, size=(resamples, blocks))
    ratios = sums_a[drawn].sum(axis=1) / sums_b[drawn].sum(axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    return Ratio(
        median=point,
        ci_lo=float(np.quantile(ratios, tail)),
        ci_hi=float(np.quantile(ratios, 1.0 - tail)),
    )
