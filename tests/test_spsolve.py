"""app.spsolve (native/app/spsolve): CHOLMOD and MUMPS on the SPD matrices of ../shared and on
generated problems, exact sizes of the generated matrices, and one clear sentence with exit
status 2 for matrices that cannot be solved or read."""

from __future__ import annotations

import json
import subprocess

import pytest
from mpi_helpers import mpirun, own_sentence
from shared_matrices import matrix

from perfatlas.launch.native import executable

SPD = ["bcsstk01.mtx", "494_bus.mtx"]
PHASES = {
    "cholmod": ["reorder_s", "symbolic_s", "analysis_s", "numeric_s", "solve_s"],
    "mumps": ["reorder_s", "symbolic_s", "analysis_s", "numeric_s", "solve_s"],
}
FAST = ["repeat=3", "warmup=0"]


def spsolve(solver: str, *words: str) -> subprocess.CompletedProcess:
    """pa-spsolve with these words: CHOLMOD as one process, MUMPS on two MPI ranks."""
    argv = [str(executable("pa-spsolve")), f"solver={solver}", *FAST, *words]
    if solver == "mumps":
        argv = mpirun(2) + argv
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def solve(solver: str, *words: str) -> dict:
    done = spsolve(solver, *words)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def message(done: subprocess.CompletedProcess) -> str:
    return own_sentence(done, "pa-spsolve")


@pytest.mark.parametrize("solver", ["cholmod", "mumps"])
@pytest.mark.parametrize("name", SPD)
@pytest.mark.parametrize("ordering", ["amd", "metis"])
def test_spd_matrices_are_solved_accurately(solver, name, ordering):
    doc = solve(solver, f"matrix={matrix(name)}", f"ordering={ordering}")
    assert doc["schema"] == "perfatlas.result/1" and doc["benchmark"] == "app.spsolve"
    derived = doc["derived"]
    assert derived["residual"] < 1e-10
    assert len(derived["residuals"]) == 3 and max(derived["forward_errors"]) < 1e-6
    for phase in PHASES[solver]:
        assert len(doc["samples"][phase]) == 3
        assert all(t > 0 for t in doc["samples"][phase])
        assert doc["units"][phase] == "s"
    assert all(rate > 0 for rate in doc["samples"]["factorization_flops_per_s"])
    assert derived["nnz_L"] >= derived["nnz_A_lower"]
    assert derived["fill_ratio"] == pytest.approx(derived["nnz_L"] / derived["nnz_A_lower"])
    assert derived["flops"] > 0 and derived["verified"] is True
    assert derived["matrix"]["symmetry"] == "symmetric"
    n = {"bcsstk01.mtx": 48, "494_bus.mtx": 494}[name]
    lower = {"bcsstk01.mtx": 224, "494_bus.mtx": 1080}[name]
    assert derived["n"] == n and derived["nnz_A_lower"] == lower
    assert derived["nnz_A"] == 2 * lower - n  # both triangles, the diagonal once (all present)
    if solver == "mumps":
        assert doc["params"]["np"] == 2 and len(doc["placement"]["ranks"]) == 2


def test_both_solvers_factor_the_same_permuted_matrix():
    """The ordering is computed once for both: fill within a few percent (MUMPS amalgamates)."""
    words = ["problem=laplace2d", "n=20", "ordering=metis"]
    cholmod, mumps = solve("cholmod", *words), solve("mumps", *words)
    assert mumps["derived"]["nnz_L"] == pytest.approx(cholmod["derived"]["nnz_L"], rel=0.15)
    assert "given to MUMPS (ICNTL(7)=1)" in mumps["derived"]["ordering"]


@pytest.mark.parametrize(
    "problem, n, order, nnz",
    [
        ("laplace2d", 4, 16, 5 * 16 - 4 * 4),  # 5n^2 - 4n: each of 4n edge points misses one
        ("laplace2d", 7, 49, 5 * 49 - 4 * 7),
        ("laplace3d", 3, 27, 7 * 27 - 6 * 9),  # 7n^3 - 6n^2
        ("elasticity3d", 1, 12, 144),  # the 4 free nodes of one hexahedron, all coupled
        ("elasticity3d", 3, 3 * 3 * 16, 9 * 7 * 10 * 10),  # 3n(n+1)^2, 9(3n-2)(3n+1)^2
    ],
)
def test_generated_problems_have_the_exact_size(problem, n, order, nnz):
    doc = solve("cholmod", f"problem={problem}", f"n={n}")
    assert doc["derived"]["n"] == order
    assert doc["derived"]["nnz_A"] == nnz
    assert doc["derived"]["residual"] < 1e-10
    assert doc["derived"]["matrix"] == {**doc["derived"]["matrix"], "problem": problem, "grid": n}


def test_elasticity_is_solved_by_both_solvers_with_a_random_right_hand_side():
    for solver in ("cholmod", "mumps"):
        doc = solve(solver, "problem=elasticity3d", "n=4", "E=210e9", "nu=0.3", "rhs=random")
        assert doc["derived"]["n"] == 3 * 4 * 25
        assert doc["derived"]["residual"] < 1e-10
        assert "forward_errors" not in doc["derived"]


@pytest.mark.parametrize("solver", ["cholmod", "mumps"])
def test_indefinite_matrix_is_one_sentence_and_status_2(solver, tmp_path):
    path = tmp_path / "indefinite.mtx"  # eigenvalues 3 and -1
    path.write_text(
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1.0\n2 1 2.0\n2 2 1.0\n"
    )
    done = spsolve(solver, f"matrix={path}")
    assert done.returncode == 2
    assert message(done).startswith("pa-spsolve: the matrix is not positive definite (")
    assert solver.upper() in message(done)


def test_pattern_matrix_of_ones_is_not_positive_definite():
    done = spsolve("cholmod", f"matrix={matrix('jagmesh7.mtx')}")
    assert done.returncode == 2
    assert "the matrix is not positive definite (CHOLMOD: not positive definite at column" in (
        message(done)
    )


def test_matrix_missing_diagonal_entries_is_rejected_while_read():
    # west0479 (a chemical plant model) holds 8 diagonal entries for 479 rows.
    done = spsolve("cholmod", f"matrix={matrix('west0479.mtx')}")
    assert done.returncode == 2
    assert "west0479.mtx holds 8 diagonal entries for 479 rows" in message(done)


def test_unsymmetric_matrix_is_rejected(tmp_path):
    path = tmp_path / "unsymmetric.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 4.0\n2 1 1.0\n2 2 4.0\n"
    )
    done = spsolve("cholmod", f"matrix={path}")
    assert done.returncode == 2
    assert "unsymmetric.mtx is not symmetric: entry (2, 1) is 1 but (1, 2) is 0" in message(done)
    assert "needs a symmetric positive definite matrix" in message(done)


@pytest.mark.parametrize(
    "text, line, says",
    [
        ("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4\n2 1\n", 4, "expected"),
        ("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n3 1 4\n", 3, "lies outside"),
        ("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 4\n", 3, "above the diag"),
        ("%%MatrixMarket matrix array real general\n2 2\n1\n", 1, "only sparse 'coordinate'"),
        ("%%MatrixMarket matrix coordinate complex general\n", 1, "only real, integer and"),
        ("hello\n", 1, "not a Matrix Market file"),
        ("%%MatrixMarket matrix coordinate real general\n% c\n2 3 1\n", 3, "not square"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 4\n2 2 4\n", 4, "more entries"),
    ],
)
def test_malformed_matrix_market_file_names_the_line(tmp_path, text, line, says):
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    done = spsolve("cholmod", f"matrix={path}")
    assert done.returncode == 2
    assert f"bad.mtx line {line}: " in message(done) and says in message(done)


def test_truncated_file_says_how_many_entries_it_found(tmp_path):
    path = tmp_path / "short.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n")
    done = spsolve("cholmod", f"matrix={path}")
    assert done.returncode == 2
    assert "short.mtx ends at line 3 after 1 of the 3 entries" in message(done)


@pytest.mark.parametrize(
    "words, says",
    [
        (["solver=superlu", "problem=laplace2d"], "solver 'superlu' is not one of cholmod, mumps"),
        (["ordering=rcm", "problem=laplace2d"], "ordering 'rcm' is not one of amd, metis"),
        ([], "give a matrix: matrix=FILE (Matrix Market) or problem="),
        (["matrix=/nonexistent.mtx"], "cannot read the matrix file /nonexistent.mtx"),
    ],
)
def test_bad_arguments_are_one_sentence(words, says):
    done = subprocess.run(
        [str(executable("pa-spsolve")), *words], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert says in message(done)


# -- through perfatlas ---------------------------------------------------------------------------


def test_measure_stores_a_cholmod_solve(cli, tmp_path):
    out = tmp_path / "sp.json"
    result = cli(
        "measure",
        "app.spsolve",
        f"matrix={matrix('bcsstk01.mtx')}",
        "solver=cholmod",
        "repeat=6",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["launch"]["launcher"] == "local"
    assert doc["derived"]["residual"] < 1e-10
    assert "numeric_s" in result.out


def test_measure_runs_mumps_under_mpirun(cli, tmp_path):
    mpirun(2)
    out = tmp_path / "sp.json"
    result = cli(
        "measure",
        "app.spsolve",
        "problem=elasticity3d",
        "n=4",
        "solver=mumps",
        "np=2",
        "repeat=3",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["launch"]["launcher"] == "mpirun" and doc["params"]["np"] == 2
    assert doc["derived"]["n"] == 300 and doc["derived"]["residual"] < 1e-10


@pytest.mark.parametrize(
    "words, says",
    [
        (["solver=cholmod", "np=2", "problem=laplace2d"], "np=2 applies to solver=mumps"),
        (["problem=laplace2d", "matrix=x.mtx"], "not both"),
        (["solver=cholmod"], "give matrix=FILE"),
        (["matrix=/nonexistent.mtx"], "does not exist"),
        (["problem=poisson"], "is not one of laplace2d, laplace3d, elasticity3d"),
    ],
)
def test_measure_rejects_bad_parameters_in_one_sentence(cli, words, says):
    result = cli("measure", "app.spsolve", *words)
    assert result.code == 2
    assert says in result.err
