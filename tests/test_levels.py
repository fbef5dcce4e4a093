"""Memory-level detection on synthetic latency curves: steps, ramps, noise, outliers, short sweeps."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from perfatlas.machine.caches import Cache, hwloc_caches
from perfatlas.mem.analysis_levels import (
    MATCH_FACTOR,
    compare_with_hwloc,
    detect_levels,
    optimal_partition,
)

KiB, MiB = 2**10, 2**20
# A machine as hwloc sees it (synthetic, not this one): L1d 48 KiB, L2 1 MiB per core, L3 32 MiB.
CACHES = [Cache(1, "data", 48 * KiB), Cache(2, "unified", 1 * MiB), Cache(3, "unified", 32 * MiB)]
CAPACITIES = [c.size_bytes for c in CACHES]
LATENCIES = [1.0, 3.5, 12.0, 90.0]  # ns: L1, L2, L3, memory


def sweep(low: int = 4 * KiB, high: int = 256 * MiB, per_doubling: int = 2) -> np.ndarray:
    """Working sets as the suites make them: geometric, rounded to 64 bytes."""
    count = round(math.log2(high / low) * per_doubling) + 1
    return np.array([round(low * 2 ** (k / per_doubling) / 64) * 64 for k in range(count)])


def steps(sizes: np.ndarray) -> np.ndarray:
    """Sharp steps: a working set is served by the first level it fits in."""
    levels = np.searchsorted(CAPACITIES, sizes, side="left")
    return np.array(LATENCIES)[levels]


def ramps(sizes: np.ndarray) -> np.ndarray:
    """Gradual transitions: with random replacement a fraction C/W of the lines hits each level."""
    out = []
    for w in sizes:
        hits = [min(1.0, c / w) for c in CAPACITIES] + [1.0]
        shares = np.diff([0.0] + hits)
        out.append(float(np.dot(shares, LATENCIES)))
    return np.array(out)


def noisy(latencies: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    return latencies * np.exp(np.random.default_rng(seed).normal(0.0, sigma, len(latencies)))


def true_last_indices(sizes: np.ndarray) -> list[int]:
    """Index of the largest working set that still fits each cache."""
    return [int(np.searchsorted(sizes, c, side="right")) - 1 for c in CAPACITIES]


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("per_doubling", [1, 2, 4])
def test_noisy_steps_give_exactly_four_levels_with_boundaries_within_one_point(seed, per_doubling):
    sizes = sweep(per_doubling=per_doubling)
    levels = detect_levels(sizes, noisy(steps(sizes), 0.03, seed), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    for level, last in zip(levels, true_last_indices(sizes)):
        assert abs(level.last_index - last) <= 1
    for level, expected in zip(levels, LATENCIES):
        assert level.latency_ns == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("per_doubling", [1, 2, 4])
def test_gradual_transitions_are_not_taken_for_extra_levels(seed, per_doubling):
    sizes = sweep(per_doubling=per_doubling)
    levels = detect_levels(sizes, noisy(ramps(sizes), 0.02, seed), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    for level, cache in zip(levels, CACHES):
        assert cache.size_bytes / 2 <= level.capacity_bytes <= cache.size_bytes * 1.01
        assert level.cache == cache


def test_a_flat_noisy_curve_is_one_level():
    sizes = sweep(4 * KiB, 32 * KiB, per_doubling=4)
    levels = detect_levels(sizes, noisy(np.full(len(sizes), 1.2), 0.03, 7), CACHES)
    assert len(levels) == 1 and levels[0].name == "L1"
    assert levels[0].next_bytes is None and levels[0].boundary_bytes is None


def test_one_outlier_does_not_split_a_plateau():
    sizes = sweep()
    latencies = steps(sizes)
    inside_l3 = int(np.searchsorted(sizes, 4 * MiB))
    latencies[inside_l3] *= 2.5  # one sample disturbed by an interrupt or a migration
    levels = detect_levels(sizes, latencies, CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    assert levels[2].latency_ns == pytest.approx(12.0)


def test_a_sweep_that_ends_inside_l3_has_no_memory_level():
    sizes = sweep(4 * KiB, 16 * MiB)
    levels = detect_levels(sizes, noisy(steps(sizes), 0.02, 3), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3"]
    assert levels[-1].next_bytes is None and levels[-1].cache == CACHES[2]


def test_an_l3_that_serves_nothing_shows_memory_reached_early_and_l3_not_detected():
    sizes = sweep()
    latencies = steps(sizes)
    latencies[sizes > 2 * MiB] = 90.0  # a shared L3 kept full by other tenants of the host
    levels = detect_levels(sizes, noisy(latencies, 0.03, 5), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "memory"]
    assert levels[-1].first_bytes <= 4 * MiB
    rows = compare_with_hwloc(levels, CACHES)
    assert [(row.name, row.level is None) for row in rows] == [
        ("L1", False),
        ("L2", False),
        ("L3", True),
        ("memory", False),
    ]


def test_a_level_that_holds_much_less_than_hwloc_says_is_matched_in_order():
    sizes = sweep()
    latencies = steps(sizes)
    latencies[sizes > 4 * MiB] = 90.0  # the VM keeps only 4 MiB of the shared 32 MiB L3
    levels = detect_levels(sizes, noisy(latencies, 0.03, 6), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    assert [level.matched_by for level in levels] == ["size", "size", "order", None]
    assert compare_with_hwloc(levels, CACHES)[2].ratio == pytest.approx(4 / 32)


def test_levels_are_named_by_size_when_the_sweep_starts_beyond_l1():
    sizes = sweep(128 * KiB, 256 * MiB)
    levels = detect_levels(sizes, noisy(steps(sizes), 0.02, 4), CACHES)
    assert [level.name for level in levels] == ["L2", "L3", "memory"]
    rows = compare_with_hwloc(levels, CACHES)
    assert [(row.name, row.level is not None) for row in rows] == [
        ("L1", False),
        ("L2", True),
        ("L3", True),
        ("memory", True),
    ]


def test_a_plateau_without_an_hwloc_cache_is_reported_as_such():
    sizes = sweep()
    latencies = steps(sizes)
    latencies[(sizes > 4 * MiB) & (sizes <= 32 * MiB)] = 20.0  # e.g. TLB reach inside L3
    levels = detect_levels(sizes, latencies, CACHES)
    # hwloc's L3 goes to the plateau that ends at 32 MiB; the one ending at 4 MiB has no cache
    assert [level.name for level in levels] == ["L1", "L2", "plateau 3", "L3", "memory"]
    assert levels[2].cache is None and levels[3].cache == CACHES[2]
    assert compare_with_hwloc(levels, CACHES)[2].ratio is None


def test_capacity_is_the_last_working_set_on_the_plateau_and_the_ratio_compares_it():
    sizes = sweep(per_doubling=1)
    levels = detect_levels(sizes, steps(sizes), CACHES)
    assert [level.capacity_bytes for level in levels] == [32 * KiB, 1 * MiB, 32 * MiB, None]
    assert levels[0].boundary_bytes == pytest.approx(math.sqrt(32 * KiB * 64 * KiB))
    ratios = [row.ratio for row in compare_with_hwloc(levels, CACHES)]
    assert ratios == [pytest.approx(32 / 48), 1.0, 1.0, None]


def test_input_order_does_not_matter():
    sizes = sweep(per_doubling=1)
    latencies = steps(sizes)
    order = np.random.default_rng(0).permutation(len(sizes))
    assert detect_levels(sizes[order], latencies[order], CACHES) == detect_levels(
        sizes, latencies, CACHES
    )


def test_too_few_points_give_no_levels():
    assert detect_levels([16 * KiB, 1 * MiB, 16 * MiB, 256 * MiB], [1, 3.5, 12, 90], CACHES) == []


def test_without_hwloc_caches_levels_are_numbered():
    sizes = sweep()
    assert [level.name for level in detect_levels(sizes, steps(sizes))] == ["L1", "L2", "L3", "L4"]


def brute_force(values: np.ndarray, penalty: float) -> float:
    """Cheapest cost + penalty * segments over every way to cut the sequence."""
    n, best = len(values), math.inf
    for k in range(n):
        for cuts in itertools.combinations(range(1, n), k):
            bounds = (0, *cuts, n)
            cost = sum(
                float(np.sum((values[a:b] - values[a:b].mean()) ** 2))
                for a, b in zip(bounds, bounds[1:])
            )
            best = min(best, cost + penalty * (k + 1))
    return best


@pytest.mark.parametrize("seed", range(20))
def test_optimal_partition_is_exact(seed):
    rng = np.random.default_rng(seed)
    values = np.repeat(rng.normal(0, 1, 3), rng.integers(1, 4, 3)) + rng.normal(0, 0.3, 1).repeat(1)
    values = values + rng.normal(0, 0.2, len(values))
    penalty = float(rng.uniform(0.05, 1.0))
    segments = optimal_partition(values, penalty)
    cost = sum(float(np.sum((values[a:b] - values[a:b].mean()) ** 2)) for a, b in segments)
    assert segments[0][0] == 0 and segments[-1][1] == len(values)
    assert all(b == c for (_, b), (c, _) in zip(segments, segments[1:]))
    assert cost + penalty * len(segments) == pytest.approx(brute_force(values, penalty))


def test_hwloc_caches_keep_data_and_unified_caches_by_level():
    topology = {
        "caches": [
            {"level": 1, "type": "instruction", "size_bytes": 32 * KiB},
            {"level": 1, "type": "data", "size_bytes": 48 * KiB},
            {"level": 2, "type": "unified", "size_bytes": 1 * MiB},
            {"level": 3, "type": "unified", "size_bytes": 32 * MiB},
        ]
    }
    assert hwloc_caches(topology) == CACHES
    assert [c.name for c in CACHES] == ["L1d", "L2", "L3"]


# Median latencies (ns) recorded on the development VM (AMD EPYC, 2 vCPUs; hwloc: L1d 48 KiB,
# L2 1 MiB, L3 32 MiB shared with other tenants) by the quick suite's sweeps.
RECORDED_PAGE_SIZES = sweep(per_doubling=2)
RECORDED_PAGE_CHAINS = [
    [
        1.084,
        1.075,
        1.07,
        1.073,
        1.078,
        1.083,
        1.193,
        2.229,
        2.552,
        2.478,
        2.553,
        2.522,
        2.547,
        2.551,
        2.536,
        3.112,
        5.626,
        6.241,
        7.175,
        7.254,
        128.033,
        84.625,
        89.559,
        139.775,
        112.472,
        147.849,
        96.96,
        71.172,
        70.966,
        97.401,
        63.271,
        60.354,
        67.682,
    ],
    [
        1.118,
        1.104,
        1.106,
        1.116,
        1.135,
        1.139,
        1.356,
        2.096,
        2.627,
        2.608,
        2.658,
        2.626,
        2.567,
        2.619,
        2.83,
        3.624,
        5.517,
        6.192,
        6.226,
        87.719,
        61.621,
        67.133,
        57.75,
        66.76,
        69.03,
        67.163,
        66.532,
        63.363,
        73.108,
        67.353,
        73.295,
        71.575,
        70.669,
    ],
]
RECORDED_RANDOM_SIZES = sweep(per_doubling=1)
RECORDED_RANDOM_CHAIN = [
    1.106,
    1.109,
    1.1,
    1.109,
    3.879,
    3.874,
    3.963,
    4.6,
    8.185,
    12.701,
    14.842,
    15.328,
    155.123,
    158.904,
    194.953,
    199.087,
    198.175,
]


@pytest.mark.parametrize("latencies", RECORDED_PAGE_CHAINS)
def test_recorded_page_chains_of_the_development_vm(latencies):
    levels = detect_levels(RECORDED_PAGE_SIZES, latencies, CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    l1, l2, l3, memory = levels
    assert (
        l1.latency_ns == pytest.approx(1.1, rel=0.05) and 16 * KiB <= l1.capacity_bytes <= 48 * KiB
    )
    assert l2.latency_ns == pytest.approx(2.55, rel=0.05) and l2.matched_by == "size"
    # the VM keeps about 3 MiB of the shared L3: a level in order, far below hwloc's size
    assert l3.matched_by == "order" and l3.last_bytes < 4 * MiB and 5 < l3.latency_ns < 8
    assert 55 < memory.latency_ns < 80


def test_recorded_random_chain_of_the_development_vm():
    levels = detect_levels(RECORDED_RANDOM_SIZES, RECORDED_RANDOM_CHAIN, CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    assert [level.last_bytes for level in levels[:3]] == [32 * KiB, 256 * KiB, 8 * MiB]
    assert levels[2].latency_ns == pytest.approx(15.1, rel=0.05)
    assert levels[3].latency_ns == pytest.approx(195, rel=0.05)


def test_a_level_of_two_points_that_drift_is_still_a_level():
    """A quiet sweep at one point per doubling: the shared L3 a VM keeps holds two working sets
    whose latencies differ by more than their noise (12%), between two steps of 3x and more.
    The exact partition cuts them apart; they must still be one level, not two transitions."""
    sizes = sweep(per_doubling=1)
    latencies = steps(sizes)
    latencies[sizes > 4 * MiB] = 90.0  # the VM keeps 4 MiB of the L3
    latencies[sizes == 2 * MiB] = 12.0
    latencies[sizes == 4 * MiB] = 13.4
    levels = detect_levels(sizes, noisy(latencies, 0.003, 9), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "L3", "memory"]
    assert (levels[2].first_bytes, levels[2].last_bytes) == (2 * MiB, 4 * MiB)
    assert levels[2].matched_by == "order" and levels[2].latency_ns == pytest.approx(12.7, rel=0.02)


def test_a_ramp_of_single_points_does_not_become_a_level():
    sizes = sweep(per_doubling=1)
    latencies = steps(sizes)
    between = (sizes > 1 * MiB) & (sizes <= 32 * MiB)  # no L3: a ramp rising 1.3x per doubling
    latencies[between] = 3.5 * 1.3 ** np.arange(1, between.sum() + 1)
    levels = detect_levels(sizes, noisy(latencies, 0.003, 10), CACHES)
    assert [level.name for level in levels] == ["L1", "L2", "memory"]


# -- recorded and modelled machines (tests/data/latency-curves: see each file's "source") ----------
CURVES = sorted((Path(__file__).parent / "data" / "latency-curves").glob("*.json"))


def curve_series() -> list:
    cases = []
    for path in CURVES:
        curve = json.loads(path.read_text())
        for series in curve["series"]:
            cases.append(pytest.param(curve, series, id=f"{path.stem}-{series['chain']}"))
    return cases


def test_the_fixtures_cover_a_vm_bare_metal_and_a_machine_without_l3():
    names = {path.stem for path in CURVES}
    assert {"amd-epyc-kvm-2vcpu", "intel-xeon-vm-avx512", "opteron-865-no-l3"} <= names
    assert len(names) >= 4 and all("source" in json.loads(path.read_text()) for path in CURVES)


@pytest.mark.parametrize(("curve", "series"), curve_series())
def test_every_recorded_machine_gives_its_levels_matched_to_hwloc(curve, series):
    caches = hwloc_caches({"caches": curve["hwloc_caches"]})
    assert len(series["sizes"]) == len(series["ns"]) >= 15
    levels = detect_levels(series["sizes"], series["ns"], caches)
    expected = series["expected_levels"]
    assert [level.name for level in levels] == [e["name"] for e in expected], curve["machine"]
    for level, want in zip(levels, expected):
        assert level.latency_ns == pytest.approx(want["latency_ns"], rel=want["latency_rel"])
        low, high = want["last_bytes"]
        assert low <= level.last_bytes <= high, (level.name, level.last_bytes)
        matched = level.cache.level if level.cache is not None else None
        assert matched == want["cache_level"], level.name
        if level.matched_by == "size":  # "sensibly": within MATCH_FACTOR of hwloc's size
            ratio = level.boundary_bytes / level.cache.size_bytes if level.next_bytes else 1.0
            assert 1 / MATCH_FACTOR <= ratio <= MATCH_FACTOR
    latencies = [level.latency_ns for level in levels]
    assert latencies == sorted(latencies)  # outer levels are slower
    rows = compare_with_hwloc(levels, caches)
    assert sorted(row.cache.level for row in rows if row.cache) == [c.level for c in caches]
    assert all(row.level is not None for row in rows), "every hwloc cache is detected"
