"""The noise analysis (perfatlas.noise.analysis_noise) on synthetic series with known answers."""

import warnings

import numpy as np
import pytest

from perfatlas.common.stats import block_bootstrap_ratio_of_sums
from perfatlas.noise import analysis_noise as na

QUANTUM = 100_000.0  # ns


def ticking_fwq(
    quanta: int = 20_000,
    quantum_ns: float = QUANTUM,
    period_ns: float = 1e6,
    detour_ns: float = 10_000.0,
    random_per_s: float = 0.0,
    random_mean_ns: float = 0.0,
    seed: int = 1,
) -> tuple[np.ndarray, float, float]:
    """FWQ durations of a machine that steals `detour_ns` every `period_ns` of wall time (a
    timer tick) and, at random, exponential detours; returns (durations, periodic, random)."""
    rng = np.random.default_rng(seed)
    durations = quantum_ns + rng.uniform(0.0, 50.0, quanta)  # 50 ns of jitter
    durations[0] = quantum_ns
    now, tick, periodic, random = 0.0, 0.37 * period_ns, 0.0, 0.0
    hit = rng.random(quanta) < random_per_s * quantum_ns * 1e-9
    for i in range(quanta):
        extra = rng.exponential(random_mean_ns) if hit[i] else 0.0
        random += extra
        while now + durations[i] + extra >= tick:
            extra += detour_ns
            periodic += detour_ns
            tick += period_ns
        durations[i] += extra
        now += durations[i]
    return durations, periodic, random


# -- series and slowdown ----------------------------------------------------------------------------
def test_a_constant_quantum_is_no_slowdown_no_detour_no_line_and_no_bsp_cost():
    series = na.fwq_series([QUANTUM] * 5000)
    assert na.slowdown(series) == 0.0
    found = na.detours(series, resolution_ns=20.0)
    assert found.largest_ns == 0.0 and found.percentiles_ns[99.9] == 0.0 and found.counts.sum() == 0
    assert na.spectrum(series).lines == []
    curve = na.bsp_slowdown([series], 1e6)
    assert np.all(curve.slowdown == 0.0)


def test_fwq_slowdown_is_lost_time_over_undisturbed_time():
    series = na.fwq_series([100.0, 110.0, 100.0, 130.0])
    assert series.quantum_ns == 100.0
    assert list(series.lost_ns) == [0.0, 10.0, 0.0, 30.0]
    assert list(series.start_ns) == [0.0, 100.0, 210.0, 310.0]  # back to back
    assert na.slowdown(series) == pytest.approx(40.0 / 400.0)


def test_ftq_slowdown_is_lost_work_over_work_done():
    series = na.ftq_series([1000, 900, 1000, 500], interval_ns=1e6)
    assert na.slowdown(series) == pytest.approx(600 / 3400)
    assert list(series.lost_ns) == pytest.approx([0.0, 1e5, 0.0, 5e5])
    assert list(series.start_ns) == [0.0, 1e6, 2e6, 3e6]


def test_the_slowdown_interval_covers_the_slowdown_and_narrows_without_noise():
    durations, _, _ = ticking_fwq(random_per_s=50, random_mean_ns=50_000)
    series = na.fwq_series(durations)
    interval = na.slowdown_interval(series)
    assert interval.ci_lo < na.slowdown(series) < interval.ci_hi
    still = block_bootstrap_ratio_of_sums(np.ones(100), np.full(100, 4.0))
    assert still.median == still.ci_lo == still.ci_hi == 0.25


# -- detours ----------------------------------------------------------------------------------------
def test_detour_percentiles_the_largest_and_the_tail_share():
    lost = np.zeros(1000)
    lost[:100] = 1000.0  # 10 % of the quanta lose 1 us
    lost[0] = 100_000.0  # one loses 100 us
    series = na.fwq_series(QUANTUM + lost)
    found = na.detours(series, resolution_ns=20.0)
    assert found.percentiles_ns[50.0] == 0.0 and found.percentiles_ns[99.0] == pytest.approx(1000.0)
    assert found.largest_ns == 100_000.0
    assert found.tail_share == pytest.approx(
        (100_000 + 9 * 1000) / (100_000 + 99 * 1000)
    )  # 10 worst
    assert found.counts.sum() == 100 and found.below == 900
    assert found.edges_ns[0] == 20.0 and found.edges_ns[-1] >= 100_000.0
    ratios = found.edges_ns[1:] / found.edges_ns[:-1]
    assert np.allclose(ratios, ratios[0])  # log-spaced


# -- spectrum ---------------------------------------------------------------------------------------
def test_the_lost_fraction_grid_keeps_every_detour_where_it_happened():
    durations = np.full(100, QUANTUM)
    durations[10] += 5 * QUANTUM  # a quantum stretched to six: it lost 5/6 of those six cells
    x, step = na.lost_fraction(na.fwq_series(durations))
    assert step == QUANTUM and len(x) == 105
    assert x.sum() * step == pytest.approx(5 * QUANTUM)
    assert np.allclose(x[10:16], 5 / 6) and x[:10].max() == 0 and x[16:].max() == 0


def test_welch_integrates_to_the_variance_and_finds_a_sinusoid_amplitude():
    rng = np.random.default_rng(4)
    rate, n = 10_000.0, 2**16
    t = np.arange(n) / rate
    x = 0.02 * np.sin(2 * np.pi * 440.0 * t) + rng.normal(0.0, 0.01, n)
    frequency, psd = na.welch(x, rate, 4096)
    assert psd.sum() * frequency[1] == pytest.approx(x.var(), rel=0.03)
    series = na.ftq_series(1000 * (1 - (x - x.min())), 1e9 / rate)  # lost fraction = x - min
    (line,) = na.spectrum(series).lines
    assert line.frequency_hz == pytest.approx(440.0, abs=0.05)
    assert line.amplitude == pytest.approx(0.02, rel=0.05)


def test_a_1khz_detour_shows_at_1000_hz_with_its_share_of_the_lost_time():
    durations, periodic, _ = ticking_fwq(random_per_s=20, random_mean_ns=30_000)
    series = na.fwq_series(durations)
    total = series.lost_ns.sum()
    assert 0.85 < periodic / total < 0.95  # the rest: random detours and jitter
    found = na.spectrum(series)
    assert found.rate_hz == pytest.approx(10_000.0) and found.line_limit_hz == 1250.0
    (line,) = found.lines  # 2 kHz and up: a 100 us quantum cannot place a detour within 1/8 period
    assert line.frequency_hz == pytest.approx(1000.0, abs=0.5)
    assert line.share == pytest.approx(periodic / total, abs=0.03)  # epoch folding
    # a 10 us pulse every 1 ms: lines of amplitude 2 d f0 = 2 % at every multiple of 1 kHz
    assert line.amplitude == pytest.approx(0.02, rel=0.1)


def test_the_multiples_of_a_pulse_train_are_marked_as_its_harmonics():
    durations, periodic, _ = ticking_fwq(quanta=50_000, quantum_ns=20_000.0)
    series = na.fwq_series(durations)
    found = na.spectrum(series)
    by_frequency = {round(line.frequency_hz): line for line in found.lines}
    assert by_frequency[1000].fundamental_hz is None
    assert by_frequency[1000].share == pytest.approx(periodic / series.lost_ns.sum(), abs=0.03)
    for order in (2, 3, 4):
        harmonic = by_frequency[1000 * order]
        assert harmonic.fundamental_hz == pytest.approx(1000.0, abs=0.5)
        assert harmonic.order == order
        assert harmonic.share == pytest.approx(by_frequency[1000].share, abs=0.03)  # recurs too


def test_random_detours_alone_make_no_periodic_share():
    durations, periodic, _ = ticking_fwq(period_ns=1e18, random_per_s=200, random_mean_ns=20_000)
    assert periodic == 0.0
    x, step = na.lost_fraction(na.fwq_series(durations))
    assert na.periodic_share(x, step, 1000.0) < 0.05
    assert na.periodic_share(x, step, 5000.0) is None  # two cells per period: cannot fold


def test_a_pulse_train_folds_to_its_whole_lost_time():
    x = np.zeros(10_000)
    x[3::40] = 0.5  # one cell in 40 of a 100 us grid: 250 Hz
    assert na.periodic_share(x, QUANTUM, 250.0) == pytest.approx(1.0, abs=1e-9)
    assert na.periodic_share(x, QUANTUM, 500.0) == pytest.approx(1.0, abs=1e-9)  # still recurs


# -- bulk-synchronous model -------------------------------------------------------------------------
def test_expected_max_of_bernoulli_detours_has_the_closed_form():
    d, p = 250.0, 0.01
    values = np.zeros(10_000)
    values[: int(p * len(values))] = d
    processes = np.array([1, 10, 100, 1000, 100_000])
    expected = d * (1 - (1 - p) ** processes)
    assert na.expected_max(values, processes) == pytest.approx(expected, rel=1e-9)


def test_expected_max_of_uniform_values_is_the_order_statistic():
    values = np.arange(1, 1001, dtype=float)  # E[max of 1] = mean; E[max of many] -> 1000
    assert na.expected_max(values, [1])[0] == pytest.approx(500.5)
    assert na.expected_max(values, [10**6])[0] == pytest.approx(1000.0, abs=1e-6)


def test_bsp_slowdown_of_a_1ms_window_hit_with_probability_p():
    d, g = 50_000.0, 1e6  # quanta of 1 ms of work; 2 % of them lose 50 us
    rng = np.random.default_rng(2)
    hit = rng.random(20_000) < 0.02
    series = na.fwq_series(np.where(hit, g + d, g))
    curve = na.bsp_slowdown([series], g)
    assert curve.window_ns == g and curve.windows == curve.independent_windows == 20_000
    expected = (d / g) * (1 - (1 - hit.mean()) ** curve.processes)
    assert curve.slowdown == pytest.approx(expected, rel=1e-9)
    assert curve.slowdown[0] == pytest.approx(na.slowdown(series), rel=1e-9)


def test_ftq_windows_are_laid_out_in_work_so_one_process_sees_the_mean_slowdown():
    rng = np.random.default_rng(5)
    counts = np.where(rng.random(5000) < 0.01, 0.0, 1000.0)  # stalls of whole intervals
    counts[rng.random(5000) < 0.05] = 900.0
    series = na.ftq_series(counts, interval_ns=1e6)
    curve = na.bsp_slowdown([series], 10e6)
    assert curve.slowdown[0] == pytest.approx(na.slowdown(series), rel=0.02)


def test_fwq_and_ftq_windows_both_measure_how_long_g_of_work_took():
    fwq = na.fwq_series([100.0] * 5 + [400.0] + [100.0] * 4)  # one quantum stretched by 300
    losses, per_window = na.window_losses(fwq, 200.0)
    assert per_window == 2 and list(losses) == [0, 0, 0, 0, 300, 300, 0, 0, 0]
    ftq = na.ftq_series([10, 10, 0, 0, 10, 5, 10], interval_ns=100.0)  # 2 lost, then half of one
    losses, _ = na.window_losses(ftq, 200.0)
    assert list(losses) == pytest.approx([0, 200, 250])  # from work 0, 100, 200 of 450


def test_bsp_windows_of_10ms_sum_ten_quanta_of_1ms_and_pool_every_pu():
    a = na.ftq_series(np.full(100, 1000.0), interval_ns=1e6)
    b_counts = np.full(100, 1000.0)
    b_counts[50] = 900.0  # 100 us lost once, in the middle
    b = na.ftq_series(b_counts, interval_ns=1e6)
    curve = na.bsp_slowdown([a, b], 10e6)
    assert curve.windows == 91 + 90 and curve.independent_windows == 10 + 9  # b: 99.9 ms of work
    # windows that hold b's lossy interval: 10 of 181; the largest loses 100 us of 10 ms
    assert curve.slowdown[-1] == pytest.approx(0.01, rel=1e-6)
    assert curve.slowdown[0] == pytest.approx(10 / 181 * 0.01, rel=1e-6)
    assert na.bsp_slowdown([a], 1e9) is None  # no window of 1 s in 100 ms


def test_a_line_next_to_zero_frequency_is_skipped_cleanly():
    rate, n = 1000.0, 2**14
    segment = na.welch_segment(n)
    t = np.arange(n) / rate
    x = 0.1 + 0.05 * np.sin(2 * np.pi * (2 * rate / segment) * t)  # on the second PSD bin
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = na.spectrum(na.ftq_series(1000 * (1 - x), 1e9 / rate))
    assert all(np.isfinite(line.frequency_hz) for line in found.lines)
