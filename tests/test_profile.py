"""perfatlas profile: documents (docs/profile.md) checked and read, the partial view of rank files,
the command that preloads the library, the store and its migration, the report section, and the
whole command run for real under mpirun."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from native_build import partial_bin
from test_ipm import mpirun_command

from perfatlas.common.errors import UserError
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.launch.launchers import MpiFlavour
from perfatlas.launch.native import bin_dir
from perfatlas.machine.link_class import LINK_CLASSES
from perfatlas.profile import command as command_module
from perfatlas.profile.command import profiled
from perfatlas.profile.documents import load_profile, load_rank
from perfatlas.profile.partial import partial_profile
from perfatlas.profile.profile_files import FROM_RANK_FILES, read_folder
from perfatlas.profile.storage import headline
from perfatlas.report import write_profile_report, write_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData
from perfatlas.store.schema import SCHEMA_VERSION


def spread(total: float, low: float, high: float) -> dict:
    return {"sum": total, "min": low, "max": high, "avg": total / 2}


def region(id_, name, parent, wall, calc, mpi, io, lbst) -> dict:
    return {
        "id": id_,
        "name": name,
        "path": name,
        "parent": parent,
        "ranks": 2,
        "entries": 2,
        "wall_s": wall,
        "calc_s": calc,
        "mpi_s": mpi,
        "io_s": io,
        "lbst_s": lbst,
        "user_s": spread(1.9, 0.9, 1.0),
        "system_s": spread(0.1, 0.0, 0.1),
    }


def rank_entry(rank: int, calc: float, lbst: float) -> dict:
    return {
        "rank": rank,
        "host": "node1",
        "pid": 100 + rank,
        "partial": False,
        "wall_s": 1.0,
        "calc_s": calc,
        "mpi_s": 0.1,
        "io_s": 0.05,
        "lbst_s": lbst,
        "user_s": 0.95,
        "system_s": 0.05,
        "maxrss_bytes": 1.0e7,
        "overflow_events": 0,
    }


def profile_document() -> dict:
    """Two ranks, one region "solve": the example of docs/profile.md, filled in."""
    return {
        "schema": "perfatlas.ipm/1",
        "partial": False,
        "command": ["./app", "-n", "10"],
        "mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI",
        "tasks": 2,
        "hosts": ["node1"],
        "started_unix": 1795000000.5,
        "timer": {"source": "rdtsc (invariant TSC)", "resolution_ns": 10.0, "hz": 2.9e9},
        "lbst_method": "per region and collective call: a rank's time in the call minus the "
        "least time any calling rank spent in it",
        "wallclock_s": spread(2.0, 1.0, 1.0),
        "maxrss_bytes": spread(2.0e7, 1.0e7, 1.0e7),
        "hardware_counters": {"available": False, "reason": "PAPI: no hardware counters (a VM)"},
        "regions": [
            region(
                0,
                "",
                None,
                spread(2.0, 1.0, 1.0),
                spread(1.6, 0.75, 0.85),
                spread(0.2, 0.1, 0.1),
                spread(0.1, 0.05, 0.05),
                spread(0.1, 0.0, 0.1),
            ),
            region(
                1,
                "solve",
                0,
                spread(1.2, 0.6, 0.6),
                spread(1.0, 0.45, 0.55),
                spread(0.1, 0.05, 0.05),
                spread(0.0, 0.0, 0.0),
                spread(0.1, 0.0, 0.1),
            ),
        ],
        "calls": [
            {
                "region": 1,
                "call": "MPI_Allreduce",
                "category": "mpi",
                "collective": True,
                "count": 200,
                "bytes": 1600,
                "ranks": 2,
                "time_s": spread(0.02, 0.009, 0.011),
                "lbst_s": 0.002,
            },
            {
                "region": 0,
                "call": "MPI_Send",
                "category": "mpi",
                "collective": False,
                "count": 3,
                "bytes": 2400,
                "ranks": 1,
                "time_s": {"sum": 1.2e-5, "min": 1.2e-5, "max": 1.2e-5, "avg": 1.2e-5},
                "lbst_s": 0.0,
            },
        ],
        "histogram": [
            {"call": "MPI_Allreduce", "bucket": 4, "count": 200, "bytes": 1600, "time_s": 0.02},
            {"call": "MPI_Send", "bucket": 10, "count": 3, "bytes": 2400, "time_s": 1.2e-5},
        ],
        "matrix": {
            "what": "point-to-point and one-sided bytes and messages, sender row, receiver "
            "column (collectives excluded)",
            "bytes": [[0, 2400], [64, 0]],
            "messages": [[0, 3], [1, 0]],
        },
        "ranks": [rank_entry(0, 0.85, 0.0), rank_entry(1, 0.75, 0.1)],
        "table": {"capacity": 4096, "used_max": 14},
        "overflow": {"count": 0, "bytes": 0, "time_s": 0.0, "ranks": 0},
        "region_errors": {"regions_full": 0, "unbalanced_pops": 0, "mismatched_pops": 0},
    }


def rank_document(rank: int, regions: list[tuple], records: list[tuple], **extra) -> dict:
    """A perfatlas.ipm-rank/1 document: regions (id, name, parent, wall_s), records (call,
    region, bucket, peer, count, bytes, total_s)."""
    return {
        "schema": "perfatlas.ipm-rank/1",
        "rank": rank,
        "size": 2,
        "pid": 200 + rank,
        "table": {"capacity": 4096, "used": len(records)},
        "regions": [
            {
                "id": id_,
                "name": name,
                "parent": parent,
                "wall_s": wall,
                "calc_s": wall - 0.2,
                "mpi_s": 0.15,
                "io_s": 0.05,
                "entries": 1,
            }
            for id_, name, parent, wall in regions
        ],
        "region_errors": {"regions_full": 0, "unbalanced_pops": 0, "mismatched_pops": 0},
        "records": [
            dict(zip(("call", "region", "bucket", "peer", "count", "bytes", "total_s"), r))
            | {"min_s": 0.0, "max_s": r[6]}
            for r in records
        ],
        "overflow": {"count": 0, "bytes": 0, "total_s": 0.0, "min_s": 0.0, "max_s": 0.0},
        "partial": False,
        **extra,
    }


def write(path: Path, document) -> Path:
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


# -- documents ------------------------------------------------------------------------------------
def test_a_profile_as_the_contract_writes_it_loads(tmp_path):
    document = profile_document()
    assert load_profile(write(tmp_path / "p.json", document)) == document


def broken(change) -> dict:
    document = profile_document()
    change(document)
    return document


@pytest.mark.parametrize(
    "content, sentence",
    [
        (
            '{"schema": "perfatlas.ipm/1", "partial": fal',
            "{path} is not valid JSON (Expecting value at line 1 column 42): the file is "
            "truncated or corrupted",
        ),
        (
            "",
            "{path} is not valid JSON (Expecting value at line 1 column 1): the file is "
            "truncated or corrupted",
        ),
        (
            broken(lambda d: d.update(schema="perfatlas.result/1")),
            "{path} has schema 'perfatlas.result/1', not perfatlas.ipm/1: it is not a "
            "perfatlas-ipm profile",
        ),
        (
            broken(lambda d: d["regions"][1].pop("lbst_s")),
            "{path} is not a usable perfatlas-ipm profile: the field regions[1].lbst_s is missing",
        ),
        (
            broken(lambda d: d.pop("matrix")),
            "{path} is not a usable perfatlas-ipm profile: the field matrix is missing",
        ),
        (
            broken(lambda d: d.update(tasks="2")),
            "{path} is not a usable perfatlas-ipm profile: tasks is a string, not an integer",
        ),
        (
            broken(lambda d: d["calls"][0]["time_s"].update(sum=None)),
            "{path} is not a usable perfatlas-ipm profile: calls[0].time_s.sum is null, not a "
            "number",
        ),
        (
            broken(lambda d: d["matrix"]["bytes"].pop()),
            "{path} is not a usable perfatlas-ipm profile: matrix.bytes is 1 x 2, not tasks x "
            "tasks (2 x 2)",
        ),
        (
            broken(lambda d: d["calls"][1].update(region=7)),
            "{path} is not a usable perfatlas-ipm profile: calls[1].region 7 is not the id of a "
            "region",
        ),
        (
            [1, 2],
            "{path} is not a usable perfatlas-ipm profile: the document is a list, not an object",
        ),
    ],
)
def test_a_bad_profile_is_one_sentence_naming_the_file(tmp_path, content, sentence):
    path = write(tmp_path / "ipm-profile.json", content)
    with pytest.raises(UserError) as error:
        load_profile(path)
    assert str(error.value) == sentence.format(path=path)


def test_a_missing_profile_file_is_one_sentence(tmp_path):
    with pytest.raises(UserError, match=r"^cannot read .*nothing.json: No such file"):
        load_profile(tmp_path / "nothing.json")


def test_a_rank_file_without_records_is_refused(tmp_path):
    document = rank_document(0, [(0, "", None, 1.0)], [])
    del document["records"]
    path = write(tmp_path / "ipm-rank-0.json", document)
    with pytest.raises(UserError) as error:
        load_rank(path)
    assert str(error.value) == (
        f"{path} is not a usable perfatlas-ipm rank file: the field records is missing"
    )


# -- the partial view -----------------------------------------------------------------------------
def aborted_ranks() -> list[dict]:
    """Rank 1 called MPI_Abort; it interned region "b" before "a", so its ids differ."""
    rank0 = rank_document(
        0,
        [(0, "", None, 1.0), (1, "a", 0, 0.5), (2, "b", 0, 0.3)],
        [
            ("MPI_Send", 1, 10, 1, 3, 2400, 0.003),
            ("MPI_Barrier", 0, 0, None, 1, 0, 0.01),
            ("MPI_File_write", 2, 7, None, 1, 100, 0.02),
        ],
    )
    rank1 = rank_document(
        1,
        [(0, "", None, 0.8), (1, "b", 0, 0.2), (2, "a", 0, 0.4)],
        [("MPI_Recv", 2, 10, 0, 3, 2400, 0.004), ("MPI_Barrier", 0, 0, None, 1, 0, 0.03)],
        partial=True,
        reason="MPI_Abort",
    )
    return [rank0, rank1]


def test_rank_files_of_an_aborted_program_make_a_partial_view_merged_by_region_path(tmp_path):
    for document in aborted_ranks():
        write(tmp_path / f"ipm-rank-{document['rank']}.json", document)
    view = read_folder(tmp_path, ["mpirun", "-np", "2", "./app"])
    assert view["partial"] is True and view["partial_reason"] == "MPI_Abort on rank 1"
    assert view["tasks"] == 2 and view["matrix"] is None
    assert [(r["id"], r["path"], r["parent"]) for r in view["regions"]] == [
        (0, "", None),
        (1, "a", 0),
        (2, "b", 0),
    ]
    assert view["regions"][1]["wall_s"] == {"sum": 0.9, "min": 0.4, "max": 0.5, "avg": 0.45}
    calls = {(c["region"], c["call"]): c for c in view["calls"]}
    assert calls[(0, "MPI_Barrier")]["ranks"] == 2 and calls[(0, "MPI_Barrier")]["count"] == 2
    assert calls[(0, "MPI_Barrier")]["time_s"] == {
        "sum": 0.04,
        "min": 0.01,
        "max": 0.03,
        "avg": 0.02,
    }
    assert (calls[(1, "MPI_Send")]["count"], calls[(1, "MPI_Send")]["bytes"]) == (3, 2400)
    assert calls[(1, "MPI_Recv")]["ranks"] == 1  # rank 1's region 2 is "a"
    assert calls[(2, "MPI_File_write")]["category"] == "mpi-io"
    assert {(h["call"], h["bucket"], h["count"]) for h in view["histogram"]} == {
        ("MPI_Barrier", 0, 2),
        ("MPI_File_write", 7, 1),
        ("MPI_Recv", 10, 3),
        ("MPI_Send", 10, 3),
    }
    assert [(r["rank"], r["wall_s"], r["partial"]) for r in view["ranks"]] == [
        (0, 1.0, False),
        (1, 0.8, True),
    ]
    assert view["wallclock_s"] == {"sum": 1.8, "min": 0.8, "max": 1.0, "avg": 0.9}


def test_a_missing_rank_file_and_a_missing_profile_are_named_in_the_reason():
    (rank0,) = aborted_ranks()[:1]
    assert partial_profile([rank0], [])["partial_reason"] == "no rank file from rank 1 of 2"
    complete = [dict(r, partial=False) for r in aborted_ranks()]
    assert partial_profile(complete, [])["partial_reason"] == "rank 0 wrote no ipm-profile.json"


def test_record_kinds_give_a_partial_view_its_matrix_and_load_imbalance():
    kinds = {"MPI_Send": "send", "MPI_Recv": "recv", "MPI_Barrier": "coll", "MPI_File_write": "io"}
    ranks = aborted_ranks()
    for rank in ranks:
        for record in rank["records"]:
            record["kind"] = kinds[record["call"]]
    view = partial_profile(ranks, ["./app"])
    assert view["matrix"]["bytes"] == [[0, 2400], [0, 0]]
    assert view["matrix"]["messages"] == [[0, 3], [0, 0]]
    calls = {(c["region"], c["call"]): c for c in view["calls"]}
    barrier = calls[(0, "MPI_Barrier")]
    assert barrier["collective"] is True and barrier["lbst_s"] == pytest.approx(0.02)
    assert (
        calls[(1, "MPI_Send")]["collective"] is False and calls[(1, "MPI_Send")]["lbst_s"] is None
    )
    whole = view["regions"][0]
    assert whole["lbst_s"]["max"] == pytest.approx(0.02) and whole["lbst_s"]["min"] == 0.0
    assert whole["mpi_s"]["min"] == pytest.approx(0.13) and whole["mpi_s"]["max"] == 0.15
    assert [r["lbst_s"] for r in view["ranks"]] == pytest.approx([0.0, 0.02])
    assert "left a file" in view["lbst_method"]


def test_a_partial_view_written_with_json_loads_again(tmp_path):
    view = partial_profile(aborted_ranks(), ["./app"])
    assert load_profile(write(tmp_path / "copy.json", view)) == view


# -- the command that preloads the library --------------------------------------------------------
@pytest.fixture
def fake_launcher(tmp_path, monkeypatch):
    """A `mpirun` whose MPI the test chooses (detect_flavour answers what the test says)."""
    launcher = tmp_path / "mpirun"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    monkeypatch.delenv("LD_PRELOAD", raising=False)

    def use(family: str) -> str:
        flavour = MpiFlavour(family, f"{family} 1.0")
        monkeypatch.setattr(command_module, "detect_flavour", lambda path: flavour)
        return str(launcher)

    return use


def test_open_mpi_exports_the_library_with_x_right_after_the_launcher(fake_launcher, tmp_path):
    mpirun = fake_launcher("openmpi")
    lib, folder = tmp_path / "lib.so", tmp_path / "out"
    run = profiled([mpirun, "-np", "4", "/bin/true", "a"], folder, lib)
    assert run.argv == [
        mpirun,
        "-x",
        f"LD_PRELOAD={lib}",
        "-x",
        f"PERFATLAS_IPM_DIR={folder}",
        "-np",
        "4",
        "/bin/true",
        "a",
    ]
    assert (run.env, run.program, run.mpi) == ({}, "/bin/true", "openmpi")


def test_mpich_exports_the_library_with_genv(fake_launcher, tmp_path):
    mpiexec = fake_launcher("mpich")
    lib, folder = tmp_path / "lib.so", tmp_path / "out"
    run = profiled([mpiexec, "-n", "2", "/bin/true"], folder, lib)
    assert run.argv == [
        mpiexec,
        "-genv",
        "LD_PRELOAD",
        str(lib),
        "-genv",
        "PERFATLAS_IPM_DIR",
        str(folder),
        "-n",
        "2",
        "/bin/true",
    ]
    assert (run.env, run.program, run.mpi) == ({}, "/bin/true", "mpich")


def test_a_plain_program_gets_the_variables_in_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LD_PRELOAD", "/opt/other.so")
    lib, folder = tmp_path / "lib.so", tmp_path / "out"
    run = profiled(["true", "x"], folder, lib)
    assert run.argv == ["true", "x"] and run.program == "true" and run.mpi is None
    assert run.env == {"LD_PRELOAD": f"{lib}:/opt/other.so", "PERFATLAS_IPM_DIR": str(folder)}


def test_the_users_library_settings_reach_every_rank_through_the_launcher(
    fake_launcher, tmp_path, monkeypatch
):
    """PERFATLAS_IPM_CALLSTACK, PERFATLAS_IPM_TABLE_SIZE and PERFATLAS_IPM_UNWINDER from
    perfatlas's environment are exported like the library (a launcher passes no other variable
    to other hosts); a depth the library cannot keep, or an unwinder it does not know, is one
    sentence before anything runs."""
    mpirun = fake_launcher("openmpi")
    monkeypatch.setenv("PERFATLAS_IPM_CALLSTACK", "4")
    monkeypatch.setenv("PERFATLAS_IPM_TABLE_SIZE", "64")
    monkeypatch.setenv("PERFATLAS_IPM_UNWINDER", "backtrace")
    run = profiled([mpirun, "-np", "2", "/bin/true"], tmp_path, tmp_path / "lib.so")
    assert run.argv[5:11] == [
        "-x",
        "PERFATLAS_IPM_CALLSTACK=4",
        "-x",
        "PERFATLAS_IPM_TABLE_SIZE=64",
        "-x",
        "PERFATLAS_IPM_UNWINDER=backtrace",
    ]
    monkeypatch.setenv("PERFATLAS_IPM_UNWINDER", "gdb")
    with pytest.raises(UserError, match=r"PERFATLAS_IPM_UNWINDER='gdb' is neither libunwind"):
        profiled([mpirun, "-np", "2", "/bin/true"], tmp_path, tmp_path / "lib.so")
    monkeypatch.delenv("PERFATLAS_IPM_UNWINDER")
    for bad in ("9", "-1", "two", "1.5"):
        monkeypatch.setenv("PERFATLAS_IPM_CALLSTACK", bad)
        with pytest.raises(
            UserError, match=r"is not a number of frames from 0 \(no call sites\) to 8"
        ):
            profiled([mpirun, "-np", "2", "/bin/true"], tmp_path, tmp_path / "lib.so")


def test_a_launcher_of_an_unknown_mpi_is_one_sentence(fake_launcher, tmp_path):
    mpirun = fake_launcher("unknown")
    with pytest.raises(UserError, match=r"cannot tell which MPI .*mpirun belongs to"):
        profiled([mpirun, "-np", "2", "/bin/true"], tmp_path, tmp_path / "lib.so")


# -- the store --------------------------------------------------------------------------------------
def start(store: Store) -> int:
    return store.start_run(
        fingerprint="f", topology={}, context={}, suite="profile", argv=["perfatlas"], software={}
    )


def test_a_profile_is_stored_and_read_back(tmp_path):
    store = Store(tmp_path / "p.db")
    run_id = start(store)
    document = profile_document()
    profile_id = store.add_profile(run_id, ["mpirun", "./app"], document)
    assert store.profiles(run_id) == [
        {"id": profile_id, "command": ["mpirun", "./app"], "partial": False, "document": document}
    ]
    assert store.profiles(run_id + 1) == []


def test_the_headline_figures_are_the_slowest_rank_and_the_share_in_mpi():
    figures = headline(profile_document())
    # wall max 1.0 s; (mpi 0.2 + lbst 0.1) / wall 2.0 = 0.15
    assert figures["samples"] == {"wallclock_s": [1.0], "comm_fraction": [pytest.approx(0.15)]}
    assert figures["params"] == {"command": "./app -n 10", "tasks": 2}
    no_times = partial_profile(aborted_ranks(), [])
    no_times["wallclock_s"] = None
    assert headline(no_times) is None


def test_a_version_1_database_is_migrated_and_keeps_everything(tmp_path):
    path = tmp_path / "old.db"
    store = Store(path)
    run_id = start(store)
    store.add_document(
        run_id,
        {
            "schema": "perfatlas.result/1",
            "benchmark": "mem.latency",
            "params": {"bytes": 4096},
            "samples": {"latency_ns": [1.0, 2.0, 3.0]},
            "units": {"latency_ns": "ns"},
        },
        [WarningRecord(Kind.FEW_SAMPLES, "only 3 samples", "use samples=6", "latency_ns")],
    )
    store.finish_run(run_id, "complete")
    store.close()
    db = sqlite3.connect(path)  # back to what version 1 was: no profiles or scenario tables
    for table in ("profiles", "scenario_jobs", "scenarios"):
        db.execute(f"DROP TABLE {table}")
    db.execute("UPDATE schema_version SET version = 1")
    db.commit()
    before = (
        db.execute("SELECT * FROM results").fetchall(),
        db.execute("SELECT * FROM runs").fetchall(),
    )
    db.close()

    store = Store(path)
    assert store.db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert SCHEMA_VERSION >= 2
    after = (
        store.db.execute("SELECT * FROM results").fetchall(),
        store.db.execute("SELECT * FROM runs").fetchall(),
    )
    assert after == before
    assert store.profiles(run_id) == []
    store.add_profile(run_id, ["./app"], profile_document())
    assert len(store.profiles(run_id)) == 1


# -- the report -------------------------------------------------------------------------------------
def section_html(html: str) -> str:
    match = re.search(r'<section id="profile">(.*?)</section>', html, re.S)
    assert match, "the profile section is missing"
    return match.group(1)


@pytest.fixture
def profile_report(tmp_path) -> Path:
    store = Store(tmp_path / "p.db")
    run_id = start(store)
    store.add_profile(run_id, ["./app", "-n", "10"], profile_document())
    store.finish_run(run_id, "complete")
    return write_report(RunData.load(store, run_id), tmp_path / "report.html")


def test_the_report_draws_regions_calls_matrix_histogram_and_ranks(profile_report):
    html = section_html(profile_report.read_text())
    assert html.count("<svg") == 3  # regions, matrix beside histogram, ranks
    for text in ("CALC", "MPI", "I/O", "LBST", "solve", "(whole program)"):  # stacked bars
        assert f">{text}<" in html or text in html, text
    # The top-calls table: MPI_Allreduce first, 20 ms = 1.0 % of 2 s, 200 calls, 1600 bytes.
    row = re.search(r"<tr><td>MPI_Allreduce</td>(.*?)</tr>", html, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells == [
        "solve",
        "mpi",
        "20 ms",
        "1.0 %",
        "9 ms .. 11 ms",
        "200",
        "1.562 KiB",
        "2",
        "2 ms",
    ]
    assert html.index("MPI_Allreduce") < html.index("<td>MPI_Send</td>")
    assert "2.344 KiB" in html and "64 B" in html  # matrix cells: rank 0 -> 1, rank 1 -> 0
    assert "bucket b holds [2^(b-1), 2^b) bytes" in html and ">512<" in html  # MPI_Send: 800 B
    # MPI 0.2 s and LBST 0.1 s of 2 s: IPM's %comm is their sum, each shown apart (as in show)
    assert "15.0 % of all ranks&#39; wallclock (MPI 10.0 %, LBST 5.0 %)" in html
    assert "Per-rank imbalance" in html and "CALC ranges 750 ms .. 850 ms" in html


def test_chromium_renders_the_profile_section(profile_report, render_html):
    dom = render_html(profile_report, "--dump-dom", "--virtual-time-budget=2000")
    html = section_html(dom)
    assert "MPI profile (perfatlas-ipm)" in dom and html.count("<svg") == 3


def test_a_partial_profile_says_so_and_draws_what_it_has(tmp_path):
    view = partial_profile(aborted_ranks(), ["./app"])
    path = write_profile_report(view, tmp_path / "copy.json", tmp_path / "r.html")
    html = section_html(path.read_text())
    assert "Partial profile: MPI_Abort on rank 1" in html
    assert html.count("<svg") == 3  # regions, histogram, ranks
    assert "Left:" not in html  # no matrix in a partial view


# -- the command line -------------------------------------------------------------------------------
def count(db: Path, table: str) -> int:
    return sqlite3.connect(db).execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_report_profile_draws_a_file_and_refuses_a_corrupted_one(cli, tmp_path):
    good = write(tmp_path / "ipm-profile.json", profile_document())
    out = tmp_path / "p.html"
    result = cli("report", "--profile", str(good), "-o", str(out))
    assert result.code == 0, result.err
    sections = re.findall(r'<section id="([^"]+)"', out.read_text())
    assert sections == ["profile", "profile-against-machine"]
    bad = write(tmp_path / "bad.json", json.dumps(profile_document())[:300])
    result = cli("report", "--profile", str(bad), "-o", str(out))
    assert result.code == 2
    assert re.fullmatch(
        rf"perfatlas: {re.escape(str(bad))} is not valid JSON \(.*\): the file is truncated or "
        r"corrupted\n",
        result.err,
    )


@pytest.fixture
def stored_once(cli):
    """A database that already holds a run, which no bad input may lose."""
    store = Store(cli.db)
    store.finish_run(start(store), "complete")
    store.close()
    return cli.db


@pytest.mark.parametrize(
    "args, sentence",
    [
        (
            [],
            "no command to profile: give it after --, e.g. perfatlas profile -- mpirun -np 4 ./app",
        ),
        (
            ["--"],
            "no command to profile: give it after --, e.g. perfatlas profile -- mpirun -np 4 ./app",
        ),
        (
            ["--", "./no-such-app"],
            "the command ./no-such-app was not found (no such file, and not on PATH)",
        ),
        (
            ["--", "/bin/true"],
            "/bin/true wrote no profile: it never called MPI_Init (is it an MPI program?)",
        ),
        (["--", "/bin/false"], "/bin/false exited with status 1 before any rank wrote a profile"),
    ],
)
def test_bad_input_is_one_sentence_and_loses_nothing(cli, stored_once, tmp_path, args, sentence):
    result = cli("profile", "--out", str(tmp_path / "out"), *args)
    assert (result.code, result.err) == (2, f"perfatlas: {sentence}\n")
    assert count(stored_once, "runs") == 1 and count(stored_once, "profiles") == 0
    assert not (tmp_path / "out").exists()  # the folder it made for nothing is gone


def test_an_unwritable_out_folder_is_one_sentence(cli, stored_once, tmp_path):
    (tmp_path / "file").write_text("")
    result = cli("profile", "--out", str(tmp_path / "file" / "sub"), "--", "/bin/true")
    assert (
        result.err
        == f"perfatlas: cannot write the profile to {tmp_path}/file/sub: Not a directory\n"
    )
    assert result.code == 2 and count(stored_once, "runs") == 1


def test_an_out_folder_holding_a_profile_is_refused(cli, tmp_path):
    write(tmp_path / "ipm-profile.json", profile_document())
    result = cli("profile", "--out", str(tmp_path), "--", "/bin/true")
    assert result.code == 2
    assert result.err == (
        f"perfatlas: {tmp_path} already holds a profile (ipm-profile.json); give a new or empty "
        "folder with --out\n"
    )


def test_a_missing_library_is_one_sentence(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(tmp_path))
    result = cli("profile", "--", "/bin/true")
    assert result.code == 2
    assert result.err.startswith(
        f"perfatlas: perfatlas-ipm is not built: {tmp_path}/libperfatlas-ipm.so is missing"
    )
    assert "rebuild with an MPI" in result.err


def test_a_build_without_mpi_says_so_from_its_parts(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(partial_bin(tmp_path / "bin", {"MPI": ()})))
    result = cli("profile", "--", "/bin/true")
    assert (result.code, result.err) == (
        2,
        "perfatlas: perfatlas-ipm is not built here: MPI: MPI was not found at build time; "
        "rebuild with an MPI (docs/install.md)\n",
    )


def test_a_failing_program_has_its_partial_profile_stored_and_flagged(cli, tmp_path, read_json):
    """A stand-in program that writes the rank files of an aborted run, then exits 3."""
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for document in aborted_ranks():
        write(ranks / f"ipm-rank-{document['rank']}.json", document)
    program = tmp_path / "aborts"
    program.write_text(f'#!/bin/sh\ncp {ranks}/*.json "$PERFATLAS_IPM_DIR"\nexit 3\n')
    program.chmod(0o755)
    out, copy_ = tmp_path / "out", tmp_path / "profile.json"
    result = cli("profile", "--out", str(out), "--json", str(copy_), "--", str(program))
    assert result.code == 2
    assert (
        result.err == f"perfatlas: {program} exited with status 3; its profile is stored as run 1\n"
    )
    assert "stored as run 1" in result.out and "partial profile: MPI_Abort on rank 1" in result.out
    store = Store(cli.db)
    (stored,) = store.profiles(1)
    assert stored["partial"] and stored["document"] == read_json(copy_)
    assert store.run(1)["status"] == "failed" and store.run(1)["suite"] == "profile"
    assert {r.metric for r in store.results(1, "ipm.profile")} == {"wallclock_s", "comm_fraction"}
    assert (out / "report.html").is_file()


# -- for real: pa-ipm-exact under mpirun, np = 2 -------------------------------------------------
def test_perfatlas_profile_runs_an_mpi_program_and_stores_its_profile(cli, tmp_path, read_json):
    out, copy_ = tmp_path / "out", tmp_path / "profile.json"
    exact = str(bin_dir() / "pa-ipm-exact")
    # exact.c writes its data files into the folder it is given (tests/test_ipm.py checks them).
    command = [*mpirun_command(), exact, str(tmp_path)]
    result = cli("profile", "--out", str(out), "--json", str(copy_), "--", *command)
    assert result.code == 0, result.err
    assert result.out.startswith(f"stored as run 1 in {cli.db}; profile files in {out}\n")
    assert (out / "ipm-profile.json").exists() and "partial profile" not in result.out
    store = Store(cli.db)
    (stored,) = store.profiles(1)
    document = stored["document"]
    # The library's profile, and the call sites of its rank files (test_ipm_sites checks them).
    assert document == read_json(copy_)
    # ... and what perfatlas adds: the rank files' call sites, messages by link class and
    # point-to-point time by rank, and the comm atlas of this machine (none stored here).
    added = (*FROM_RANK_FILES, "atlas")
    assert {k: v for k, v in document.items() if k not in added} == read_json(
        out / "ipm-profile.json"
    )
    assert document["atlas"]["pingpong"] == {} and document["atlas"]["allreduce"] == []
    assert sum(site["count"] for site in document["call_sites"]["sites"]) == sum(
        call["count"] for call in document["calls"]
    )
    assert stored["partial"] is False and document["tasks"] == 2
    # What exact.c does (tests/test_ipm.py), summed over the ranks.
    paths = {region["id"]: region["path"] for region in document["regions"]}
    calls = {(paths[c["region"]], c["call"]): c for c in document["calls"]}
    send = calls[("phase1", "MPI_Send")]
    assert (send["count"], send["bytes"], send["ranks"]) == (3, 2400, 1)
    allreduce = calls[("", "MPI_Allreduce")]
    assert (allreduce["count"], allreduce["bytes"], allreduce["ranks"]) == (2, 16, 2)
    assert calls[("outer/inner", "MPI_Reduce")]["count"] == 4
    histogram = {(h["call"], h["bucket"]): h for h in document["histogram"]}
    assert (histogram[("MPI_Send", 10)]["count"], histogram[("MPI_Send", 10)]["bytes"]) == (3, 2400)
    assert document["matrix"]["bytes"][0][1] >= 2400  # phase1's sends, and more
    [phase1] = [r for r in document["link_traffic"] if paths[r["region"]] == "phase1"]
    assert (phase1["call"], phase1["bucket"], phase1["messages"], phase1["bytes"]) == (
        "MPI_Send",
        10,
        3,
        2400,
    )
    assert phase1["link"] in LINK_CLASSES  # the two ranks' places on this machine
    sent = sum(r["messages"] for r in document["link_traffic"])
    assert sent == sum(map(sum, document["matrix"]["messages"]))
    # The headline figures are ordinary results of the run.
    figures = {r.metric: r.median for r in store.results(1, "ipm.profile")}
    assert figures["wallclock_s"] == document["wallclock_s"]["max"]
    assert 0 < figures["comm_fraction"] < 1
    html = section_html((out / "report.html").read_text())
    assert "MPI_Send" in html and "communication matrix" in html and html.count("<svg") == 3


def test_an_aborted_mpi_program_is_stored_as_a_partial_profile(cli, tmp_path):
    """pa-ipm-partial abort: the last rank calls MPI_Abort; no ipm-profile.json is written."""
    out = tmp_path / "out"
    aborts = [str(bin_dir() / "pa-ipm-partial"), "abort"]
    result = cli("profile", "--out", str(out), "--", *mpirun_command(), *aborts)
    assert result.code == 2
    assert re.fullmatch(
        rf"perfatlas: {re.escape(aborts[0])} (exited with status \d+|was killed by \w+); its "
        r"profile is stored as run 1\n",
        result.err,
    )
    assert not (out / "ipm-profile.json").exists()
    store = Store(cli.db)
    (stored,) = store.profiles(1)
    assert stored["partial"] and "MPI_Abort on rank 1" in stored["document"]["partial_reason"]
    assert store.run(1)["status"] == "failed"
    # the other rank is stopped by the launcher: with SIGTERM it writes its own file first
    [said] = set(re.findall(r"Partial profile: [^.<]*", (out / "report.html").read_text()))
    assert "MPI_Abort on rank 1" in said, said
