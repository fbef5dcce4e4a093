"""perfatlas-ipm: pa-ipm-exact (native/ipm/tests/exact.c) runs under mpirun np = 2 with
libperfatlas-ipm.so preloaded; every count, byte, peer and region each rank wrote, and every figure
of the aggregated profile rank 0 wrote, is asserted exactly. A table too small for the program
folds exactly the events it cannot hold; programs that end in MPI_Abort or without MPI_Finalize
leave partial rank documents."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from perfatlas.launch.launchers import detect_flavour
from perfatlas.launch.native import executable
from perfatlas.profile.command import library, profiled
from perfatlas.profile.partial import region_paths

# One event kind: (call, region path, bytes per event, peer as a world rank, events).
Kind = tuple[str, str, int, int | None, int]

REGIONS = ["", "phase1", "outer", "outer/inner", "split", "inner", "wild", "io"]
SENDS = {"MPI_Send", "MPI_Isend", "MPI_Sendrecv"}  # the calls of exact.c in the matrix
POSIX = {"open", "write", "fsync", "close", "fopen", "fwrite", "fclose"}


def expected(rank: int) -> list[Kind]:
    """What exact.c does on `rank`, in program order (its header comment says the same)."""
    other = 1 - rank
    if rank == 0:
        phase1 = [("MPI_Send", "phase1", 800, 1, 3)]
        split = [("MPI_Recv", "split", 5, 1, 1)]  # sub-rank 0 of the reversed comm is world 1
        # 6 ints arrive at rank 1, 3 at rank 0: the bytes that arrived, from the real source.
        wild = [
            ("MPI_Send", "wild", 24, 1, 1),
            ("MPI_Irecv", "wild", 12, 1, 1),
            ("MPI_Waitany", "wild", 0, None, 1),
        ]
    else:
        phase1 = [("MPI_Recv", "phase1", 800, 0, 3)]
        split = [("MPI_Isend", "split", 5, 0, 1), ("MPI_Wait", "split", 0, None, 1)]
        wild = [("MPI_Recv", "wild", 24, 0, 1), ("MPI_Send", "wild", 12, 0, 1)]
    io = [
        ("open", "io", 0, None, 1),
        ("write", "io", 1000, None, 1),
        ("fsync", "io", 0, None, 1),
        ("close", "io", 0, None, 1),
        ("fopen", "io", 0, None, 1),
        ("fwrite", "io", 80, None, 1),
        ("fclose", "io", 0, None, 1),
        ("MPI_File_open", "io", 0, None, 1),
        ("MPI_File_write_at_all", "io", 64, None, 1),
        ("MPI_File_read_at", "io", 64, None, 1),
        ("MPI_File_close", "io", 0, None, 1),
    ]
    return [
        ("MPI_Comm_rank", "", 0, None, 2),  # of MPI_COMM_WORLD, then of the reversed comm
        ("MPI_Comm_size", "", 0, None, 1),
        *phase1,
        ("MPI_Allreduce", "", 8, None, 1),
        ("MPI_Barrier", "", 0, None, 1),
        ("MPI_Bcast", "outer", 40, 0, 1),
        ("MPI_Reduce", "outer/inner", 32, 1, 2),
        ("MPI_Barrier", "outer", 0, None, 1),
        ("MPI_Irecv", "", 64, other, 1),
        ("MPI_Isend", "", 64, other, 1),
        ("MPI_Waitall", "", 0, None, 1),
        ("MPI_Sendrecv", "", 4, other, 1),
        ("MPI_Comm_split", "", 0, None, 1),
        *split,
        ("MPI_Comm_free", "", 0, None, 1),
        ("MPI_Barrier", "phase1", 0, None, 1),
        ("MPI_Barrier", "inner", 0, None, 1),
        *wild,
        *io,
    ]


def mpirun_command() -> list[str]:
    """mpirun -np 2 (root permission included), or MPICH's mpiexec -n 2 under PERFATLAS_MPIRUN."""
    wanted = os.environ.get("PERFATLAS_MPIRUN") or "mpirun"
    mpirun = shutil.which(wanted)
    if mpirun is None:
        pytest.skip(f"no {wanted} on PATH")
    if detect_flavour(mpirun).family == "mpich":
        return [mpirun, "-n", "2"]
    return [mpirun, "-np", "2"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def run_profiled(
    folder: Path, program: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`program args` (an executable of the build) under mpirun np = 2 with the profiler
    preloaded, writing into folder, the way `perfatlas profile` runs it; env: further settings
    for the ranks."""
    return run_path_profiled(folder, executable(program), *args, env=env)


def run_path_profiled(
    folder: Path, program: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The same for the program at `program`."""
    command = profiled([*mpirun_command(), str(program), *args], folder, library(), env)
    return subprocess.run(
        command.argv,
        env={**os.environ, **command.env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def run_exact(
    folder: Path, env: dict[str, str] | None = None, program: str = "pa-ipm-exact"
) -> list[dict]:
    """A program (pa-ipm-exact unless told) that must succeed; the two rank documents."""
    done = run_profiled(folder, program, str(folder), env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    return [json.loads((folder / f"ipm-rank-{rank}.json").read_text()) for rank in (0, 1)]


def kinds(document: dict) -> list[Kind]:
    """The records by (call, region, bytes per event, peer) with their counts, summed over the
    call sites (test_ipm_sites checks those)."""
    paths = region_paths(document)
    found: dict[tuple, int] = {}
    for record in document["records"]:
        per_event = record["bytes"] // record["count"]
        assert record["bytes"] == per_event * record["count"]
        assert record["bucket"] == per_event.bit_length()  # bucket b: [2^(b-1), 2^b) bytes
        assert 0 <= record["min_s"] <= record["max_s"] <= record["total_s"]
        kind = (record["call"], paths[record["region"]], per_event, record["peer"])
        found[kind] = found.get(kind, 0) + record["count"]
    return [(*kind, count) for kind, count in found.items()]


def by_key(items: list[Kind]) -> list[Kind]:
    return sorted(items, key=repr)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ipm-full")
    run_exact(folder)
    return folder


@pytest.fixture(scope="module")
def full(full_run) -> list[dict]:
    return [json.loads((full_run / f"ipm-rank-{rank}.json").read_text()) for rank in (0, 1)]


@pytest.fixture(scope="module")
def profile(full_run) -> dict:
    return json.loads((full_run / "ipm-profile.json").read_text())


def test_every_call_is_recorded_exactly_with_world_peers_and_regions(full):
    for rank, document in enumerate(full):
        assert document["schema"] == "perfatlas.ipm-rank/1"
        assert (document["rank"], document["size"]) == (rank, 2)
        assert by_key(kinds(document)) == by_key(expected(rank))
        assert document["table"] == {"capacity": 4096, "used": len(document["records"])}
        assert document["overflow"]["count"] == 0 and document["overflow"]["bytes"] == 0
        assert document["region_errors"] == {
            "regions_full": 0,
            "unbalanced_pops": 0,
            "mismatched_pops": 0,
            "too_deep": 0,
        }


def test_regions_are_nested_and_interned_by_parent_and_name(full):
    for document in full:
        regions = [(r["id"], r["name"], r["parent"]) for r in document["regions"]]
        # phase1 entered twice is one region; "inner" inside "outer" and at the top are two.
        assert regions == [
            (0, "", None),
            (1, "phase1", 0),
            (2, "outer", 0),
            (3, "inner", 2),
            (4, "split", 0),
            (5, "inner", 0),
            (6, "wild", 0),
            (7, "io", 0),
        ]


def test_sent_bytes_are_exact(full):
    send = [r for r in full[0]["records"] if r["call"] == "MPI_Send" and r["region"] == 1]
    assert [(r["count"], r["bytes"], r["peer"], r["bucket"]) for r in send] == [(3, 2400, 1, 10)]


def test_a_full_table_folds_every_further_event_into_the_overflow_record(tmp_path):
    documents = run_exact(
        tmp_path, {"PERFATLAS_IPM_TABLE_SIZE": "4", "PERFATLAS_IPM_CALLSTACK": "0"}
    )
    for rank, document in enumerate(documents):
        # Without call sites every event kind of exact.c is distinct, so the first 4 take the 4
        # slots; every event of a later kind is folded, and counted (test_ipm_sites: with sites).
        kept, folded = expected(rank)[:4], expected(rank)[4:]
        assert by_key(kinds(document)) == by_key(kept)
        assert document["table"] == {"capacity": 4, "used": 4}
        overflow = document["overflow"]
        assert overflow["count"] == sum(kind[4] for kind in folded)
        assert overflow["bytes"] == sum(kind[2] * kind[4] for kind in folded)
        assert 0 < overflow["min_s"] <= overflow["max_s"] <= overflow["total_s"]


def test_threads_calling_mpi_at_once_lose_no_event(tmp_path):
    """pa-ipm-threads: MPI_THREAD_MULTIPLE, 4 threads x 10000 MPI_Sendrecv of 8 bytes to self."""
    for rank, document in enumerate(run_exact(tmp_path, program="pa-ipm-threads")):
        assert [(r["id"], r["name"], r["parent"]) for r in document["regions"]] == [
            (0, "", None),
            (1, "threaded", 0),
        ]
        assert by_key(kinds(document)) == by_key(
            [("MPI_Comm_rank", "", 0, None, 1), ("MPI_Sendrecv", "threaded", 8, rank, 40000)]
        )
        assert document["overflow"]["count"] == 0


def test_threads_that_reuse_each_others_request_handles_lose_no_receive(tmp_path):
    """pa-ipm-threads exchange: 8 threads per rank x 2000 (MPI_Irecv + MPI_Isend + MPI_Waitall)
    of 32 bytes with the other rank. The MPI library frees a completed request inside the Wait,
    and another thread's MPI_Irecv can reuse its handle before the first records it: 31,135 to
    31,607 of the 32,000 receives were counted (requests.c), with nothing untracked."""
    done = run_profiled(tmp_path, "pa-ipm-threads", str(tmp_path), "exchange")
    assert done.returncode == 0, done.stderr + done.stdout
    for rank in (0, 1):
        document = json.loads((tmp_path / f"ipm-rank-{rank}.json").read_text())
        calls = {(r["call"], r["peer"]): r for r in document["records"]}
        for call in ("MPI_Irecv", "MPI_Isend"):
            record = calls[(call, 1 - rank)]
            assert (record["count"], record["bytes"]) == (8 * 2000, 8 * 2000 * 32), call
        assert calls[("MPI_Waitall", None)]["count"] == 8 * 2000
        assert document["untracked_receives"] == 0 and document["overflow"]["count"] == 0


def test_threads_events_that_find_no_slot_after_the_merge_are_all_in_the_overflow(tmp_path):
    """Each thread records into its own table, merged at the end into the process's: with one slot,
    MPI_Comm_rank (before the threads start) takes it and every MPI_Sendrecv of the 4 threads is
    folded into the overflow record, none lost in the merge."""
    env = {"PERFATLAS_IPM_TABLE_SIZE": "1"}
    for document in run_exact(tmp_path, env, program="pa-ipm-threads"):
        assert by_key(kinds(document)) == [("MPI_Comm_rank", "", 0, None, 1)]
        assert document["table"] == {"capacity": 1, "used": 1}
        overflow = document["overflow"]
        assert (overflow["count"], overflow["bytes"]) == (40000, 40000 * 8)
        assert 0 < overflow["min_s"] <= overflow["max_s"] <= overflow["total_s"]


def test_partial_document_fields_of_a_complete_run(full):
    for document in full:
        assert document["partial"] is False and "reason" not in document
        assert document["untracked_receives"] == 0
        wall = {r["name"]: r for r in document["regions"]}
        # Each region's categories add up to its wallclock; I/O happens in "io" only.
        for region in document["regions"]:
            total = region["calc_s"] + region["mpi_s"] + region["io_s"]
            assert total == pytest.approx(region["wall_s"], rel=1e-9, abs=1e-12)
            assert region["mpi_s"] >= 0 and region["io_s"] >= 0
        assert wall["io"]["io_s"] > 0 and wall["wild"]["io_s"] == 0
        assert wall[""]["io_s"] == pytest.approx(wall["io"]["io_s"])
        assert (wall[""]["entries"], wall["phase1"]["entries"], wall["io"]["entries"]) == (1, 2, 1)


def spread_ok(spread: dict, ranks: int) -> None:
    assert spread["min"] <= spread["avg"] <= spread["max"]
    assert spread["avg"] == pytest.approx(spread["sum"] / ranks)


def expected_calls() -> dict[tuple[str, str], tuple[int, int, int]]:
    """(region path, call) -> (events, bytes, ranks that made it), over both ranks."""
    calls: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for rank in (0, 1):
        made = set()
        for call, region, size, _peer, events in expected(rank):
            entry = calls[(region, call)]
            entry[0] += events
            entry[1] += size * events
            made.add((region, call))
        for key in made:
            calls[key][2] += 1
    return {key: tuple(value) for key, value in calls.items()}


def test_the_profile_aggregates_every_call_of_every_rank_exactly(profile, full):
    assert profile["schema"] == "perfatlas.ipm/1" and profile["partial"] is False
    assert profile["tasks"] == 2 and Path(profile["command"][0]).name == "pa-ipm-exact"
    counters = profile["hardware_counters"]
    if counters["available"]:  # a machine with counters: flops counted on every rank
        assert counters["source"].startswith("PAPI") and len(counters["events"]) == 1
    else:  # here (a VM): said why, never a made-up figure
        assert counters["reason"].startswith("PAPI") and "events" not in counters
    paths = {region["id"]: region["path"] for region in profile["regions"]}
    assert list(paths.values()) == REGIONS
    found = {}
    for call in profile["calls"]:
        key = (paths[call["region"]], call["call"])
        assert key not in found
        found[key] = (call["count"], call["bytes"], call["ranks"])
        category = "posix-io" if call["call"] in POSIX else "mpi"
        category = "mpi-io" if call["call"].startswith("MPI_File_") else category
        assert call["category"] == category
        assert call["collective"] == (
            call["call"] in {"MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce"}
        )
        spread_ok(call["time_s"], call["ranks"])
        if not call["collective"]:
            assert call["lbst_s"] == 0
    assert found == expected_calls()
    for region in profile["regions"]:
        assert region["ranks"] == 2
        assert region["entries"] == (4 if region["path"] == "phase1" else 2)


def test_histogram_and_matrix_are_exact(profile):
    histogram: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    matrix = [[0, 0], [0, 0]]
    messages = [[0, 0], [0, 0]]
    for rank in (0, 1):
        for call, _region, size, peer, events in expected(rank):
            entry = histogram[(call, size.bit_length())]
            entry[0] += events
            entry[1] += size * events
            if call in SENDS:
                matrix[rank][peer] += size * events
                messages[rank][peer] += events
    found = {(h["call"], h["bucket"]): [h["count"], h["bytes"]] for h in profile["histogram"]}
    assert found == dict(histogram)
    assert profile["matrix"]["bytes"] == matrix == [[0, 2492], [85, 0]]
    assert profile["matrix"]["messages"] == messages == [[0, 6], [4, 0]]


def test_categories_add_up_and_lbst_follows_its_stated_method(profile, full):
    regions = {region["path"]: region for region in profile["regions"]}
    for region in profile["regions"]:
        parts = sum(region[q]["sum"] for q in ("calc_s", "mpi_s", "io_s", "lbst_s"))
        assert parts == pytest.approx(region["wall_s"]["sum"], rel=1e-9, abs=1e-12)
        for quantity in ("wall_s", "calc_s", "mpi_s", "io_s", "lbst_s", "user_s", "system_s"):
            spread_ok(region[quantity], region["ranks"])
        assert region["lbst_s"]["min"] >= 0
    # A rank waits (t_rank - least t over calling ranks) in each collective of each region.
    lbst = defaultdict(float)
    for call in profile["calls"]:
        if call["collective"]:
            time = call["time_s"]
            assert call["lbst_s"] == pytest.approx(time["sum"] - call["ranks"] * time["min"])
            path = profile["regions"][call["region"]]["path"]
            names = path.split("/") if path else []
            for depth in range(len(names) + 1):  # the region and every region enclosing it
                lbst["/".join(names[:depth])] += call["lbst_s"]
    for path, region in regions.items():
        assert region["lbst_s"]["sum"] == pytest.approx(lbst.get(path, 0.0), abs=1e-12)
    # The rank rows and wallclock are the whole program's figures, rank by rank.
    assert [row["pid"] for row in profile["ranks"]] == [d["pid"] for d in full]
    walls = [row["wall_s"] for row in profile["ranks"]]
    assert profile["wallclock_s"]["sum"] == pytest.approx(sum(walls))
    assert regions[""]["io_s"]["sum"] == pytest.approx(regions["io"]["io_s"]["sum"])
    assert profile["overflow"] == {"count": 0, "bytes": 0, "time_s": 0.0, "ranks": 0}
    assert profile["table"]["used_max"] == max(len(document["records"]) for document in full)


# What partial.c records before it aborts or exits.
BEFORE = [
    ("MPI_Comm_rank", "", 0, None, 1),
    ("MPI_Comm_size", "", 0, None, 1),
    ("MPI_Barrier", "before", 0, None, 2),
]


def test_mpi_abort_leaves_a_partial_document(tmp_path):
    done = run_profiled(tmp_path, "pa-ipm-partial", "abort")
    assert done.returncode != 0
    assert not (tmp_path / "ipm-profile.json").exists()
    document = json.loads((tmp_path / "ipm-rank-1.json").read_text())
    assert document["partial"] is True and document["reason"] == "MPI_Abort"
    assert by_key(kinds(document)) == by_key(BEFORE)


def test_an_exit_without_finalize_leaves_partial_documents(tmp_path):
    run_profiled(tmp_path, "pa-ipm-partial", "exit")
    # MPICH's hydra kills the other ranks as soon as one exits without MPI_Finalize, so a rank may
    # be gone before its exit handler runs; Open MPI lets every rank finish exiting.
    left = sorted(tmp_path.glob("ipm-rank-*.json"))
    mpich = detect_flavour(shutil.which(os.environ.get("PERFATLAS_MPIRUN") or "mpirun")).family
    assert len(left) == 2 or (mpich == "mpich" and len(left) == 1), left
    for path in left:
        document = json.loads(path.read_text())
        assert document["partial"] is True
        assert document["reason"] == "exit without MPI_Finalize"
        assert by_key(kinds(document)) == by_key(BEFORE)
        assert not math.isnan(document["regions"][0]["wall_s"])


def test_polls_are_counted_exactly_and_their_time_is_sampled(tmp_path):
    """pa-ipm-polls: 1,000,000 MPI_Testany of null requests in region periodic (every tenth
    over 500), 1500 failing MPI_Test in region spin (entered twice), 10 MPI_Testany in region
    short, then MPI_Test outside regions until the receive completes."""
    rank0, rank1 = run_exact(tmp_path, program="pa-ipm-polls")
    paths = region_paths(rank0)
    by_region = defaultdict(list)  # a call in a region may be made from several sites
    for r in rank0["records"]:
        if r["call"].startswith("MPI_Test"):
            by_region[(r["call"], paths[r["region"]])].append(r)
    polls = {
        key: {
            "count": sum(r["count"] for r in records),
            "total_s": sum(r["total_s"] for r in records),
            "min_s": min(r["min_s"] for r in records),
            "max_s": max(r["max_s"] for r in records),
        }
        for key, records in by_region.items()
    }
    assert polls[("MPI_Test", "spin")]["count"] == 1500
    assert polls[("MPI_Testany", "short")]["count"] == 10
    assert polls[("MPI_Testany", "periodic")]["count"] == 1_000_000
    assert polls[("MPI_Test", "")]["count"] >= 1  # the completing call, and any before it
    for record in polls.values():
        # A timed poll is less the timer's own cost, and a failing MPI_Test can take less than
        # that cost or one tick of a coarse timer (aarch64's generic timer, a TSC read at 30 ns
        # steps): 0 is then its truthful minimum.
        mean = record["total_s"] / record["count"]
        assert 0 <= record["min_s"] <= mean <= record["max_s"]
    received = [r for r in rank0["records"] if r["call"] == "MPI_Irecv"]
    assert [(r["bytes"], r["peer"], r["count"]) for r in received] == [(4, 1, 1)]
    assert not any(r["call"].startswith("MPI_Test") for r in rank1["records"])
    profile = json.loads((tmp_path / "ipm-profile.json").read_text())
    sampling = profile["poll_sampling"]
    assert sampling["calls"] == ["MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome"]
    assert (sampling["timed_first"], sampling["then_one_in"]) == (64, 256)
    # How close the sampled estimate comes to the periodic region's wall time is a timing, which a
    # busy machine can stretch either way: bench/ipm_poll_estimate.py measures it.


# Fortran: pa-ipm-fortran-shapes (native/ipm/tests/fortran_shapes.f90) and pa-ipm-fortran-f08
# (tests/fortran_f08.f90). Under Open MPI their calls reach the C shims through the entry points
# gen_fortran.py generates from calls.def (fortran.def: the exceptions); under MPICH through
# MPICH's own bindings, save the mpi_f08 calls without a choice buffer (generated too). Either way
# every call is recorded once, with the same bytes and peers.
IPM_SOURCE = Path(__file__).resolve().parents[1] / "native" / "ipm"


def fortran_program(name: str) -> Path:
    path = library().parent / name  # beside the library, in the bin folder
    if not path.is_file():
        pytest.skip(f"{name} not built (no Fortran compiler, MPI Fortran bindings or mpi_f08)")
    return path


def fortran_expected(rank: int) -> list[Kind]:
    """What fortran_shapes.f90 does on `rank` (its header comment says the same)."""
    other = 1 - rank
    return [
        ("MPI_Comm_rank", "", 0, None, 1),
        ("MPI_Comm_size", "", 0, None, 1),
        ("MPI_Wtime", "fortran", 0, None, 2),
        ("MPI_Comm_dup", "fortran", 0, None, 1),
        ("MPI_Comm_set_name", "fortran", 0, None, 1),
        ("MPI_Comm_get_name", "fortran", 0, None, 1),
        ("MPI_Get_processor_name", "fortran", 0, None, 1),
        ("MPI_Comm_free", "fortran", 0, None, 2),  # the duplicate and the split communicator
        ("MPI_Irecv", "fortran", 16, other, 1),
        ("MPI_Irecv", "fortran", 8, other, 1),
        ("MPI_Isend", "fortran", 16, other, 1),
        ("MPI_Send", "fortran", 8, other, 1),
        ("MPI_Waitall", "fortran", 0, None, 1),
        ("MPI_Get_count", "fortran", 0, None, 2),  # a MPI_WAITALL status, a MPI_FILE_READ_AT one
        ("MPI_Irecv", "fortran", 4, other, 1),
        ("MPI_Isend", "fortran", 4, other, 1),
        ("MPI_Waitany", "fortran", 0, None, 2),
        ("MPI_Alltoallv", "fortran", 12 if rank == 0 else 20, None, 1),  # 3 or 5 integers
        ("MPI_Comm_split", "fortran", 0, None, 1),
        ("MPI_Comm_rank", "fortran", 0, None, 1),
        ("MPI_Bcast", "fortran", 8, 1, 1),  # root: rank 0 of the split, world rank 1
        ("MPI_Allreduce", "fortran", 4, None, 1),
        ("MPI_File_open", "fortran", 0, None, 2),
        ("MPI_File_seek", "fortran", 0, None, 1),
        ("MPI_File_write", "fortran", 16, None, 1),
        ("MPI_File_close", "fortran", 0, None, 2),
        ("MPI_File_read_at", "fortran", 16, None, 1),
    ]


def test_fortran_calls_of_every_shape_are_recorded_exactly(tmp_path):
    fortran_program("pa-ipm-fortran-shapes")
    mpich = detect_flavour(mpirun_command()[0]).family == "mpich"
    # MPICH's Fortran MPI-IO bindings convert the file handle through the C MPI_File_c2f (opens,
    # closes) and MPI_File_f2c (seek, write, closes, read), which calls.def wraps too.
    io = [("MPI_File_c2f", "fortran", 0, None, 4), ("MPI_File_f2c", "fortran", 0, None, 5)]
    for rank, document in enumerate(run_exact(tmp_path, program="pa-ipm-fortran-shapes")):
        assert by_key(kinds(document)) == by_key(fortran_expected(rank) + (io if mpich else []))
        assert document["overflow"]["count"] == 0 and document["untracked_receives"] == 0
    assert (tmp_path / "shapes.dat").stat().st_size == 32  # 4 integers from each rank


def test_mpi_f08_calls_are_recorded_exactly(tmp_path):
    """Open MPI: every call through the generated mpi_f08 entry points. MPICH: those without a
    choice buffer (its own call PMPI_) and MPI_INIT / MPI_PCONTROL / MPI_FINALIZE through them,
    MPI_Send, MPI_Recv, MPI_Irecv, MPI_Isend and MPI_Allreduce through its *_f08ts_ glue, which
    calls the C shims: each recorded once, with no extra records."""
    fortran_program("pa-ipm-fortran-f08")
    for rank, document in enumerate(run_exact(tmp_path, program="pa-ipm-fortran-f08")):
        other = 1 - rank
        point = (
            ("MPI_Send", "fortran", 24, 1, 1) if rank == 0 else ("MPI_Recv", "fortran", 24, 0, 1)
        )
        count = [] if rank == 0 else [("MPI_Get_count", "fortran", 0, None, 1)]
        assert by_key(kinds(document)) == by_key(
            [
                ("MPI_Comm_rank", "", 0, None, 1),
                point,
                *count,
                ("MPI_Irecv", "fortran", 8, other, 1),
                ("MPI_Isend", "fortran", 8, other, 1),
                ("MPI_Waitall", "fortran", 0, None, 1),
                ("MPI_Comm_split", "fortran", 0, None, 1),
                ("MPI_Comm_set_name", "fortran", 0, None, 1),
                ("MPI_Comm_get_name", "fortran", 0, None, 1),
                ("MPI_Allreduce", "fortran", 4, None, 1),
                ("MPI_Comm_free", "fortran", 0, None, 1),
            ]
        )


@pytest.mark.parametrize(
    "program", ["pa-ipm-fortran-shapes", "pa-ipm-fortran-f08", "pa-ipm-fortran-more"]
)
def test_fortran_programs_check_themselves_without_the_profiler(tmp_path, program):
    """The same results unprofiled: the programs check every value and exit 1 on a mismatch."""
    path = fortran_program(program)
    done = subprocess.run(
        [*mpirun_command(), str(path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr + done.stdout


def exported(path: Path) -> set[str]:
    """The dynamic symbols a shared library defines (nm -D)."""
    nm = shutil.which("nm") or pytest.skip("no nm on PATH")
    listing = subprocess.run(
        [nm, "-D", "--defined-only", str(path)], capture_output=True, text=True
    )
    return {line.split()[-1] for line in listing.stdout.splitlines() if line.strip()}


def fortran_library(program: Path, name: str) -> Path:
    """The Open MPI Fortran library (libmpi_mpifh, libmpi_usempif08) the program is linked to."""
    ldd = subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout
    for line in ldd.splitlines():
        if f"{name}.so" in line and "=>" in line:
            return Path(line.split("=>")[1].split()[0])
    pytest.skip(f"{program.name} is not linked to {name} (not Open MPI)")


def test_every_call_has_a_fortran_entry_point_or_a_stated_reason():
    """Open MPI: each call of calls.def (and fortran.def's lifecycle extras) is exported by
    libperfatlas-ipm.so under the four mpif.h names and, unless fortran.def says why not, the
    mpi_f08 one, or fortran.def gives the reason it is not wrapped; never both. Every entry point
    is one Open MPI's own Fortran libraries define, and every call they bind is accounted for."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("gen_fortran", IPM_SOURCE / "gen_fortran.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # its dataclasses look their module up
    spec.loader.exec_module(gen)
    calls = gen.read_calls(IPM_SOURCE / "calls.def")
    table = gen.read_table(IPM_SOURCE / "fortran.def")
    program = fortran_program("pa-ipm-fortran-shapes")
    mpifh = exported(fortran_library(program, "libmpi_mpifh"))
    ours = exported(library())
    f08_program = library().parent / "pa-ipm-fortran-f08"
    f08 = (
        exported(fortran_library(f08_program, "libmpi_usempif08"))
        if f08_program.is_file()
        else None
    )
    wrapped = skipped = 0
    for call in [*calls, *table.extra]:
        lower = call.name.lower()
        names = {lower, f"{lower}_", f"{lower}__", call.name.upper()}
        reason = table.skipped(call.name)
        if reason is not None:
            assert len(reason.split()) >= 3, call.name  # a reason, not a word
            assert not names & ours and f"{lower}_f08_" not in ours, call.name
            skipped += 1
            continue
        assert names <= ours, call.name
        assert f"{lower}_" in mpifh, f"{call.name}: Open MPI has no Fortran binding for it"
        if call.name in table.no_f08:
            assert f"{lower}_f08_" not in ours, call.name
        else:
            assert f"{lower}_f08_" in ours, call.name
            assert f08 is None or f"{lower}_f08_" in f08, call.name
        wrapped += 1
    assert (wrapped, skipped) == (329, 55)  # 382 calls + MPI_Abort, MPI_Finalize; 24 + 31 MPI_T_
    # The hand-written ones (fortran.c): no argc/argv, no region name.
    for lower in ("mpi_init", "mpi_init_thread", "mpi_pcontrol"):
        assert {f"{lower}_", f"{lower}_f08_"} <= ours
    # Every Fortran binding of Open MPI for a call of the table is wrapped or has its reason.
    table_names = {call.name.lower(): call.name for call in [*calls, *table.extra]}
    for symbol in mpifh:
        name = table_names.get(symbol[:-1]) if symbol.endswith("_") else None
        if name is not None:
            assert symbol in ours or table.skipped(name) is not None, symbol


def fortran_more_expected(rank: int, waitsome: int, testsome: int) -> list[Kind]:
    """What fortran_more.f90 does on `rank` (its header comment says the same); waitsome and
    testsome: how many MPI_WAITSOME and MPI_TESTSOME calls completing its requests took."""
    other = 1 - rank
    struct = ("MPI_Send", "fortran", 16, 1, 1) if rank == 0 else ("MPI_Recv", "fortran", 16, 0, 1)
    return [
        ("MPI_Comm_rank", "", 0, None, 1),
        ("MPI_Comm_size", "", 0, None, 1),
        ("MPI_Comm_dup", "fortran", 0, None, 1),
        ("MPI_Scan", "fortran", 4, None, 1),
        ("MPI_Reduce_scatter_block", "fortran", 8, None, 1),  # 2 integers per rank
        ("MPI_Alltoallw", "fortran", 20 if rank == 0 else 24, None, 1),  # (r + 1) 4 + 2 x 8
        ("MPI_Cart_create", "fortran", 0, None, 1),
        ("MPI_Neighbor_allgather", "fortran", 4, None, 1),  # on the line: 1 integer
        ("MPI_Neighbor_alltoall", "fortran", 4, None, 1),  # 1 integer per neighbour
        ("MPI_Neighbor_alltoallw", "fortran", 12, None, 1),  # an integer and a pair
        ("MPI_Dist_graph_create_adjacent", "fortran", 0, None, 2),  # unweighted, weighted
        ("MPI_Dist_graph_neighbors_count", "fortran", 0, None, 2),
        ("MPI_Dist_graph_neighbors", "fortran", 0, None, 2),
        ("MPI_Neighbor_allgather", "fortran", 8, None, 1),  # unweighted graph: 2 integers
        ("MPI_Neighbor_alltoall", "fortran", 12, None, 1),  # weighted graph: 3 integers
        ("MPI_Comm_free", "fortran", 0, None, 4),  # the line, the two graphs, the duplicate
        ("MPI_Get_address", "fortran", 0, None, 2),
        ("MPI_Type_create_struct", "fortran", 0, None, 1),
        ("MPI_Type_commit", "fortran", 0, None, 1),
        struct,  # from or into MPI_BOTTOM: 2 integers and a double
        ("MPI_Type_get_envelope", "fortran", 0, None, 1),
        ("MPI_Type_get_contents", "fortran", 0, None, 1),
        ("MPI_Type_free", "fortran", 0, None, 1),
        ("MPI_Recv_init", "fortran", 8, other, 1),
        ("MPI_Send_init", "fortran", 8, other, 1),
        ("MPI_Startall", "fortran", 0, None, 2),
        ("MPI_Waitsome", "fortran", 0, None, waitsome),
        ("MPI_Testsome", "fortran", 0, None, testsome),
        ("MPI_Request_free", "fortran", 0, None, 2),
        ("MPI_Info_create", "fortran", 0, None, 1),
        ("MPI_Info_set", "fortran", 0, None, 1),
        ("MPI_Info_get", "fortran", 0, None, 2),  # a key that is there, one that is not
        ("MPI_Info_get_valuelen", "fortran", 0, None, 1),
        ("MPI_Info_get_nkeys", "fortran", 0, None, 1),
        ("MPI_Info_get_nthkey", "fortran", 0, None, 1),
        ("MPI_Win_create", "fortran", 0, None, 1),
        ("MPI_Info_free", "fortran", 0, None, 1),
        ("MPI_Win_fence", "fortran", 0, None, 2),
        ("MPI_Put", "fortran", 8, other, 1),  # the target as a rank of MPI_COMM_WORLD
        ("MPI_Win_free", "fortran", 0, None, 1),
    ]


def test_more_fortran_shapes_are_recorded_exactly(tmp_path):
    """pa-ipm-fortran-more: per-rank datatypes, neighbourhoods, MPI_UNWEIGHTED and weights,
    MPI_BOTTOM, handle arrays in and out, persistent requests with 1-based indices, info strings
    in and out, one-sided calls. The program checks every result itself (under the profiler its
    arguments pass through the generated entry points under Open MPI); the records are exact,
    with MPICH (its own bindings) as with Open MPI. The number of MPI_WAITSOME and MPI_TESTSOME
    calls depends on timing: each rank prints it."""
    fortran_program("pa-ipm-fortran-more")
    done = run_profiled(tmp_path, "pa-ipm-fortran-more", str(tmp_path))
    assert done.returncode == 0, done.stderr + done.stdout
    polls = {
        int(rank): (int(waits), int(tests))
        for rank, waits, tests in re.findall(
            r"^rank (\d) waitsome (\d+) testsome (\d+)$", done.stdout, re.M
        )
    }
    assert sorted(polls) == [0, 1], done.stdout
    for rank in (0, 1):
        document = json.loads((tmp_path / f"ipm-rank-{rank}.json").read_text())
        waits, tests = polls[rank]
        assert 1 <= waits <= 2 and tests >= 2  # the last MPI_TESTSOME finds none active
        assert by_key(kinds(document)) == by_key(fortran_more_expected(rank, waits, tests))
        assert document["overflow"]["count"] == 0 and document["untracked_receives"] == 0


def test_mpich_mpi_f08_entry_points_are_mpichs_own():
    """MPICH: the library exports `use mpi_f08` entry points only (none of mpif.h's but
    mpi_pcontrol), each one libmpichfort defines; never a *_f08ts_ one (that glue calls the C
    shims itself)."""
    f08_program = fortran_program("pa-ipm-fortran-f08")
    ours = exported(library())
    if "mpi_send_" in ours:
        pytest.skip("an Open MPI build (test_every_call_has_a_fortran_entry_point...)")
    mpichfort = exported(fortran_library(f08_program, "libmpichfort"))
    f08 = {name for name in ours if name.endswith("_f08_")}
    assert len(f08) == 212  # 209 generated + MPI_INIT, MPI_INIT_THREAD, MPI_PCONTROL
    assert f08 <= mpichfort, sorted(f08 - mpichfort)
    assert not {name for name in ours if "f08ts" in name}
