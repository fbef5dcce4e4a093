"""A profile joined with this machine's comm atlas (docs/profile.md, Against this machine):
programs of a known character (pa-ipm-character) profiled against an atlas measured for real
by `perfatlas run` in the same database -- a halo exchange of large messages (bandwidth-bound),
one of 8-byte messages and an allreduce loop (latency-bound), an exchange where one rank
computes 3x longer and one where the ranks do so in turn (waiting) -- and the join's rules on documents made here (unexplained, not
joined, bad input)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from machine_load import skip_when_cores_are_busy
from mpi_helpers import mpirun
from test_ipm import fortran_program
from test_profile import profile_document

from perfatlas.cli.entry import main
from perfatlas.comm.comm_atlas import (
    UNKNOWN_LINK,
    CommAtlas,
    collective_ns,
    message_ns,
    pingpong_link,
    stored_comm_atlas,
)
from perfatlas.common.errors import UserError
from perfatlas.launch.launchers import detect_flavour, mpi_family
from perfatlas.launch.native import bin_dir
from perfatlas.machine.link_class import LINK_CLASSES
from perfatlas.noise.analysis_noise import bsp_slowdown
from perfatlas.noise.series_noise import noise_measurements
from perfatlas.profile.atlas_join import LATENCY_SLACK, POINT_TO_POINT, atlas_join
from perfatlas.profile.documents import check_profile
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

CHARACTER = bin_dir() / "pa-ipm-character"
ATLAS_SUITE = """
description = "the comm atlas a profile's join needs, measured quickly"
[[step]]
benchmark = "comm.pingpong"
np = 2
samples = 7
[[step]]
benchmark = "comm.allreduce"
np = 2
min_bytes = 8
max_bytes = "1MiB"
samples = 7
[[step]]
benchmark = "comm.barrier"
np = 2
samples = 7
"""


def perfatlas(db: Path, *words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--db", str(db), *words])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def atlas_db(tmp_path_factory) -> Path:
    """A database holding this machine's comm atlas (ping-pong, allreduce, barrier at np = 2)."""
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    folder = tmp_path_factory.mktemp("atlas")
    (folder / "atlas.toml").write_text(ATLAS_SUITE)
    db = folder / "perfatlas.db"
    code, _, err = perfatlas(db, "run", str(folder / "atlas.toml"), "--out", str(folder))
    assert code == 0, err
    return db


def profiled(db: Path | None, folder: Path, np_: int, *args: str, atlas: str = "auto",
             budget: str = "0", program: Path = CHARACTER) -> dict:  # fmt: skip
    """`perfatlas profile` of pa-ipm-character ARGS into a copy of `db` (None: an empty one):
    the show --json of the profile, and what profile printed under "printed"."""
    folder.mkdir(exist_ok=True)
    own = folder / "perfatlas.db"
    if db is not None:
        with sqlite3.connect(db) as source, sqlite3.connect(own) as copy_:
            source.backup(copy_)  # its write-ahead log too
    launcher = mpirun(np_)
    if np_ <= (os.cpu_count() or 1) and detect_flavour(launcher[0]).family == "mpich":
        launcher += ["-bind-to", "core"]  # unbound, hydra's ranks may share a core for good
    command = [*launcher, str(program), *args]
    code, printed, err = perfatlas(own, "profile", "--out", str(folder / "out"), "--atlas", atlas,
                                   "--atlas-budget", budget, "--", *command)  # fmt: skip
    assert code == 0, err
    code, out, err = perfatlas(own, "show", "last", "--json")
    assert code == 0, err
    return {**json.loads(out), "printed": printed}


def only_row(shown: dict) -> dict:
    """The row of the program's region (the whole program holds its MPI_Barrier)."""
    rows = shown["profile"]["against"]["rows"]
    [row] = [r for r in rows if r["region"] in ("exchange", "reduce")]
    return row


# -- the stored atlas ----------------------------------------------------------------------------
def test_the_stored_atlas_holds_the_ping_pong_on_its_link_class(atlas_db):
    store = Store(atlas_db)
    run = store.run(1)
    atlas = stored_comm_atlas(store, run["fingerprint"])
    [(link, curve)] = atlas.pingpong.items()
    assert link in LINK_CLASSES
    pingpong = {
        r.params["bytes"]: r
        for r in store.results(1, "comm.pingpong")
        if r.metric == "latency_ns" and r.params.get("direction", "uni") == "uni"
    }
    assert [point[0] for point in curve] == sorted(pingpong)
    for size, median, low, high in curve:
        result = pingpong[size]
        assert (median, low, high) == (result.median, result.ci_lo, result.ci_hi)
        assert pingpong_link(result.document, run["topology"], run["host"]) == link
    # between measured sizes: log-log; beyond the largest, its time per byte
    (s1, t1, *_), (s2, t2, *_) = curve[-2:]
    assert message_ns(curve, (s1 * s2) ** 0.5) == pytest.approx((t1 * t2) ** 0.5)
    assert message_ns(curve, 2 * s2) == pytest.approx(2 * t2)
    reduce = {
        r.params["bytes"]: r.median
        for r in store.results(1, "comm.allreduce")
        if r.params.get("processes") == 2
    }
    assert collective_ns(atlas, "MPI_Allreduce", 2, 8) == pytest.approx(reduce[8])
    assert collective_ns(atlas, "MPI_Bcast", 2, 8) is None
    assert "comm.pingpong of run 1" in atlas.sources[0]


def test_another_machine_s_atlas_is_not_this_one_s(atlas_db):
    assert stored_comm_atlas(Store(atlas_db), "another fingerprint").empty


def test_another_mpi_s_atlas_is_not_this_one_s(atlas_db):
    store = Store(atlas_db)
    fingerprint = store.run(1)["fingerprint"]
    [pingpong] = store.results(1, "comm.pingpong")[:1]
    family = mpi_family(pingpong.document["placement"]["mpi_library"])
    other = {"openmpi": "mpich", "mpich": "openmpi"}[family]
    assert not stored_comm_atlas(store, fingerprint, family).empty
    assert stored_comm_atlas(store, fingerprint, other).empty


# -- verdicts on programs of a known character ------------------------------------------------------
def test_a_halo_exchange_of_large_messages_is_bandwidth_bound(atlas_db, tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    shown = profiled(atlas_db, tmp_path, 2, "halo", "300", str(2**20), "0")
    row = only_row(shown)
    assert (row["region"], row["call"], row["calls"]) == ("exchange", POINT_TO_POINT,
                                                          ["MPI_Sendrecv"])  # fmt: skip
    assert row["messages"] == 2 * 2 * 300 and row["bytes"] == 2 * 2 * 300 * 2**20
    assert row["verdict"] == "bandwidth-bound", row["evidence"]
    assert 0.4 < row["achieved"] < 1.5
    assert len(row["links"]) == 1 and row["links"][0] in LINK_CLASSES
    findings = shown["findings"]["findings"]
    [finding] = [f for f in findings if f["subject"] == "exchange: point-to-point"]
    assert finding["kind"] == "profile.against_machine"
    assert finding["value"] == pytest.approx(row["achieved"])
    assert finding["verdict"].startswith("bandwidth-bound: ")
    pairs = {(p["sender"], p["receiver"]): p for p in shown["profile"]["against"]["pairs"]}
    assert sorted(pairs) == [(0, 1), (1, 0)]
    for pair in pairs.values():  # a Sendrecv to each neighbour: both are rank 1 at np = 2
        assert (pair["messages"], pair["bytes"]) == (2 * 300, 2 * 300 * 2**20)
        assert pair["link"] == row["links"][0] and 0.3 < pair["achieved"] < 1.5
    html = (tmp_path / "out" / "report.html").read_text()
    section = html[html.index('<section id="profile-against-machine">') :]
    section = section[: section.index("</section>")]
    assert "bandwidth-bound" in section and section.count("<svg") == 1
    assert "the program's sends against the atlas" in section
    assert "the heaviest pairs against their links" in section.lower()


def test_an_exchange_of_small_messages_is_latency_bound(atlas_db, tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    row = only_row(profiled(atlas_db, tmp_path, 2, "halo", "20000", "8", "0"))
    assert row["messages"] == 2 * 2 * 20000
    assert row["verdict"] == "latency-bound", row["evidence"]
    assert row["latency_s"] >= row["predicted_s"] / 2


def test_an_allreduce_loop_is_joined_with_the_stored_allreduce(atlas_db, tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    row = only_row(profiled(atlas_db, tmp_path, 2, "allreduce", "20000", "8", "0"))
    assert (row["region"], row["call"], row["messages"]) == ("reduce", "MPI_Allreduce", 40000)
    assert row["verdict"] == "latency-bound", row["evidence"]
    store = Store(atlas_db)
    atlas = stored_comm_atlas(store, store.run(1)["fingerprint"])
    assert row["predicted_s"] == pytest.approx(40000 * collective_ns(atlas, "MPI_Allreduce", 2, 8)
                                               * 1e-9)  # fmt: skip


@pytest.mark.parametrize("np_", [2, 4])
def test_an_exchange_where_one_rank_computes_longer_is_waiting(atlas_db, tmp_path, np_):
    if np_ > (os.cpu_count() or 1):
        pytest.skip(
            f"np={np_} on {os.cpu_count()} cores: ranks that wait poll (MPICH) or yield late "
            "(Open MPI), so an oversubscribed rank's time is the scheduler's, not the program's"
        )
    row = only_row(profiled(atlas_db, tmp_path, np_, "halo", "100", "8", "2000"))
    assert row["verdict"] == "waiting", row["evidence"]
    # the others wait 2 x 2 ms per iteration for the last rank
    assert row["waiting_s"] >= 0.5 * (np_ - 1) * 100 * 4e-3


def test_an_exchange_whose_ranks_compute_longer_in_turn_is_waiting_in_turn(atlas_db, tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    row = only_row(profiled(atlas_db, tmp_path, 2, "turns", "200", "65536", "500"))
    # each rank waits 1 ms every other iteration: alike, so the LBST rule sees little
    assert row["waiting_s"] < 0.5 * row["measured_s"]
    assert row["verdict"] == "waiting" and "arrive late in turn" in row["evidence"]


# -- choosing the atlas ------------------------------------------------------------------------------
def test_atlas_none_joins_nothing_and_says_so(atlas_db, tmp_path):
    shown = profiled(atlas_db, tmp_path, 2, "halo", "10", "8", "0", atlas="none")
    against = shown["profile"]["against"]
    assert against["rows"] == [] and "--atlas none" in against["reason"]
    assert "profile.against_machine" not in {f["kind"] for f in shown["findings"]["findings"]}


def test_atlas_stored_without_one_refuses_before_the_program_runs(tmp_path):
    db, out = tmp_path / "empty.db", tmp_path / "out"
    command = [*mpirun(2), str(CHARACTER), "halo", "10", "8", "0"]
    code, _, err = perfatlas(db, "profile", "--out", str(out), "--atlas", "stored", "--", *command)
    assert code == 2
    assert err.startswith("perfatlas: --atlas stored: ") and "holds no comm atlas" in err
    assert not out.exists()  # made for the program, which never ran
    assert Store(db).runs() == []


def test_atlas_auto_measures_what_the_store_lacks_and_stores_it(tmp_path):
    skip_when_cores_are_busy()  # a ratio of times: the verdict needs the cores
    shown = profiled(None, tmp_path, 2, "halo", "100", str(2**20), "0", budget="60")
    printed = shown["printed"]
    assert re.search(r"the comm atlas lacks \d part\(s\) the join needs", printed), printed
    [run] = re.findall(r"ping-pong curve on [a-z ]+: measured in [0-9.]+ s, run (\d+)\n", printed)
    store = Store(tmp_path / "perfatlas.db")
    assert store.run(int(run))["suite"] == "profile atlas"
    assert store.results(int(run), "comm.pingpong")
    runs = store.runs()
    assert shown["run"]["id"] == max(r["id"] for r in runs) and shown["run"]["suite"] == "profile"
    row = only_row(shown)
    assert row["verdict"] == "bandwidth-bound", row["evidence"]
    assert f"comm.pingpong of run {run}" in shown["profile"]["against"]["sources"][0]
    # the next profile of this machine finds the curve stored
    again = profiled(tmp_path / "perfatlas.db", tmp_path / "again", 2, "halo", "10", "65536", "0",
                     budget="60")  # fmt: skip
    assert "ping-pong curve" not in again["printed"]


def test_what_exceeds_the_atlas_budget_is_not_measured_and_named(tmp_path):
    shown = profiled(None, tmp_path, 2, "halo", "10", "65536", "0", budget="0.001")
    assert re.search(r"ping-pong curve on [a-z ]+: not measured, \d+ s estimated would exceed "
                     r"the --atlas-budget of 0.001 s", shown["printed"]), shown["printed"]  # fmt: skip
    assert Store(tmp_path / "perfatlas.db").runs()[0]["suite"] == "profile"
    row = only_row(shown)
    assert row["verdict"] == "not joined" and "ping-pong curve on" in row["evidence"]


def test_a_budget_that_is_no_number_of_seconds_is_refused(tmp_path):
    code, _, err = perfatlas(tmp_path / "db", "profile", "--atlas-budget", "-1", "--", "true")
    assert code == 2 and "'-1' is not a number of seconds, 0 or more" in err


# -- Fortran ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, message_bytes",
    [
        # use mpi: rank 0 sends 4 integers to rank 1, each rank 2 doubles to the other
        ("pa-ipm-fortran", [16, 16, 16]),
        # use mpi_f08: rank 0 sends 3 doubles to rank 1, each rank 2 integers to the other
        ("pa-ipm-fortran-f08", [24, 8, 8]),
    ],
)
def test_a_fortran_program_gets_the_same_join(atlas_db, tmp_path, name, message_bytes):
    program = fortran_program(name)
    shown = profiled(atlas_db, tmp_path, 2, program=program)
    rows = {(r["region"], r["call"]): r for r in shown["profile"]["against"]["rows"]}
    sent = rows[("fortran", POINT_TO_POINT)]
    assert (sent["messages"], sent["bytes"]) == (len(message_bytes), sum(message_bytes))
    store = Store(atlas_db)
    atlas = stored_comm_atlas(store, store.run(1)["fingerprint"])
    [link] = sent["links"]
    expected = sum(message_ns(atlas.pingpong[link], size) for size in message_bytes) * 1e-9
    assert sent["predicted_s"] == pytest.approx(expected)
    reduce = rows[("fortran", "MPI_Allreduce")]
    each = collective_ns(atlas, "MPI_Allreduce", 2, reduce["bytes"] / reduce["messages"])
    assert reduce["predicted_s"] == pytest.approx(reduce["messages"] * each * 1e-9)
    assert "not joined" not in {r["verdict"] for r in rows.values()}


# -- the noise model of the program's superstep ----------------------------------------------------
def test_the_noise_model_takes_the_program_s_superstep_and_this_machine_s_noise(atlas_db, tmp_path):
    db = tmp_path / "noise.db"
    with sqlite3.connect(atlas_db) as source, sqlite3.connect(db) as copy_:
        source.backup(copy_)
    code, _, err = perfatlas(db, "measure", "noise", "cpus=all", "duration=1s")
    assert code == 0, err
    # 100 iterations of 200 us of work on rank 0 and 600 us on rank 1, each then an allreduce
    shown = profiled(db, tmp_path / "p", 2, "allreduce", "100", "8", "200")
    noise = shown["profile"]["against"]["noise"]
    assert noise["processes"] == [2, 20, 200]
    assert 0.9 * 400e3 < noise["superstep_ns"] < 1.5 * 400e3  # the ranks' mean work per call
    assert noise["source"].startswith("noise run 2: ")
    store = Store(db)
    [measurement] = noise_measurements(RunData.load(store, 2))
    curve = bsp_slowdown([c.series for c in measurement.cores], noise["superstep_ns"], (2, 20, 200))
    assert noise["slowdown"] == pytest.approx(list(curve.slowdown))
    found = [f for f in shown["findings"]["findings"] if f["kind"] == "profile.noise_slowdown"]
    assert [f["value"] for f in found] == pytest.approx(noise["slowdown"])
    assert all(f["method"].startswith("a model: ") for f in found)


def test_without_a_stored_noise_run_the_model_says_what_to_measure(atlas_db, tmp_path):
    shown = profiled(atlas_db, tmp_path, 2, "allreduce", "10", "8", "100")
    noise = shown["profile"]["against"]["noise"]
    assert noise == {"missing": "no stored noise run of this machine (measure one: perfatlas run "
                     "quick, or perfatlas measure noise cpus=all)"}  # fmt: skip


# -- the join's rules, on documents made here ------------------------------------------------------
CURVE = [[0, 1000.0, 900.0, 1100.0], [1024, 2000.0, 1800.0, 2200.0]]  # 1 us latency


def document(seconds_per_rank: list[float], link: str | None = "same package") -> dict:
    """Two ranks that sent 1000 messages of 8 bytes each in region 0, and the given times."""
    return {
        "tasks": 2,
        "regions": [{"id": 0, "name": "", "path": "", "parent": None}],
        "calls": [],
        "link_traffic": [
            {
                "region": 0,
                "call": "MPI_Send",
                "bucket": 4,
                "link": link,
                "messages": 1000,
                "bytes": 8000,
                "time_s": 0.001,
            }
        ],  # fmt: skip
        "point_to_point": [
            {
                "region": 0,
                "calls": ["MPI_Recv", "MPI_Send"],
                "rank_s": [[r, s] for r, s in enumerate(seconds_per_rank)],
            }
        ],  # fmt: skip
        "atlas": CommAtlas("f", pingpong={"same package": CURVE}, sources=["made here"]).document,
    }


def test_time_the_atlas_explains_is_latency_bound_and_more_is_unexplained():
    # 1000 messages x ~1 us (8 B: log-log between 1 B and 1 KiB) = ~1.1 ms predicted
    explained = atlas_join(document([0.001, 0.001])).rows[0]
    assert explained.verdict == "latency-bound" and explained.waiting_s == 0
    predicted = explained.predicted_s
    assert predicted == pytest.approx(1000 * message_ns(CURVE, 8) * 1e-9)
    too_slow = LATENCY_SLACK * explained.predicted_high_s  # on each rank: twice the slack
    row = atlas_join(document([too_slow, too_slow])).rows[0]
    assert row.verdict == "unexplained", row.evidence
    assert row.achieved == pytest.approx(predicted / (2 * too_slow))


def test_calls_slower_than_the_atlas_at_the_speed_of_their_fastest_are_waiting_in_turn():
    """Both ranks' totals alike, so no rank waits by the LBST rule; but their fastest calls
    reach the atlas: partners late in turn (LAMMPS's ghost exchanges at np = 2 read so)."""
    predicted = atlas_join(document([0.001, 0.001])).rows[0].predicted_s
    slow = document([5 * LATENCY_SLACK * predicted] * 2)
    slow["point_to_point"][0]["floor_s"] = 1.2 * predicted
    row = atlas_join(slow).rows[0]
    assert row.verdict == "waiting" and "arrive late in turn" in row.evidence
    slow["point_to_point"][0]["floor_s"] = 4 * LATENCY_SLACK * predicted
    assert atlas_join(slow).rows[0].verdict == "unexplained"


def test_a_link_the_atlas_has_no_curve_for_is_named():
    join = atlas_join(document([0.001, 0.001], link="across hosts"))
    assert join.rows[0].verdict == "not joined"
    assert join.missing == ["ping-pong curve on across hosts"]
    assert "across hosts" in join.rows[0].evidence


def test_an_atlas_whose_points_are_not_times_is_refused_with_its_field(tmp_path):
    good = profile_document()
    good["atlas"] = CommAtlas("f", pingpong={"same package": CURVE}).document
    check_profile(copy.deepcopy(good), tmp_path / "p.json")
    bad = copy.deepcopy(good)
    bad["atlas"]["pingpong"]["same package"][1] = [1024, 2000.0, 0.0, 2200.0]
    with pytest.raises(UserError, match=r"atlas\.pingpong\['same package'\]\[1\] is not 4 "):
        check_profile(bad, tmp_path / "p.json")


def test_a_ping_pong_whose_places_do_not_tell_is_on_an_unknown_link():
    ranks = [{"rank": 0, "host": "h", "cpu": 0}, {"rank": 1, "host": "h", "cpu": 1}]
    pingpong = {"placement": {"ranks": ranks, "involved": [0, 1]}}
    assert pingpong_link(pingpong, None, "h") == UNKNOWN_LINK  # no topology: no package
    ranks[1]["host"] = "elsewhere"
    assert pingpong_link(pingpong, None, "h") == "across hosts"
    assert pingpong_link({"placement": {"ranks": ranks, "involved": [0]}}, None, "h") == (
        UNKNOWN_LINK
    )
