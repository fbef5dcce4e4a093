"""The effective last-level cache (perfatlas.mem.cache_probe): the rule on synthetic and recorded
latency curves, sizing from an LLC given as input, and the real probe on this machine."""

from __future__ import annotations

import pytest

from perfatlas.benchmarks.benchmark import series_points
from perfatlas.common.errors import UserError
from perfatlas.common.units import geometric_sizes
from perfatlas.machine.topology import Machine
from perfatlas.mem.cache_probe import LlcSizing, effective_llc, not_probed, probe, sizing_for
from perfatlas.plan.suite import expand, load, size_sweep, uses_llc

KiB, MiB = 2**10, 2**20


def curve(levels: list[tuple[int, float]], memory: float, up_to: int) -> list[tuple[int, float]]:
    """A staircase: latency of the first level whose capacity holds the working set, else
    memory's; 128 KiB .. up_to at 2 points per doubling."""
    points = []
    for size in geometric_sizes(128 * KiB, up_to, 2):
        latency = next((ns for capacity, ns in levels if size <= capacity), memory)
        points.append((size, latency))
    return points


def test_a_vm_that_keeps_a_few_mib_of_a_480_mib_l3_sizes_from_those_mib():
    """The second machine of the issue: hwloc 480 MiB, memory reached after ~4 MiB."""
    points = curve([(1 * MiB, 5.0), (4 * MiB, 21.0)], 110.0, 64 * MiB) + [(1024 * MiB, 112.0)]
    found, why = effective_llc(points, 112.0, 480 * MiB)
    assert found == 4 * MiB
    assert "half of memory's" in why


def test_a_cache_that_holds_what_hwloc_says_is_bounded_by_hwloc():
    """A real 32 MiB L3 with a slow mesh (30 ns against 5 ns of L2): not mistaken for memory, and
    the ramp past its capacity does not make it larger than hwloc's."""
    points = curve([(2 * MiB, 5.0), (45 * MiB, 30.0)], 95.0, 32 * MiB) + [(128 * MiB, 95.0)]
    found, _ = effective_llc(points, 95.0, 32 * MiB)
    assert found == 32 * MiB


def test_one_slow_sample_in_the_cache_region_does_not_end_the_llc():
    points = curve([(1 * MiB, 4.0), (8 * MiB, 15.0)], 90.0, 32 * MiB)
    noisy = [(size, 80.0 if size == 2 * MiB else ns) for size, ns in points]
    found, _ = effective_llc(noisy + [(256 * MiB, 90.0)], 90.0, 64 * MiB)
    assert found == 8 * MiB


def test_a_curve_as_slow_as_memory_everywhere_has_no_effective_llc():
    points = [(size, 100.0) for size in geometric_sizes(128 * KiB, 8 * MiB, 2)]
    found, why = effective_llc(points, 100.0, 32 * MiB)
    assert found is None and "as slow as memory" in why


def test_a_curve_recorded_on_the_development_vm():
    """Recorded with the probe on the 2-core EPYC VM these were written on (hwloc: 32 MiB L3):
    memory from ~11 MiB on, the L3 mostly kept by other tenants."""
    recorded = [
        (131072, 2.7), (185344, 2.5), (262144, 2.5), (370688, 2.6), (524288, 2.8),
        (741440, 3.1), (1048576, 3.9), (1482816, 5.2), (2097152, 5.8), (2965568, 5.6),
        (4194304, 6.5), (5931008, 6.5), (8388608, 6.1), (11863296, 52.2), (16777216, 61.8),
        (23726528, 48.4), (33554432, 64.4), (134217728, 54.9),
    ]  # fmt: skip
    found, _ = effective_llc(recorded, 54.9, 32 * MiB)
    assert found == 8 * MiB


class FakeMachine:
    pus = [0, 1]
    last_level_cache_bytes = 480 * MiB
    sizing_llc_bytes = 480 * MiB


def test_sizes_relative_to_the_llc_follow_the_llc_given_and_default_to_hwloc():
    spec = {"from": "1MiB", "to": "4xLLC"}
    assert max(size_sweep(spec, FakeMachine())) == 1024 * MiB  # not probed: hwloc's
    assert max(size_sweep(spec, FakeMachine(), llc_bytes=4 * MiB)) == 16 * MiB
    assert uses_llc(load("quick")) and not uses_llc(load("comm"))


def test_the_quick_suite_measures_the_same_points_in_fewer_launches():
    """Every working set of a step is one launch of a size series; the points are those of
    one launch per working set, at the LLC given."""
    machine = Machine.detect()
    quick = load("quick")
    for llc in (4 * MiB, 480 * MiB):
        grouped = expand(quick, machine, llc_bytes=llc)
        single = expand(quick, machine, llc_bytes=llc, series=False)

        def points(measurements):
            found = []
            for m in measurements:  # a series (bytes, or another series parameter) point by point
                for raw in series_points(m.raw, m.benchmark):
                    found.append((m.benchmark.name, tuple(sorted(raw.items()))))
            return sorted(found, key=str)

        assert points(grouped) == points(single)
        assert len(grouped) < len(single) / 5
    bandwidth = [  # the series sized by the LLC (not the fixed 1 GiB step for memory's roof)
        m
        for m in expand(quick, machine, llc_bytes=4 * MiB)
        if "op" in m.raw and isinstance(m.raw["bytes"], list)
    ]
    assert max(max(m.raw["bytes"]) for m in bandwidth) == 16 * MiB  # 4xLLC of the LLC given


def test_an_llc_given_on_the_command_line_sizes_the_run():
    machine = Machine.detect()
    given = sizing_for("6MiB", machine)
    assert given.bytes == 6 * MiB and given.hwloc_bytes == machine.last_level_cache_bytes
    assert sizing_for("hwloc", machine).bytes == machine.last_level_cache_bytes
    with pytest.raises(UserError):
        sizing_for("lots", machine)
    machine.llc_sizing = given.record()
    assert machine.sizing_llc_bytes == 6 * MiB
    assert machine.context()["llc"]["effective_bytes"] == 6 * MiB
    assert not_probed(machine).used == "hwloc"


def test_the_probe_on_this_machine_finds_an_llc_no_larger_than_hwlocs():
    machine = Machine.detect()
    sizing = probe(machine)
    assert isinstance(sizing, LlcSizing)
    assert sizing.hwloc_bytes == machine.last_level_cache_bytes
    assert sizing.launches >= 1 and len(sizing.curve) >= 5
    assert all(latency > 0 for _, latency in sizing.curve)
    if sizing.used == "probe":
        assert 128 * KiB <= sizing.effective_bytes <= sizing.hwloc_bytes
    else:
        assert sizing.effective_bytes is None and sizing.why
    assert sizing.bytes <= sizing.hwloc_bytes


def test_an_hwloc_llc_far_larger_than_the_cache_is_replaced_by_the_probe():
    """The issue's VM, replayed here: hwloc is made to claim a 480 MiB L3 (no x86 core has that
    much of one cache instance to itself); the probe measures the real curve, reaches memory with
    its 1 GiB reference, and the suite's sweeps follow the effective LLC, not 480 MiB."""
    import copy

    machine = Machine.detect()
    if machine.memory_bytes < 4 * 2**30:
        pytest.skip("needs 4 GiB of memory for the probe's 1 GiB reference")
    topology = copy.deepcopy(machine.topology)
    largest = max(topology["caches"], key=lambda c: c["size_bytes"])
    largest["size_bytes"] = 480 * MiB
    claimed = Machine(topology)
    sizing = probe(claimed)
    assert sizing.hwloc_bytes == 480 * MiB
    assert sizing.used == "probe", sizing.why
    assert sizing.effective_bytes < 480 * MiB
    claimed.llc_sizing = sizing.record()
    sizes = [
        size
        for m in expand(load("quick"), claimed)
        if m.benchmark.name == "mem.bandwidth" and isinstance(m.raw["bytes"], list)
        for size in m.raw["bytes"]
    ]
    assert max(sizes) <= 4 * sizing.effective_bytes < 4 * 480 * MiB


@pytest.mark.parametrize(
    ("hwloc", "levels", "effective", "launches"),
    [
        (480 * MiB, [(1 * MiB, 5.0), (4 * MiB, 21.0)], 4 * MiB, 1),  # the VM
        (32 * MiB, [(2 * MiB, 5.0), (32 * MiB, 18.0)], 32 * MiB, 2),  # a real 32 MiB L3
        (96 * MiB, [(1 * MiB, 4.0), (70 * MiB, 12.0)], 64 * MiB, 3),  # a big L3: two more
    ],
)
def test_the_probe_extends_its_series_only_until_memory_shows(
    monkeypatch, hwloc, levels, effective, launches
):
    """probe() against a simulated machine: the series stops once its tail is memory's, never
    goes past hwloc's LLC, and the reference is measured beyond it."""
    import perfatlas.mem.cache_probe as cache_probe

    calls = []

    def simulated(sizes, cpu, passes=1):
        calls.append(sizes)
        return [
            (size, next((ns for capacity, ns in levels if size <= capacity), 90.0))
            for size in sorted(set(sizes))
        ]

    class Simulated:
        last_level_cache_bytes = hwloc
        memory_bytes = 64 * 2**30

        def cpus_for_threads(self, threads):
            return [0]

    monkeypatch.setattr(cache_probe, "_latencies", simulated)
    sizing = cache_probe.probe(Simulated())
    reference = min(4 * hwloc, 2**30)
    assert calls[0][-1] == reference  # memory's latency, beyond hwloc's LLC, with the first series
    assert max(max(sizes) for sizes in calls[1:] + [calls[0][:-1]]) <= hwloc
    assert (sizing.effective_bytes, sizing.launches) == (effective, launches)
