"""Placement (docs/profile.md, Placement): each rank reads back where it ran -- the CPUs its
MPI_Init thread may run on and the one it was seen on most -- and the profile maps them through
the run's hwloc topology to core groups, packages and NUMA nodes, and each pair of ranks to the
class of its link. Real runs under mpirun on 2 ranks, bound and not; the mapping also on
machines perfatlas does not run on (tests/data/topologies, loaded by hwloc)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_ipm import mpirun_command
from test_profile_show import ProfiledRun, profile_run, shown

from perfatlas.common.units import parse_cpu_list
from perfatlas.launch.native import bin_dir
from perfatlas.machine.link_class import (
    ACROSS_HOSTS,
    ACROSS_PACKAGES,
    SAME_CORE_GROUP,
    SAME_PACKAGE,
    link_class,
)
from perfatlas.machine.topology import Machine
from perfatlas.profile.rank_placement import rank_places

HOSTILE = bin_dir() / "pa-ipm-hostile"


def bound_to(what: str) -> list[str]:
    """The launcher with each rank bound to `what`: a core of its own, or none (Open MPI binds
    2 ranks to cores unless told; MPICH's hydra binds nothing unless told)."""
    return [*mpirun_command(), "--bind-to", what]


def placements(folder: Path) -> list[dict]:
    return [json.loads((folder / f"ipm-rank-{r}.json").read_text())["placement"] for r in (0, 1)]


def test_an_unbound_rank_reads_back_what_it_may_run_on(tmp_path):
    profile_run(tmp_path, bound_to("none"), str(HOSTILE), "names")
    allowed = sorted(os.sched_getaffinity(0))
    for place in placements(tmp_path / "out"):
        assert parse_cpu_list(place["cpus_allowed"]) == allowed
        assert place["cpu"] in allowed
        # Seen at MPI_Init and where the profile is written: under 4,096 events, no other sample.
        assert sum(samples for _, samples in place["cpu_samples"]) == 2
        assert place["samples_beyond"] == 0


def test_a_rank_bound_to_a_core_reads_back_that_core(tmp_path):
    folder = tmp_path
    profile_run(folder, bound_to("core"), str(HOSTILE), "names")
    cpus = []
    for place in placements(folder / "out"):
        (cpu,) = parse_cpu_list(place["cpus_allowed"])
        assert place["cpu"] == cpu and place["cpu_samples"] == [[cpu, 2]]
        cpus.append(cpu)
    assert len(set(cpus)) == 2
    profile = json.loads((folder / "out" / "ipm-profile.json").read_text())
    assert [(r["cpus_allowed"], r["cpu"]) for r in profile["ranks"]] == [
        (str(cpu), cpu) for cpu in cpus
    ]


@pytest.fixture(scope="module")
def bound_exact(tmp_path_factory) -> ProfiledRun:
    """pa-ipm-exact (messages both ways) on 2 ranks bound to a core each."""
    folder = tmp_path_factory.mktemp("bound-exact")
    return profile_run(folder, bound_to("core"), str(bin_dir() / "pa-ipm-exact"), str(folder))


def test_show_places_the_ranks_and_names_each_pairs_link(cli, bound_exact):
    profile = json.loads(shown(cli, bound_exact, "--json").out)["profile"]
    pus = {pu["os_index"]: pu for pu in Machine.detect().topology["pus"]}
    places = profile["placement"]
    assert [p["rank"] for p in places] == [0, 1]
    for place in places:
        pu = pus[place["cpu"]]
        assert (place["package"], place["numa_node"], place["topology"]) == (
            pu["package"],
            pu["numa_node"],
            "this host",
        )
    a, b = (pus[p["cpu"]] for p in places)
    level = "l3" if a["l3"] >= 0 else "l2"  # the last-level cache: no L3 on some machines
    expected = (
        SAME_CORE_GROUP
        if a[level] == b[level]
        else SAME_PACKAGE
        if a["package"] == b["package"]
        else ACROSS_PACKAGES
    )
    assert {pair["link"] for pair in profile["traffic"]["pairs"]} == {expected}
    out = shown(cli, bound_exact).out
    assert f"│ {expected}" in out


def zoo_places(on_topology: dict, cpus: dict[int, tuple[str, int]]) -> dict:
    """rank -> RankPlace of ranks on (host, cpu), placed with a zoo machine's topology."""
    document = {"ranks": [{"rank": r, "host": h, "cpu": c} for r, (h, c) in cpus.items()]}
    return {p.rank: p for p in rank_places(document, on_topology, "node1")}


def test_link_classes_on_a_machine_of_four_packages(on):
    topology = on("16em64t-4s2c2t.xml").topology
    pus = topology["pus"]
    first = pus[0]
    same_group = next(p for p in pus[1:] if p["l3"] == first["l3"])
    other_package = next(p for p in pus if p["package"] != first["package"])
    places = zoo_places(
        topology,
        {
            0: ("node1", first["os_index"]),
            1: ("node1", same_group["os_index"]),
            2: ("node1", other_package["os_index"]),
            3: ("node2", first["os_index"]),
            4: ("node1", 9999),  # a CPU the topology does not list
        },
    )
    assert places[0].package == first["package"] and places[2].package == other_package["package"]
    assert link_class(places[0], places[1]) == SAME_CORE_GROUP
    assert link_class(places[0], places[2]) == ACROSS_PACKAGES
    assert link_class(places[0], places[3]) == ACROSS_HOSTS
    assert places[3].topology == "assumed: this host's"
    assert places[4].package is None and link_class(places[0], places[4]) is None


def test_a_package_of_several_core_groups_is_same_package(on):
    """16amd64-4distances: no L3, an L2 per core, so each core is a core group of its own."""
    topology = on("16amd64-4distances.xml").topology
    pus = topology["pus"]
    first = pus[0]
    apart = next(p for p in pus if p["package"] == first["package"] and p["l2"] != first["l2"])
    places = zoo_places(
        topology, {0: ("node1", first["os_index"]), 1: ("node1", apart["os_index"])}
    )
    assert link_class(places[0], places[1]) == SAME_PACKAGE
    assert (places[0].core_group, places[1].core_group) == (first["l2"], apart["l2"])
    assert places[0].numa_node == first["numa_node"]


def test_a_profile_without_placement_places_no_rank():
    document = {"ranks": [{"rank": 0, "host": "a"}, {"rank": 1, "host": "a"}]}
    places = rank_places(document, None, "a")
    assert [(p.cpu, p.package, p.topology) for p in places] == [(None, None, "none")] * 2
    assert link_class(places[0], places[1]) is None
