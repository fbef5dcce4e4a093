"""Size series: one native process measures every working set of a series (docs/contract.md,
Series), and perfatlas stores one result per point, as one launch per point would."""

from __future__ import annotations

import json
import sqlite3

import pytest

from perfatlas.common.errors import UserError
from perfatlas.common.units import parse_size_series
from perfatlas.launch.native import run_json

FAST = ["samples=3", "min_sample_time=1ms"]
KiB, MiB = 2**10, 2**20


def test_series_are_lists_or_geometric_ranges():
    assert parse_size_series("16KiB,1MiB") == [16 * KiB, MiB]
    assert parse_size_series("4KiB..64KiB") == [4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB]
    two = parse_size_series("4KiB..16KiB/2")
    assert len(two) == 5 and two[0] == 4 * KiB and two[-1] == 16 * KiB
    for bad in ("64KiB..4KiB", "4KiB..64KiB/0", "4KiB..64KiB/x", "4KiB,,8KiB"):
        with pytest.raises(UserError):
            parse_size_series(bad)


def test_a_bandwidth_series_is_one_document_per_size_like_single_launches():
    sizes = [16 * KiB, 256 * KiB, 4 * MiB]
    series = run_json("pa-mem-bandwidth", ["op=triad", f"bytes={','.join(map(str, sizes))}", *FAST])
    single = run_json("pa-mem-bandwidth", ["op=triad", f"bytes={sizes[1]}", *FAST])
    assert isinstance(series, list) and isinstance(single, dict)
    assert [d["params"]["bytes"] for d in series] == sizes
    assert series[1]["params"] == single["params"]
    for document in series:
        assert set(document) == set(single)
        assert document["derived"]["verified"] is True
        assert len(document["samples"]["bandwidth_Bps"]) == 3
        derived = document["derived"]
        moved = (
            derived["bytes_per_iteration"] * derived["elements"] * derived["iterations_per_sample"]
        )
        for bandwidth, seconds in zip(
            document["samples"]["bandwidth_Bps"], document["sample_seconds"]
        ):
            assert bandwidth == pytest.approx(moved / seconds, rel=1e-9)


def test_a_latency_series_of_the_two_thread_method_is_one_document_per_size_and_cpu():
    sizes = [16 * KiB, 1 * MiB]
    documents = run_json("pa-mem-latency", [f"bytes={sizes[0]},{sizes[1]}", "cpus=0,1", *FAST])
    assert [(d["params"]["bytes"], d["params"]["cpu"]) for d in documents] == [
        (sizes[0], 0), (sizes[0], 1), (sizes[1], 0), (sizes[1], 1),
    ]  # fmt: skip
    assert all(
        d["derived"]["lines"] * d["derived"]["line_bytes"] == d["params"]["bytes"]
        for d in documents
    )


def test_a_contention_series_is_three_documents_per_size():
    pus = [pu["os_index"] for pu in run_json("pa-topology", [])["pus"]]
    if len(pus) < 2:
        pytest.skip("needs two PUs")
    documents = run_json(
        "pa-mem-contention",
        ["measure=bandwidth", "bytes=16KiB,1MiB", "load_bytes=4MiB", f"cpu={pus[0]}",
         f"load_cpu={pus[1]}", *FAST],
    )  # fmt: skip
    assert [(d["params"]["bytes"], d["params"]["load"]) for d in documents] == [
        (size, load) for size in (16 * KiB, MiB) for load in ("none", "read", "write")
    ]
    assert all(d["derived"]["verified"] and len(d["samples"]["bandwidth_Bps"]) == 3
               for d in documents)  # fmt: skip


def test_a_series_point_out_of_range_fails_before_measuring():
    with pytest.raises(UserError, match="bytes=100 is out of range"):
        run_json("pa-mem-latency", ["bytes=16KiB,100", *FAST])


def _stored(db) -> list[tuple[int, dict]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT bytes, params FROM results ORDER BY id").fetchall()
    return [(size, json.loads(params)) for size, params in rows]


def test_measure_stores_one_result_per_point_as_separate_launches_would(cli, tmp_path):
    series = cli("measure", "mem.latency", "bytes=16KiB..64KiB", "samples=3")
    assert series.code == 0, series.err
    stored = _stored(cli.db)
    assert [size for size, _ in stored] == [16 * KiB, 32 * KiB, 64 * KiB]
    alone = tmp_path / "alone.db"
    assert cli("measure", "mem.latency", "bytes=32KiB", "samples=3", db_path=alone).code == 0
    assert _stored(alone)[0][1] == stored[1][1]  # the very same parameters


def test_a_series_that_cannot_be_measured_says_so_for_every_point(cli):
    """Remote NUMA on a one-node machine: one "not measurable" result per size (on a machine
    with several nodes, one measured result per size)."""
    from perfatlas.machine.topology import Machine

    result = cli("measure", "mem.latency", "bytes=16KiB,1MiB", "node=remote", "samples=3")
    assert result.code == 0, result.err
    assert [size for size, _ in _stored(cli.db)] == [16 * KiB, MiB]
    with sqlite3.connect(cli.db) as connection:
        reasons = [row[0] for row in connection.execute("SELECT not_measurable FROM results")]
    one_node = len(Machine.detect().numa_nodes) == 1
    assert all(bool(reason) == one_node for reason in reasons)


def test_a_bad_series_is_one_sentence_and_status_2(cli):
    result = cli("measure", "mem.bandwidth", "bytes=64KiB..4KiB")
    assert result.code == 2
    assert "is not a size series" in result.err and len(result.err.strip().splitlines()) == 1
    result = cli("measure", "noise", "cpus=0,1", "duration=1ms..2ms")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
