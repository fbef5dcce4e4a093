"""app.hydro (native/app/hydro): Sod's shock tube against the exact Riemann solution at three
resolutions (L1 falling at the scheme's order for discontinuous data), conservation of mass,
momentum and energy to rounding on the periodic box (with and without the implicit solver),
a final state that no process count changes (to the bit without the solver, to rounding of the
CG reductions with it), the SAGE-like slabs' ghost lists against a brute-force count, the
cycle's counts and profiler regions, exit 3 for a non-physical state, and exit 2 for bad
input."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from mpi_helpers import mpirun, own_sentence

from perfatlas.launch.native import executable

SMALL = ["repeat=1", "warmup=0"]
WAVE = ["nx=6", "ny=6", "cycles=6"]  # a 6 x 6 x nz periodic box


def run(np_: int, *words: str) -> subprocess.CompletedProcess:
    """pa-hydro on np_ ranks (one rank: started directly, an MPI singleton); SMALL unless the
    words say otherwise."""
    given = {word.split("=")[0] for word in words}
    defaults = [word for word in SMALL if word.split("=")[0] not in given]
    argv = [str(executable("pa-hydro")), *defaults, *words]
    if np_ > 1:
        argv = mpirun(np_) + argv
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def hydro(np_: int, *words: str) -> dict:
    done = run(np_, *words)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def state(np_: int, folder: Path, *words: str) -> tuple[dict, np.ndarray]:
    """The document and the final state of the global grid as an array [z, y, x, variable]."""
    path = folder / f"state-{np_}-{len(list(folder.iterdir()))}.bin"
    doc = hydro(np_, f"state_file={path}", *words)
    nx, ny, nz = doc["derived"]["global_grid"]
    return doc, np.fromfile(path, dtype=np.float64).reshape(nz, ny, nx, 5)


# -- correctness -----------------------------------------------------------------------------


def test_sod_converges_to_the_exact_solution():
    """Sod's tube at t = 0.2 on 50, 100 and 200 cells: the exact star state (Toro table 4.2:
    p* = 0.30313, u* = 0.92745), and L1 errors that halve with the cell size (first order: the
    shock and contact dominate)."""
    errors = []
    for n in (50, 100, 200):
        exact = hydro(1, "problem=sod", f"nx={n}", "ny=1", f"cells_per_pe={n}", "end_time=0.2")[
            "derived"
        ]["exact"]
        assert exact["star_pressure"] == pytest.approx(0.30313, abs=1e-5)
        assert exact["star_velocity"] == pytest.approx(0.92745, abs=1e-5)
        errors.append(exact)
    for coarse, fine in zip(errors, errors[1:], strict=False):
        for key in ("l1_density", "l1_velocity", "l1_pressure"):
            order = math.log2(coarse[key] / fine[key])
            assert 0.75 < order < 1.5, (key, order)
    assert errors[-1]["l1_density"] < 0.004


@pytest.mark.parametrize("np_", [2, 4])
def test_the_tube_along_z_on_several_ranks_is_the_tube_along_x(np_):
    along_x = hydro(1, "problem=sod", "nx=60", "ny=1", "cells_per_pe=60", "end_time=0.2")
    along_z = hydro(
        np_, "problem=sod", "axis=z", "nx=1", "ny=1", f"cells_per_pe={60 // np_}", "end_time=0.2"
    )
    assert along_z["derived"]["global_grid"] == [1, 1, 60]
    assert along_z["derived"]["cycles"] == along_x["derived"]["cycles"]
    for key in ("l1_density", "l1_velocity", "l1_pressure"):
        assert along_z["derived"]["exact"][key] == pytest.approx(
            along_x["derived"]["exact"][key], rel=1e-12
        )


@pytest.mark.parametrize("np_, solver", [(1, "none"), (2, "cg"), (4, "none")])
def test_the_periodic_box_conserves_mass_momentum_and_energy(np_, solver):
    derived = hydro(np_, *WAVE, f"cells_per_pe={144 // np_}", f"solver={solver}")["derived"]
    conservation = derived["conservation"]
    assert conservation["checked"] is True and derived["boundaries"] == "periodic"
    for key in ("mass", "momentum_x", "momentum_y", "momentum_z", "energy"):
        assert conservation[key]["relative_change"] < 1e-13, key
    assert conservation["energy"]["before"] > 0 and conservation["mass"]["before"] > 0
    if solver == "cg":
        assert derived["cg"]["iterations"] > derived["cycles"]  # it solved something
        assert derived["cg"]["unconverged_cycles"] == 0


def test_no_process_count_changes_the_state(tmp_path):
    """One 6 x 6 x 8 box on 1, 2 and 4 ranks, and on 3 ranks whose slabs end mid-plane
    (cells_per_pe=96: 2 2/3 planes): every cell holds the same bits (the time step is a MAX
    reduction, and every interface flux is computed from the same four cells)."""
    words = ["nx=6", "ny=6", "cycles=8"]
    reference_doc, reference = state(1, tmp_path, *words, "cells_per_pe=288")
    for np_ in (2, 3, 4):
        doc, field = state(np_, tmp_path, *words, f"cells_per_pe={288 // np_}")
        assert doc["derived"]["global_grid"] == [6, 6, 8]
        assert np.array_equal(field, reference)
        assert doc["derived"]["checksum"] == reference_doc["derived"]["checksum"]
    assert reference.shape == (8, 6, 6, 5) and np.all(reference[..., 0] > 0)


def test_the_implicit_solver_changes_the_state_only_by_rounding_across_process_counts(tmp_path):
    words = ["nx=6", "ny=6", "cycles=4", "solver=cg", "cg_tolerance=1e-12"]
    _, reference = state(1, tmp_path, *words, "cells_per_pe=144")
    doc, field = state(2, tmp_path, *words, "cells_per_pe=72")
    np.testing.assert_allclose(field, reference, rtol=1e-10, atol=1e-12)
    plain = state(1, tmp_path, "nx=6", "ny=6", "cycles=4", "cells_per_pe=144")[1]
    assert not np.allclose(plain[..., 4], reference[..., 4], rtol=1e-6)  # conduction acted
    assert doc["derived"]["cg"]["most_iterations"] > 1


def expected_ghosts(n: tuple[int, int, int], cells: int, rank: int) -> dict[int, int]:
    """Brute force: the cells +-1 and +-2 along each axis (wrapped) of rank's slab that other
    slabs own, counted per owner."""
    nx, ny, nz = n
    index = np.arange(rank * cells, (rank + 1) * cells)
    i, j, k = index % nx, (index // nx) % ny, index // (nx * ny)
    found: set[int] = set()
    for axis, (coordinate, extent) in enumerate(((i, nx), (j, ny), (k, nz))):
        for offset in (-2, -1, 1, 2):
            moved = [i, j, k]
            moved[axis] = (coordinate + offset) % extent
            found |= set((moved[2] * ny + moved[1]) * nx + moved[0])
    owners: dict[int, int] = {}
    for cell in found:
        if cell // cells != rank:
            owners[cell // cells] = owners.get(cell // cells, 0) + 1
    return owners


def test_slabs_exchange_with_every_process_their_stencil_reaches():
    """4 x 4 x 6 cells on 4 ranks of 24 cells (1.5 planes each): a slab's ghosts reach two
    planes up and down, so each rank exchanges with all three others, in messages whose sizes
    the brute-force stencil predicts."""
    doc = hydro(4, "nx=4", "ny=4", "cells_per_pe=24", "cycles=2")
    exchange = doc["derived"]["exchange"]
    assert doc["derived"]["slab_planes"] == 1.5
    for entry in exchange["per_rank"]:
        expected = expected_ghosts((4, 4, 6), 24, entry["rank"])
        assert {m["rank"]: m["cells"] for m in entry["receive"]} == expected
        assert entry["ghost_cells"] == sum(expected.values())
        assert entry["neighbours"] == 3
    sent = {(e["rank"], m["rank"]): m["cells"] for e in exchange["per_rank"] for m in e["send"]}
    received = {
        (m["rank"], e["rank"]): m["cells"] for e in exchange["per_rank"] for m in e["receive"]
    }
    assert sent == received
    assert exchange["neighbours_max"] == exchange["neighbours_min"] == 3


def test_the_cycle_counts_and_samples_follow_their_definitions():
    doc = hydro(2, *WAVE, "cells_per_pe=72", "repeat=3", "solver=cg")
    derived, samples = doc["derived"], doc["samples"]
    exchange, cycles = derived["exchange"], derived["cycles"]
    iterations = derived["cg"]["iterations"]
    assert cycles == 6 and exchange["exchanges_per_cycle"] == 3  # one per axis
    assert exchange["cg_exchanges_per_cycle"] == pytest.approx((iterations + 2 * cycles) / cycles)
    assert exchange["reductions_per_cycle"] == pytest.approx((2 * cycles + 2 * iterations) / cycles)
    for cycle, rate in zip(samples["cycle_s"], samples["cc_per_s_per_pe"], strict=True):
        assert rate == pytest.approx(72 / cycle, rel=1e-12)
    for key in ("compute_s", "gather_scatter_s", "reduction_s"):
        assert len(samples[key]) == 3 and all(v > 0 for v in samples[key])
    assert doc["sample_seconds"] == samples["cycle_s"]
    tube = hydro(1, "problem=sod", "nx=40", "ny=1", "cells_per_pe=40", "cycles=3")["derived"]
    assert tube["exchange"]["exchanges_per_cycle"] == 1  # the flat axes are not swept
    assert tube["exchange"]["reductions_per_cycle"] == 1 and tube["cg"] is None


def test_profiler_sees_the_three_phases(tmp_path):
    """Under perfatlas-ipm: each cycle's time-step MPI_Allreduce in "reduction", the ghost
    messages in "gather_scatter"."""
    from perfatlas.profile.command import library, profiled

    words = [*WAVE, "cells_per_pe=72", "repeat=1", "warmup=0"]
    command = profiled([*mpirun(2), str(executable("pa-hydro")), *words], tmp_path, library())
    done = subprocess.run(
        command.argv, env={**os.environ, **command.env}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    rank0 = json.loads((tmp_path / "ipm-rank-0.json").read_text())
    names = {region["id"]: region["name"] for region in rank0["regions"]}
    assert {"compute", "gather_scatter", "reduction"} <= set(names.values())
    reduced = [
        r
        for r in rank0["records"]
        if r["call"] == "MPI_Allreduce" and names.get(r["region"]) == "reduction"
    ]
    assert sum(r["count"] for r in reduced) == 6 + 1  # each cycle's, and the final check
    sends = [r for r in rank0["records"] if r["call"] == "MPI_Isend"]
    assert {names[r["region"]] for r in sends} == {"gather_scatter"}
    assert sum(r["count"] for r in sends) == 6 * 3  # one peer, three sweeps per cycle


def test_a_non_physical_state_stops_the_run_naming_cycle_and_cell():
    """Two halves flying apart at 1e5 with gamma = 5 at cfl = 1: the pressure near the vacuum
    goes negative; the run stops with status 3."""
    words = ["problem=expansion", "speed=1e5", "gamma=5", "cfl=1", "nx=100", "ny=1"]
    done = run(1, *words, "cells_per_pe=100", "cycles=60")
    assert done.returncode == 3
    said = own_sentence(done, "pa-hydro")
    assert "went non-physical in cycle 44 at cell 47 (i=47, j=0, k=0)" in said
    assert done.stdout == ""
    split = run(2, *words, "cells_per_pe=50", "cycles=60")
    assert split.returncode == 3
    assert "in cycle 44 at cell 47" in own_sentence(split, "pa-hydro")


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "np_, words, says",
    [
        (1, ["cells_per_pe=1"], "cells_per_pe=1 is fewer than the ghost width of 2 cells"),
        (3, ["nx=10", "ny=10", "cells_per_pe=50"], "np=3 x cells_per_pe=50 = 150 cells is not a"),
        (1, ["nx=10", "ny=10", "cells_per_pe=300"], "has 3 cells along z, fewer than the 4"),
        (1, ["riemann=exact"], "riemann 'exact' is not one of hllc, hll"),
        (1, ["solver=gmres"], "solver 'gmres' is not one of none, cg"),
        (1, ["cfl=1.5"], "cfl=1.5 is out of range"),
        (1, ["cfl=0"], "cfl=0 is out of range"),
        (1, ["problem=sod", "nx=1", "ny=1", "cells_per_pe=8"], "the shock tube runs along x"),
        (1, ["state_file=/nonexistent/u.bin"], "cannot write the state file /nonexistent/u.bin"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(np_, words, says):
    done = run(np_, *words)
    assert done.returncode == 2
    assert says in own_sentence(done, "pa-hydro")
    assert done.stdout == ""


# -- through perfatlas ---------------------------------------------------------------------------


def test_measure_stores_a_run_and_says_when_no_comm_atlas_is_stored(cli, tmp_path):
    """Under mpirun through perfatlas; with no comm results in the store, the document's comm
    atlas is empty and says what is missing (tests/test_report_hydro.py: with them)."""
    mpirun(2)
    out = tmp_path / "hydro.json"
    words = ["np=2", "nx=6", "ny=6", "cells_per_pe=72", "cycles=4", "repeat=3"]
    result = cli("measure", "app.hydro", *words, "--json", str(out))
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["launch"]["launcher"] == "mpirun" and doc["params"]["np"] == 2
    assert doc["derived"]["global_grid"] == [6, 6, 4]
    assert "cc_per_s_per_pe" in result.out
    with sqlite3.connect(cli.db) as db:
        stored = db.execute(
            "SELECT metric, n FROM results WHERE benchmark = 'app.hydro' ORDER BY metric"
        ).fetchall()
    assert stored == [
        ("cc_per_s_per_pe", 3),
        ("compute_s", 3),
        ("cycle_s", 3),
        ("gather_scatter_s", 3),
        ("reduction_s", 3),
    ]
    atlas = doc["derived"]["comm_atlas"]
    assert atlas["pingpong"] == [] and atlas["allreduce"] == []
    assert "no stored comm.pingpong of this machine" in atlas["source"]
    assert "no stored 8-byte comm.allreduce of this machine" in atlas["source"]


@pytest.mark.parametrize(
    "words, says",
    [
        (["cells_per_pe=1"], "cells_per_pe=1 is fewer than the ghost width of 2 cells"),
        (["np=3", "nx=10", "ny=10", "cells_per_pe=50"], "np=3 x cells_per_pe=50 = 150 cells"),
        (["nx=10", "ny=10", "cells_per_pe=300"], "has 3 cells along z, fewer than the 4"),
        (["problem=sod", "axis=y", "ny=1", "cells_per_pe=120"], "the shock tube runs along y"),
        (["riemann=roe"], "riemann='roe' is not one of hllc, hll"),
        (["solver=gmres"], "solver='gmres' is not one of none, cg"),
        (["cfl=2"], "cfl=2"),
        (["threads=100000"], "threads=100000"),
    ],
)
def test_measure_rejects_bad_parameters_in_one_sentence(cli, words, says):
    result = cli("measure", "app.hydro", *words)
    assert result.code == 2
    assert says in result.err
