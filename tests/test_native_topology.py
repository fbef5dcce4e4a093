"""pa-topology (native/topology/) against the topology document of docs/contract.md."""

from __future__ import annotations

import os

import pytest

from perfatlas.common.errors import UserError
from perfatlas.common.units import parse_cpu_list
from perfatlas.launch.native import run_json


@pytest.fixture(scope="module")
def topology() -> dict:
    return run_json("pa-topology", [])


def test_document_has_every_contract_field(topology):
    assert topology["schema"] == "perfatlas.topology/1"
    assert topology["hwloc_version"].count(".") == 2
    assert topology["cpu_model"]
    for key in (
        "packages",
        "cores",
        "pus",
        "numa_nodes",
        "numa_distances",
        "caches",
        "huge_page_sizes",
    ):
        assert key in topology
    assert 1 <= topology["packages"] <= topology["cores"] <= len(topology["pus"])


def test_pus_are_the_cpus_this_process_may_use(topology):
    assert sorted(pu["os_index"] for pu in topology["pus"]) == sorted(os.sched_getaffinity(0))
    nodes = {node["os_index"] for node in topology["numa_nodes"]}
    for pu in topology["pus"]:
        assert 0 <= pu["core"] < topology["cores"]
        assert 0 <= pu["package"] < topology["packages"]
        assert pu["numa_node"] in nodes


def test_numa_nodes_partition_the_pus(topology):
    covered = [cpu for node in topology["numa_nodes"] for cpu in parse_cpu_list(node["cpus"])]
    assert sorted(covered) == sorted(pu["os_index"] for pu in topology["pus"])
    assert all(node["memory_bytes"] > 0 for node in topology["numa_nodes"])


def test_distances_are_a_square_matrix_with_ten_on_the_diagonal(topology):
    n = len(topology["numa_nodes"])
    matrix = topology["numa_distances"]
    assert len(matrix) == n and all(len(row) == n for row in matrix)
    assert all(matrix[i][i] == 10 for i in range(n))
    assert topology["numa_distances_source"]


def test_caches_grow_outwards_and_name_their_cpus(topology):
    data = [c for c in topology["caches"] if c["type"] != "instruction"]
    assert data and min(c["level"] for c in data) == 1
    # Outwards from each CPU: a cache is no larger than the next level's that serves its CPUs (a
    # hybrid CPU has two L1d and two L2 sizes, so sizes are compared along one CPU's path only).
    for inner in data:
        for outer in data:
            shared = set(parse_cpu_list(inner["cpus"])) & set(parse_cpu_list(outer["cpus"]))
            if outer["level"] == inner["level"] + 1 and shared:
                assert inner["size_bytes"] <= outer["size_bytes"], (inner, outer)
    for cache in topology["caches"]:
        assert cache["type"] in ("data", "instruction", "unified")
        assert cache["line_bytes"] in (32, 64, 128, 256)
        assert cache["count"] >= 1 and parse_cpu_list(cache["cpus"])


def test_huge_page_sizes_exclude_the_base_page(topology):
    assert all(size > 4096 and size & (size - 1) == 0 for size in topology["huge_page_sizes"])
    assert topology["huge_page_sizes"] == sorted(topology["huge_page_sizes"])


def test_unknown_parameter_is_a_user_error():
    with pytest.raises(UserError, match="unknown parameter 'bytes'"):
        run_json("pa-topology", ["bytes=1"])
