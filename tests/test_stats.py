import numpy as np
import pytest

from perfatlas.common.stats import median_ci_ranks, ratio, summarize, warnings_for
from perfatlas.common.warning import Kind


@pytest.mark.parametrize(
    "n, ranks",
    # Le Boudec (2010), Table A.1: 95 % order-statistic intervals of the median.
    [(6, (1, 6)), (9, (2, 8)), (10, (2, 9)), (20, (6, 15)), (100, (40, 61))],
)
def test_median_ci_ranks_match_the_published_table(n, ranks):
    j, k, coverage = median_ci_ranks(n)
    assert (j, k) == ranks
    assert coverage >= 0.95


def test_fewer_than_six_samples_give_the_range_with_its_true_coverage():
    assert median_ci_ranks(5) == (1, 5, 1 - 2 / 32)


def test_median_ci_covers_the_true_median_at_least_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_median = 1.0  # median of lognormal(0, s) is exp(0)
    hits = sum(
        s.ci_lo <= true_median <= s.ci_hi
        for s in (summarize(rng.lognormal(0.0, 0.5, size=15)) for _ in range(2000))
    )
    assert hits / 2000 >= 0.94


def test_summary_of_known_samples():
    s = summarize([5, 1, 4, 2, 3, 9, 8, 7, 6])
    assert (s.n, s.median, s.min, s.max, s.mean) == (9, 5, 1, 9, 5)
    assert (s.ci_lo, s.ci_hi) == (2, 8)
    assert s.cv == pytest.approx(np.std(np.arange(1, 10), ddof=1) / 5)


def test_unstable_results_are_flagged_with_the_fix():
    noisy = summarize([1.0, 1.3, 0.7, 1.2, 0.8, 1.1])
    (warning,) = warnings_for(noisy, metric="latency_ns")
    assert warning.kind is Kind.UNSTABLE and warning.metric == "latency_ns"
    assert "coefficient of variation" in warning.message and "samples=" in warning.fix
    assert warnings_for(summarize([1.0, 1.01, 0.99, 1.0, 1.0, 1.0])) == []


def test_samples_shorter_than_ten_timer_resolutions_are_flagged():
    s = summarize([1.0] * 6)
    (warning,) = warnings_for(s, sample_seconds=[150e-9] * 6, resolution_ns=20)
    assert warning.kind is Kind.TOO_SHORT and "min_sample_time" in warning.fix
    assert warnings_for(s, sample_seconds=[300e-9] * 6, resolution_ns=20) == []


def test_ratio_interval_contains_the_true_ratio_and_excludes_one():
    rng = np.random.default_rng(3)
    slow = rng.normal(2.0, 0.05, size=30)
    fast = rng.normal(1.0, 0.025, size=30)
    r = ratio(slow, fast)
    assert r.ci_lo < 2.0 < r.ci_hi
    assert r.ci_lo > 1.5
    assert ratio(slow, fast) == r  # seeded: the same data give the same interval
