"""perfatlas-ipm beyond the calls of pa-ipm-exact: pa-ipm-calls (native/ipm/tests/calls.c) makes
a representative call of each family of calls.def (send modes, probes, matched and persistent
receives, v collectives, a nonblocking collective, one-sided transfers, derived datatypes, MPI-IO
with individual file pointers) under mpirun np = 2; every (call, region, bytes, peer, count) of each
rank, and the communication matrix of the profile, are asserted exactly."""

from __future__ import annotations

import json

import pytest
from test_ipm import Kind, by_key, kinds, run_profiled

from perfatlas.launch.native import bin_dir

# The calls that put bytes into the communication matrix (kinds SEND and PUT).
MATRIX = {"MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Issend", "MPI_Send"}
MATRIX |= {"MPI_Sendrecv_replace", "MPI_Put", "MPI_Accumulate"}


def expected(rank: int) -> list[Kind]:
    """What calls.c does on `rank` (its header comment says the same)."""
    other = 1 - rank
    common = [
        ("MPI_Comm_rank", "", 0, None, 1),
        ("MPI_Comm_size", "", 0, None, 1),
        ("MPI_Wtime", "", 0, None, 2),
        ("MPI_Barrier", "p2p", 0, None, 1),
        ("MPI_Start", "p2p", 0, None, 2),
        ("MPI_Request_free", "p2p", 0, None, 1),
        ("MPI_Sendrecv_replace", "p2p", 4, other, 1),
        ("MPI_Reduce_scatter_block", "coll", 24, None, 1),  # recvcount x 8
        ("MPI_Scan", "coll", 4, None, 1),
        ("MPI_Iallreduce", "coll", 16, None, 1),
        ("MPI_Wait", "coll", 0, None, 1),
        ("MPI_Win_create", "rma", 0, None, 1),
        ("MPI_Win_fence", "rma", 0, None, 3),
        ("MPI_Accumulate", "rma", 4, other, 1),
        ("MPI_Win_free", "rma", 0, None, 1),
        ("MPI_Type_contiguous", "types", 0, None, 2),
        ("MPI_Type_commit", "types", 0, None, 2),
        ("MPI_Type_free", "types", 0, None, 2),
        ("MPI_File_open", "io", 0, None, 1),
        ("MPI_File_write", "io", 40, None, 1),
        ("MPI_File_seek", "io", 0, None, 1),
        ("MPI_File_read", "io", 40, None, 1),  # room for 80, 40 in the file
        ("MPI_File_close", "io", 0, None, 1),
    ]
    if rank == 0:
        return common + [
            ("MPI_Ssend", "p2p", 40, 1, 1),
            ("MPI_Recv", "p2p", 40, 1, 1),  # the MPI_Bsend
            ("MPI_Irecv", "p2p", 12, 1, 1),  # the MPI_Rsend
            ("MPI_Wait", "p2p", 0, None, 4),  # Irecv, Issend, 2 persistent sends
            ("MPI_Issend", "p2p", 16, 1, 1),
            ("MPI_Probe", "p2p", 0, 1, 1),
            ("MPI_Get_count", "p2p", 0, None, 1),
            ("MPI_Recv", "p2p", 6, 1, 1),
            ("MPI_Send", "p2p", 16, 1, 1),  # to the MPI_Mprobe
            ("MPI_Send_init", "p2p", 16, 1, 1),
            ("MPI_Scatter", "coll", 8, 0, 1),  # the root: sendcount x 4
            ("MPI_Gatherv", "coll", 4, 1, 1),
            ("MPI_Allgatherv", "coll", 8, None, 1),
            ("MPI_Alltoallv", "coll", 12, None, 1),  # 1 + 2 ints
            ("MPI_Put", "rma", 8, 1, 1),
            ("MPI_Send", "types", 24, 1, 1),  # 2 x 3 ints
            ("MPI_Send", "types", 40, 1, 1),  # 2 x 5 ints, a type made after the first was freed
        ]
    return common + [
        ("MPI_Recv", "p2p", 40, 0, 1),  # the MPI_Ssend
        ("MPI_Buffer_attach", "p2p", 0, None, 1),
        ("MPI_Bsend", "p2p", 40, 0, 1),
        ("MPI_Buffer_detach", "p2p", 0, None, 1),
        ("MPI_Rsend", "p2p", 12, 0, 1),
        ("MPI_Recv", "p2p", 16, 0, 1),  # the MPI_Issend
        ("MPI_Send", "p2p", 6, 0, 1),  # to the MPI_Probe
        ("MPI_Mprobe", "p2p", 0, 0, 1),
        ("MPI_Mrecv", "p2p", 16, None, 1),  # a message names no communicator: no peer
        ("MPI_Recv_init", "p2p", 16, 0, 1),
        ("MPI_Wait", "p2p", 0, None, 2),
        ("MPI_Scatter", "coll", 0, 0, 1),  # not the root: sends nothing
        ("MPI_Gatherv", "coll", 8, 1, 1),
        ("MPI_Allgatherv", "coll", 16, None, 1),
        ("MPI_Alltoallv", "coll", 20, None, 1),  # 2 + 3 ints
        ("MPI_Get", "rma", 4, 0, 1),
        ("MPI_Recv", "types", 24, 0, 1),
        ("MPI_Recv", "types", 40, 0, 1),
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ipm-calls")
    done = run_profiled(folder, "pa-ipm-calls", str(folder))
    assert done.returncode == 0, done.stderr + done.stdout
    documents = [json.loads((folder / f"ipm-rank-{rank}.json").read_text()) for rank in (0, 1)]
    return documents, json.loads((folder / "ipm-profile.json").read_text())


def test_every_call_of_every_family_is_recorded_exactly(run):
    documents, _ = run
    for rank, document in enumerate(documents):
        assert by_key(kinds(document)) == by_key(expected(rank))
        assert document["overflow"]["count"] == 0
        assert document["untracked_receives"] == 0


def test_sends_and_one_sided_transfers_fill_the_matrix(run):
    _, profile = run
    matrix, messages = [[0, 0], [0, 0]], [[0, 0], [0, 0]]
    for rank in (0, 1):
        for call, _region, size, peer, events in expected(rank):
            if call in MATRIX:
                matrix[rank][peer] += size * events
                messages[rank][peer] += events
    assert profile["matrix"]["bytes"] == matrix == [[0, 152], [66, 0]]
    assert profile["matrix"]["messages"] == messages == [[0, 8], [5, 0]]
    collective = {c["call"] for c in profile["calls"] if c["collective"]}
    assert collective == {
        "MPI_Barrier",
        "MPI_Scatter",
        "MPI_Gatherv",
        "MPI_Allgatherv",
        "MPI_Alltoallv",
        "MPI_Reduce_scatter_block",
        "MPI_Scan",
    }


def test_fortran_calls_are_recorded(tmp_path):
    """pa-ipm-fortran (tests/fortran.f90): Open MPI's Fortran bindings bypass the C shims and are
    caught by the generated Fortran entry points (gen_fortran.py); MPICH's call the C shims.
    MPI_PCONTROL(1) enters region "fortran"; the calls in that region are asserted."""
    if not (bin_dir() / "pa-ipm-fortran").is_file():
        pytest.skip("pa-ipm-fortran not built (no Fortran compiler or MPI Fortran bindings)")
    done = run_profiled(tmp_path, "pa-ipm-fortran")
    assert done.returncode == 0, done.stderr + done.stdout
    for rank in (0, 1):
        document = json.loads((tmp_path / f"ipm-rank-{rank}.json").read_text())
        other = 1 - rank
        point = (
            ("MPI_Send", "fortran", 16, 1, 1) if rank == 0 else ("MPI_Recv", "fortran", 16, 0, 1)
        )
        assert by_key([k for k in kinds(document) if k[1] == "fortran"]) == by_key(
            [
                point,
                ("MPI_Irecv", "fortran", 16, other, 1),
                ("MPI_Isend", "fortran", 16, other, 1),
                ("MPI_Waitall", "fortran", 0, None, 1),
                ("MPI_Allreduce", "fortran", 8, None, 1),
                ("MPI_Barrier", "fortran", 0, None, 1),
            ]
        )
