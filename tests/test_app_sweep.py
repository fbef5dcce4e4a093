"""app.sweep (native/app/sweep): exact particle balance of every sweep, a scalar flux that no
decomposition changes (np = 1, 2, 4 on the same global grid), the mirror and axis symmetries of a
centred problem, exact counts (cells, directions, blocks, messages, pipeline steps against a
simulation of the schedule), the set-to-zero fixup, convergence to the physical balance, the
profiler's regions and message counts, and one sentence with exit status 2 for bad input."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from mpi_helpers import mpirun, own_sentence

from perfatlas.launch.native import executable

SMALL = ["repeat=2", "warmup=0"]


def run(np_: int, *words: str) -> subprocess.CompletedProcess:
    """pa-sweep on np_ ranks (one rank: started directly, an MPI singleton); SMALL unless the
    words say otherwise."""
    given = {word.split("=")[0] for word in words}
    defaults = [word for word in SMALL if word.split("=")[0] not in given]
    argv = [str(executable("pa-sweep")), *defaults, *words]
    if np_ > 1:
        argv = mpirun(np_) + argv
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def sweep(np_: int, *words: str) -> dict:
    done = run(np_, *words)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def flux(np_: int, folder: Path, *words: str) -> tuple[dict, np.ndarray]:
    """The document and the global scalar flux as an array [z, y, x]."""
    path = folder / f"flux-{np_}-{len(list(folder.iterdir()))}.bin"
    doc = sweep(np_, f"flux_file={path}", *words)
    nx, ny, nz = doc["derived"]["global_grid"]
    return doc, np.fromfile(path, dtype=np.float64).reshape(nz, ny, nx)


def pipeline_steps(px: int, py: int, blocks: int, octants: list[str]) -> int:
    """The KBA schedule with unit time per block and free messages, step by step: a process
    starts a block once it has finished its previous block and its upstream neighbours have
    finished this one."""
    done = {(p, q): 0 for p in range(px) for q in range(py)}
    for octant in octants:
        sx, sy = (1 if sign == "+" else -1 for sign in octant[:2])
        xs = range(px) if sx > 0 else range(px - 1, -1, -1)
        ys = range(py) if sy > 0 else range(py - 1, -1, -1)
        for _ in range(blocks):
            finished = {}
            for q in ys:
                for p in xs:
                    start = done[(p, q)]
                    for upstream in ((p - sx, q), (p, q - sy)):
                        if upstream in finished:
                            start = max(start, finished[upstream])
                    finished[(p, q)] = done[(p, q)] = start + 1
    return max(done.values())


# -- correctness -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words",
    [
        [],  # the defaults: 20^3 cells, S6, c = 0.5, 10 iterations
        ["it=6", "jt=5", "kt=4", "mk=2", "mmo=10", "mmi=5", "c=0.9", "dx=0.3", "dz=0.05"],
        ["it=6", "jt=6", "kt=6", "mk=3", "mmo=1", "mmi=1", "sigma_t=0", "c=0"],  # a void
    ],
)
def test_every_sweep_balances_particles_exactly(words):
    derived = sweep(1, *words)["derived"]
    balance = derived["balance"]
    assert balance["relative_imbalance"] < 1e-12
    assert balance["source"] == pytest.approx(balance["collision"] + balance["leakage"], rel=1e-12)
    assert balance["leakage"] == pytest.approx(sum(balance["leakage_by_face"].values()), rel=1e-14)
    assert derived["verified"] is True and derived["negative_face_fluxes"] == 0


def test_decomposition_does_not_change_the_flux(tmp_path):
    """One global 8 x 8 x 8 grid on 1, 2 (2 x 1 and 1 x 2) and 4 (2 x 2) ranks, with different
    blocks: every cell's flux is the same to the last bit (each cell sums its directions in the
    same order), and so are the balance's sums to rounding."""
    cases = [
        (1, ["it=8", "jt=8", "kt=8", "mk=4", "mmi=3"]),
        (2, ["it=4", "jt=8", "kt=8", "mk=2", "mmi=1", "px=2"]),
        (2, ["it=8", "jt=4", "kt=8", "mk=8", "mmi=6", "py=2"]),
        (4, ["it=4", "jt=4", "kt=8", "mk=1", "mmi=2"]),
    ]
    results = [flux(np_, tmp_path, "source_fraction=0.5", *words) for np_, words in cases]
    reference_doc, reference = results[0]
    for doc, phi in results[1:]:
        assert doc["derived"]["global_grid"] == [8, 8, 8]
        assert np.array_equal(phi, reference)
        for key in ("source", "collision", "leakage"):
            assert doc["derived"]["balance"][key] == pytest.approx(
                reference_doc["derived"]["balance"][key], rel=1e-14
            )
    assert [doc["derived"]["px"] for doc, _ in results] == [1, 2, 1, 2]
    assert [doc["derived"]["py"] for doc, _ in results] == [1, 1, 2, 2]


def test_a_centred_problem_is_symmetric(tmp_path):
    """Uniform material and a centred source on a cube: the flux is unchanged by reflecting any
    axis and by exchanging axes (the level-symmetric set is invariant under both), to rounding;
    so is the leakage of the six faces."""
    doc, phi = flux(2, tmp_path, "it=5", "jt=10", "kt=10", "mk=5", "px=2", "source_fraction=0.6")
    assert phi.shape == (10, 10, 10)
    for mirrored in (phi[::-1, :, :], phi[:, ::-1, :], phi[:, :, ::-1]):
        np.testing.assert_allclose(mirrored, phi, rtol=1e-13, atol=0)
    for exchanged in (phi.transpose(0, 2, 1), phi.transpose(2, 1, 0), phi.transpose(1, 0, 2)):
        np.testing.assert_allclose(exchanged, phi, rtol=1e-12, atol=0)
    faces = list(doc["derived"]["balance"]["leakage_by_face"].values())
    assert faces == pytest.approx([faces[0]] * 6, rel=1e-12)
    assert phi[5, 5, 5] == pytest.approx(phi.max(), rel=1e-13)  # the centre
    assert phi[0, 0, 0] == pytest.approx(phi.min(), rel=1e-13)  # a corner


def test_the_document_carries_exact_counts_and_the_pipeline_model():
    doc = sweep(4, "it=3", "jt=2", "kt=6", "mk=2", "mmo=10", "mmi=5", "px=4", "source_fraction=0.5")
    derived = doc["derived"]
    assert doc["params"]["np"] == 4 and len(doc["placement"]["ranks"]) == 4
    assert derived["px"] == 4 and derived["py"] == 1
    assert derived["process_grid_source"] == "given (px, py)"
    assert derived["subgrid"] == [3, 2, 6] and derived["global_grid"] == [12, 2, 6]
    assert derived["cells_per_process"] == 36 and derived["cells"] == 144
    assert derived["directions"] == 80  # S8: 10 per octant
    # centres within the closed central half of each axis: x 3..8 of 12, y 0..1 of 2, z 1..4 of 6
    assert derived["source_cells"] == 6 * 2 * 4
    quadrature = derived["quadrature"]
    assert quadrature["order"] == 8 and len(quadrature["cosine_levels"]) == 4
    assert quadrature["weight_sum"] == pytest.approx(1.0, abs=1e-15)
    assert quadrature["mean_cosine_per_octant"] == pytest.approx(0.5, abs=1e-14)
    pipeline = derived["pipeline"]
    blocks = (6 // 2) * (10 // 5)
    assert (pipeline["k_blocks"], pipeline["angle_blocks"]) == (3, 2)
    assert pipeline["blocks_per_octant"] == blocks and pipeline["work_steps"] == 8 * blocks
    assert pipeline["steps"] == pipeline_steps(4, 1, blocks, pipeline["octant_order"])
    assert derived["model_efficiency"] == pytest.approx(8 * blocks / pipeline["steps"])
    assert derived["pipeline_stages"] == 4
    # every block crosses each of the 3 x-links once per octant; no y-links
    assert derived["messages_per_iteration"] == 8 * blocks * 3
    assert pipeline["message_bytes_x"] == 8 * 5 * 2 * 2  # mmi x mk x jt doubles
    assert derived["iterations"] == 10 and len(derived["relative_changes"]) == 10


@pytest.mark.parametrize("np_, grid", [(1, []), (2, ["py=2"]), (3, []), (4, [])])
def test_pipeline_steps_match_the_simulated_schedule(np_, grid):
    doc = sweep(np_, "it=2", "jt=2", "kt=4", "mk=1", "mmo=3", "mmi=1", "iterations=1", *grid)
    derived = doc["derived"]
    px, py, blocks = derived["px"], derived["py"], derived["pipeline"]["blocks_per_octant"]
    assert px * py == np_ and blocks == 12
    order = derived["pipeline"]["octant_order"]
    assert derived["pipeline"]["steps"] == pipeline_steps(px, py, blocks, order)
    links = (px - 1) * py + px * (py - 1)
    assert derived["messages_per_iteration"] == 8 * blocks * links


def test_pipeline_formula_holds_for_larger_grids():
    """The closed form the document states, against the schedule itself."""
    order = ["---", "--+", "-+-", "-++", "++-", "+++", "+--", "+-+"]
    for px, py, blocks in [(1, 1, 1), (3, 2, 1), (5, 7, 2), (8, 8, 10), (16, 4, 3)]:
        steps = 8 * blocks + 2 * (px - 1) + 3 * (py - 1)
        assert pipeline_steps(px, py, blocks, order) == steps


def test_grind_time_and_parallel_efficiency_follow_their_definitions():
    doc = sweep(2, "it=4", "jt=4", "kt=4", "mk=2", "reference_grind_ns=5", "repeat=3")
    derived, samples = doc["derived"], doc["samples"]
    per_process = derived["cells_per_process"] * derived["directions"] * derived["iterations"]
    assert len(samples["grind_time_ns"]) == 3 and doc["units"]["grind_time_ns"] == "ns"
    for grind, seconds, efficiency in zip(
        samples["grind_time_ns"], samples["solve_s"], samples["parallel_efficiency"], strict=True
    ):
        assert grind == pytest.approx(seconds * 1e9 / per_process, rel=1e-12)
        assert efficiency == pytest.approx(5 / grind, rel=1e-12)
    assert doc["sample_seconds"] == samples["solve_s"]
    assert "parallel_efficiency" not in sweep(1, "it=4", "jt=4", "kt=4", "mk=2")["samples"]


def test_source_iteration_converges_to_the_physical_balance():
    doc = sweep(2, "it=5", "jt=10", "kt=10", "mk=5", "c=0.8", "iterations=500", "tolerance=1e-13")
    derived = doc["derived"]
    assert derived["converged"] is True and derived["iterations"] < 500
    assert derived["relative_changes"][-1] <= 1e-13
    assert derived["physical_balance"]["relative_imbalance"] < 1e-10
    # without scattering one sweep is the solution: the sweep's balance is the physical one
    absorber = sweep(1, "it=5", "jt=5", "kt=5", "mk=5", "c=0", "iterations=1")["derived"]
    assert absorber["physical_balance"]["relative_imbalance"] < 1e-12
    assert absorber["converged"] is False  # no tolerance was asked for


def test_negative_fluxes_are_counted_and_the_fixup_removes_them(tmp_path):
    """A small source in optically thick cells: diamond difference overshoots below zero; the
    set-to-zero fixup keeps the balance exact and every flux non-negative."""
    thick = ["it=9", "jt=9", "kt=9", "mk=3", "sigma_t=5", "dx=1", "dy=1", "dz=1"]
    plain, plain_phi = flux(1, tmp_path, *thick, "source_fraction=0.2")
    fixed, fixed_phi = flux(1, tmp_path, *thick, "source_fraction=0.2", "fixup=zero")
    assert plain["derived"]["negative_face_fluxes"] > 0 and plain_phi.min() < 0
    assert fixed["derived"]["negative_face_fluxes"] > 0 and fixed_phi.min() >= 0
    for doc in (plain, fixed):
        assert doc["derived"]["balance"]["relative_imbalance"] < 1e-12
    assert fixed["derived"]["fixup"].startswith("set-to-zero")
    assert plain["derived"]["fixup"].startswith("none")


def test_profiler_sees_the_regions_and_every_message(tmp_path):
    """Under perfatlas-ipm: rank 0 of a 2 x 1 grid sends one x-face per block in the 4 octants
    that sweep towards +x and receives one in the other 4, all inside the region "sweep"."""
    from perfatlas.profile.command import library, profiled

    words = ["it=4", "jt=4", "kt=4", "mk=2", "mmi=3", "iterations=2", "repeat=1", "warmup=0"]
    command = profiled([*mpirun(2), str(executable("pa-sweep")), *words], tmp_path, library())
    done = subprocess.run(
        command.argv, env={**os.environ, **command.env}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    rank0 = json.loads((tmp_path / "ipm-rank-0.json").read_text())
    names = {region["id"]: region["name"] for region in rank0["regions"]}
    assert {"sweep", "source", "convergence"} <= set(names.values())
    sent = [r for r in rank0["records"] if r["call"] == "MPI_Send"]
    received = [r for r in rank0["records"] if r["call"] == "MPI_Recv"]
    blocks = (4 // 2) * (6 // 3)
    for records in (sent, received):
        assert [names[r["region"]] for r in records] == ["sweep"]
        assert records[0]["count"] == 4 * blocks * 2 and records[0]["peer"] == 1
        assert records[0]["bytes"] == records[0]["count"] * 8 * 3 * 2 * 4  # mmi x mk x jt


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "np_, words, says",
    [
        (1, ["kt=10", "mk=3"], "mk=3 does not divide kt=10: the k-planes must split into whole"),
        (1, ["mmo=6", "mmi=4"], "mmi=4 does not divide mmo=6: the directions of an octant must"),
        (1, ["mmo=4", "mmi=1"], "mmo=4 is not a level-symmetric angle count N(N+2)/8: give 1, 3"),
        (2, ["px=3", "py=1"], "px=3 x py=1 = 3 processes, but np=2: give px and py whose product"),
        (2, ["px=4"], "px=4 does not divide np=2: give px and py whose product is the number"),
        (1, ["source_fraction=0.01"], "source_fraction=0.01 leaves no cell centre inside the"),
        (1, ["flux_file=/nonexistent/phi.bin"], "cannot write the flux file /nonexistent/phi.bin"),
        (1, ["fixup=flat"], "fixup 'flat' is not one of none, zero"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(np_, words, says):
    done = run(np_, *words)
    assert done.returncode == 2
    assert says in own_sentence(done, "pa-sweep")
    assert done.stdout == ""


# -- through perfatlas ---------------------------------------------------------------------------


def test_measure_stores_a_sweep_run_under_mpirun(cli, tmp_path):
    mpirun(2)
    out = tmp_path / "sweep.json"
    result = cli(
        "measure",
        "app.sweep",
        "np=2",
        "it=6",
        "jt=6",
        "kt=6",
        "mk=3",
        "repeat=3",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["launch"]["launcher"] == "mpirun" and doc["params"]["np"] == 2
    assert doc["derived"]["global_grid"] == [12, 6, 6]
    assert doc["derived"]["balance"]["relative_imbalance"] < 1e-12
    assert "grind_time_ns" in result.out
    with sqlite3.connect(cli.db) as db:
        stored = db.execute(
            "SELECT metric, n FROM results WHERE benchmark = 'app.sweep' ORDER BY metric"
        ).fetchall()
    assert stored == [("grind_time_ns", 3), ("solve_s", 3)]


@pytest.mark.parametrize(
    "words, says",
    [
        (["kt=10", "mk=4"], "mk=4 does not divide kt=10"),
        (["mmo=5"], "mmo=5 is not a level-symmetric angle count"),
        (["np=2", "px=2", "py=2"], "px=2 x py=2 = 4 processes, but np=2"),
        (["np=3", "py=2"], "py=2 does not divide np=3"),
        (["fixup=flat"], "fixup='flat' is not one of none, zero"),
    ],
)
def test_measure_rejects_bad_parameters_in_one_sentence(cli, words, says):
    result = cli("measure", "app.sweep", *words)
    assert result.code == 2
    assert says in result.err
