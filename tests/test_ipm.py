"""perfatlas-ipm, step 1: pa-ipm-exact (native/ipm/tests/exact.c) runs under mpirun np = 2 with
libperfatlas-ipm.so preloaded; every count, byte, peer and region each rank wrote is asserted
exactly, and a table too small for the program folds exactly the events it cannot hold."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perfatlas.launchers import detect_flavour
from perfatlas.native import bin_dir, executable

# One event kind: (call, region path, bytes per event, peer as a world rank, events).
Kind = tuple[str, str, int, int | None, int]


def expected(rank: int) -> list[Kind]:
    """What exact.c does on `rank`, in program order (its header comment says the same)."""
    other = 1 - rank
    if rank == 0:
        phase1 = [("MPI_Send", "phase1", 800, 1, 3)]
        split = [("MPI_Recv", "split", 5, 1, 1)]  # sub-rank 0 of the reversed comm is world 1
    else:
        phase1 = [("MPI_Recv", "phase1", 800, 0, 3)]
        split = [("MPI_Isend", "split", 5, 0, 1), ("MPI_Wait", "split", 0, None, 1)]
    return [
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
        *split,
        ("MPI_Barrier", "phase1", 0, None, 1),
        ("MPI_Barrier", "inner", 0, None, 1),
    ]


def run_exact(
    folder: Path, env: dict[str, str] | None = None, program: str = "pa-ipm-exact"
) -> list[dict]:
    """A program (pa-ipm-exact unless told) under mpirun np = 2 with the profiler preloaded; the two rank documents."""
    wanted = os.environ.get("PERFATLAS_MPIRUN") or "mpirun"
    mpirun = shutil.which(wanted)
    if mpirun is None:
        pytest.skip(f"no {wanted} on PATH")
    library = bin_dir() / "libperfatlas-ipm.so"
    assert library.is_file(), f"{library} was not built"
    variables = {"LD_PRELOAD": str(library), "PERFATLAS_IPM_DIR": str(folder), **(env or {})}
    # Open MPI: -x NAME=VALUE exports to the ranks only (mpirun itself is not profiled).
    if detect_flavour(mpirun).family == "mpich":
        argv = [mpirun, "-n", "2"]
        for name, value in variables.items():
            argv += ["-genv", name, value]
    else:
        argv = [mpirun, "-np", "2"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for name, value in variables.items():
            argv += ["-x", f"{name}={value}"]
    argv.append(str(executable(program)))
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return [json.loads((folder / f"ipm-rank-{rank}.json").read_text()) for rank in (0, 1)]


def region_paths(document: dict) -> dict[int, str]:
    """Region id -> "outer/inner" (region 0, outside every region, is "")."""
    by_id = {region["id"]: region for region in document["regions"]}

    def path(id_: int) -> str:
        region = by_id[id_]
        if region["parent"] is None:
            return ""
        parent = path(region["parent"])
        return f"{parent}/{region['name']}" if parent else region["name"]

    return {id_: path(id_) for id_ in by_id}


def kinds(document: dict) -> list[Kind]:
    paths = region_paths(document)
    found = []
    for record in document["records"]:
        per_event = record["bytes"] // record["count"]
        assert record["bytes"] == per_event * record["count"]
        assert record["bucket"] == per_event.bit_length()  # bucket b: [2^(b-1), 2^b) bytes
        assert 0 <= record["min_s"] <= record["max_s"] <= record["total_s"]
        kind = (record["call"], paths[record["region"]], per_event, record["peer"])
        found.append((*kind, record["count"]))
    return found


def by_key(items: list[Kind]) -> list[Kind]:
    return sorted(items, key=repr)


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> list[dict]:
    return run_exact(tmp_path_factory.mktemp("ipm-full"))


def test_every_call_is_recorded_exactly_with_world_peers_and_regions(full):
    for rank, document in enumerate(full):
        assert document["schema"] == "perfatlas.ipm-rank/1"
        assert (document["rank"], document["size"]) == (rank, 2)
        assert by_key(kinds(document)) == by_key(expected(rank))
        assert document["table"] == {"capacity": 4096, "used": len(expected(rank))}
        assert document["overflow"]["count"] == 0 and document["overflow"]["bytes"] == 0
        assert document["region_errors"] == {
            "regions_full": 0,
            "unbalanced_pops": 0,
            "mismatched_pops": 0,
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
        ]


def test_sent_bytes_are_exact(full):
    send = [r for r in full[0]["records"] if r["call"] == "MPI_Send"]
    assert [(r["count"], r["bytes"], r["peer"], r["bucket"]) for r in send] == [(3, 2400, 1, 10)]


def test_a_full_table_folds_every_further_event_into_the_overflow_record(tmp_path):
    documents = run_exact(tmp_path, {"PERFATLAS_IPM_TABLE_SIZE": "4"})
    for rank, document in enumerate(documents):
        # Every event kind of exact.c is distinct, so the first 4 take the 4 slots; every
        # event of a later kind is folded, and counted.
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
        assert kinds(document) == [("MPI_Sendrecv", "threaded", 8, rank, 40000)]
        assert document["overflow"]["count"] == 0
