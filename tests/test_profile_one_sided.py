"""One-sided communication joined with the comm atlas (docs/profile.md, Against this machine):
pa-ipm-character's fenced MPI_Put loop profiled for real, its transfers predicted from the
stored comm.rma curve and its fences from the stored barrier (8-byte puts: latency-bound, 1 MiB
puts: bandwidth-bound, one rank computing 3x longer: waiting), the curve measured where the
store lacks it (--atlas auto); and the join's one-sided rules on documents made here."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from machine_load import skip_when_cores_are_busy
from test_profile_atlas import perfatlas, profiled

from perfatlas.comm.comm_atlas import (
    CommAtlas,
    collective_ns,
    message_ns,
    rma_ns,
    stored_comm_atlas,
)
from perfatlas.machine.link_class import LINK_CLASSES
from perfatlas.profile.atlas_gaps import atlas_gaps
from perfatlas.profile.atlas_join import ONE_SIDED, atlas_join
from perfatlas.profile.rank_placement import RankPlace
from perfatlas.store.database import Store

PUTS = 2000  # per rank
RMA_SUITE = """
description = "the one-sided atlas a profile's join needs, measured quickly"
[[step]]
benchmark = "comm.rma"
np = 2
cases = "one"
max_count = 131072
samples = 7
[[step]]
benchmark = "comm.barrier"
np = 2
samples = 7
"""


@pytest.fixture(scope="module")
def rma_db(tmp_path_factory) -> Path:
    """A database holding this machine's comm.rma (case one, to 1 MiB) and barrier at np = 2."""
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    folder = tmp_path_factory.mktemp("rma")
    (folder / "rma.toml").write_text(RMA_SUITE)
    db = folder / "perfatlas.db"
    code, _, err = perfatlas(db, "run", str(folder / "rma.toml"), "--out", str(folder))
    assert code == 0, err
    return db


def access_row(shown: dict) -> dict:
    [row] = [r for r in shown["profile"]["against"]["rows"] if r["region"] == "access"]
    return row


def test_a_fenced_put_loop_is_predicted_from_the_stored_rma_curve_and_barrier(rma_db, tmp_path):
    shown = profiled(rma_db, tmp_path, 2, "rma", str(PUTS), "8", "0")
    row = access_row(shown)
    assert (row["call"], row["calls"]) == (ONE_SIDED, ["MPI_Put", "MPI_Win_fence"])
    assert (row["messages"], row["bytes"]) == (2 * PUTS, 2 * PUTS * 8)
    [link] = row["links"]
    assert link in LINK_CLASSES
    store = Store(rma_db)
    atlas = stored_comm_atlas(store, store.run(1)["fingerprint"])
    put = rma_ns(atlas, "put", link, 8)
    fence = collective_ns(atlas, "MPI_Barrier", 2, 0)
    assert row["predicted_s"] == pytest.approx((2 * PUTS * put + 2 * PUTS * fence) * 1e-9)
    assert row["verdict"] not in ("not joined", "minor"), row["evidence"]
    # the puts are one-sided, not point-to-point messages of the region
    assert {r["call"] for r in shown["profile"]["against"]["rows"]} == {ONE_SIDED, "MPI_Barrier"}
    assert "comm.rma of run 1 (get on" in "; ".join(shown["profile"]["against"]["sources"])


def test_small_fenced_puts_are_latency_bound(rma_db, tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    row = access_row(profiled(rma_db, tmp_path, 2, "rma", "20000", "8", "0"))
    assert row["verdict"] == "latency-bound", row["evidence"]
    assert "accesses and fences x" in row["evidence"]


def test_puts_where_one_rank_computes_longer_are_waiting(rma_db, tmp_path):
    row = access_row(profiled(rma_db, tmp_path, 2, "rma", "100", "8", "2000"))
    assert row["verdict"] == "waiting", row["evidence"]
    assert row["waiting_s"] >= 0.5 * 100 * 4e-3  # rank 0 waits 4 ms per fence for rank 1


def test_large_puts_are_predicted_from_the_rma_curve_s_bandwidth(rma_db, tmp_path):
    shown = profiled(rma_db, tmp_path, 2, "rma", "50", str(2**20), "0")
    row = access_row(shown)
    [link] = row["links"]
    store = Store(rma_db)
    atlas = stored_comm_atlas(store, store.run(1)["fingerprint"])
    assert atlas.rma["put"][link][-1][0] == 2**20  # 131072 doubles, measured
    put = rma_ns(atlas, "put", link, 2**20)
    fence = collective_ns(atlas, "MPI_Barrier", 2, 0)
    assert row["predicted_s"] == pytest.approx(2 * 50 * (put + fence) * 1e-9)
    assert row["latency_s"] < row["predicted_s"] / 2  # the bytes, not the accesses
    # judged (here Open MPI's read bandwidth-bound, MPICH's waiting: its fastest calls are near)
    assert row["verdict"] not in ("not joined", "minor"), row["evidence"]


def test_atlas_auto_measures_the_rma_curve_and_the_barrier_it_lacks(tmp_path):
    shown = profiled(None, tmp_path, 2, "rma", "200", "8", "0", budget="60")
    printed = shown["printed"]
    [run] = re.findall(r"one-sided curves on [a-z ]+ to 512 B: measured in [0-9.]+ s, run (\d+)\n",
                       printed)  # fmt: skip
    assert re.search(r"MPI_Barrier on 2 processes: measured in [0-9.]+ s, run \d+\n", printed)
    store = Store(tmp_path / "perfatlas.db")
    cases = {r.params["case"] for r in store.results(int(run), "comm.rma")}
    assert cases == {"one"}  # only the case the join reads
    row = access_row(shown)
    assert row["verdict"] not in ("not joined", "minor") and row["lacking"] == []


# -- the one-sided rules, on documents made here --------------------------------------------------
RMA = [[1, 500.0, 450.0, 550.0], [512, 1000.0, 900.0, 1100.0]]
PINGPONG = [[1, 1000.0, 900.0, 1100.0], [1 << 20, 101000.0, 100000.0, 102000.0]]
BARRIER = [[2, 2000.0, 1800.0, 2200.0]]


def one_sided_document(op: str, size: int, atlas: CommAtlas, fences: int = 0) -> dict:
    """Two ranks that made 100 `op` transfers of `size` bytes each on the same package."""
    return {
        "tasks": 2,
        "regions": [{"id": 0, "name": "", "path": "", "parent": None}],
        "calls": [],
        "point_to_point": [],
        "one_sided": [
            {"region": 0, "calls": ["MPI_Get", "MPI_Win_flush"], "rank_s": [[0, 1e-3], [1, 1e-3]],
             "floor_s": 1e-3, "fences": fences,
             "transfers": [{"op": op, "link": "same package", "messages": 200,
                            "bytes": 200 * size}]}
        ],
        "atlas": atlas.document,
    }  # fmt: skip


def test_gets_between_the_rma_curve_s_sizes_are_interpolated_and_fences_are_barriers():
    atlas = CommAtlas("f", barrier=BARRIER, rma={"get": {"same package": RMA}})
    [row] = atlas_join(one_sided_document("get", 64, atlas, fences=10)).rows
    expected = 200 * message_ns(RMA, 64) + 10 * 2000.0
    assert row.predicted_s == pytest.approx(expected * 1e-9)
    assert row.latency_s == pytest.approx((200 * 500.0 + 10 * 2000.0) * 1e-9)
    assert row.predicted_low_s == pytest.approx((200 * message_ns(RMA, 64, 1) + 10 * 1800) * 1e-9)


def test_what_the_one_sided_join_lacks_is_named_and_measured_as_comm_rma():
    atlas = CommAtlas("f", barrier=BARRIER, rma={"put": {"same package": RMA}})
    document = one_sided_document("get", 8, atlas, fences=1)
    join = atlas_join(document)
    assert join.rows[0].verdict == "not joined"
    assert join.missing == ["one-sided get curve on same package"]
    places = [RankPlace(r, "h", str(r), r, r, 0, 0, "this host") for r in (0, 1)]  # 2 L3s
    [gap] = atlas_gaps(document, atlas, places, None)
    assert (gap.what, gap.benchmark) == ("one-sided curves on same package to 512 B", "comm.rma")
    assert gap.params == {"np": 2, "samples": 7, "cases": "one", "max_count": 64}
    # a curve that ends below the transfers' size: measured again, to their size in doubles
    long = one_sided_document("put", 4096, atlas)
    gaps = {gap.benchmark: gap for gap in atlas_gaps(long, atlas, places, None)}
    assert gaps["comm.rma"].what == "one-sided curves on same package to 4 KiB"
    assert gaps["comm.rma"].params["max_count"] == 512
    assert gaps["comm.pingpong"].what == "ping-pong curve on same package"  # the join's lack
    # beyond the curve's largest size the extra bytes need the ping-pong curve of the link
    beyond = atlas_join(one_sided_document("put", 4096, atlas))
    assert beyond.missing == ["ping-pong curve on same package"]
    with_pingpong = CommAtlas("f", pingpong={"same package": PINGPONG}, rma=atlas.rma)
    assert not atlas_join(one_sided_document("put", 4096, with_pingpong)).missing
    # no fence: no barrier asked for
    assert atlas_join(one_sided_document("put", 8, CommAtlas("f", rma=atlas.rma))).missing == []
