"""app.spmv's optional node-level kernels (kernels=: csr_unroll, csr_simd, sell, bcsr; fast.c,
bcsr.c): each kernel's y = A x against an independent dense numpy product, within round-off of
the plain CSR reference, on real matrices, generated stiffness matrices split between threads,
and edge cases (empty rows, one row, orders that are not multiples of the SELL chunk or of the
block size, entries given in any order, blocks partly filled, ranks whose rows start inside a
block); bcsr "not measurable" exactly where no block size has a fill ratio of 1.1 or less; a
planted wrong result ends the run with status 3 naming the first wrong component; bad input is
one sentence and status 2."""

from __future__ import annotations

import os

import numpy as np
import pytest
from shared_matrices import matrix
from test_spmv import FAST, LIMIT, measure, read_matrix_market, sentences, spmv

KERNELS = ["csr_unroll", "csr_simd", "sell", "bcsr"]
BLOCK_SIZES = (2, 3, 4, 6)  # bcsr's candidates, r x r
FILL_LIMIT = 1.1


def simd_built(doc: dict) -> bool:
    """csr_simd is built where the build had AVX-512 (F and VL) or AVX2 with FMA."""
    isa = set(doc["build"]["isa"])
    return {"avx512f", "avx512vl"} <= isa or {"avx2", "fma"} <= isa


# Batches calibrated to 20 us: a product of a one-row matrix lasts a few ns, under one tick of
# a generic timer (aarch64 cntvct_el0 runs at 25 MHz-1 GHz), so a batch of one would read 0 s.
CALIBRATED = [w for w in FAST if not w.startswith("min_sample_time=")] + ["min_sample_time=20us"]


def kernels_of(np_: int, *words: str) -> dict:
    """The document of one run with every kernel, no remote variant, x and every y kept."""
    return measure(np_, *words, "kernels=all", "variants=none", "vectors=yes", timing=CALIBRATED)


def fill_ratios(pattern: np.ndarray, first_row: list[int] | None = None) -> dict[int, float]:
    """Per block size r: the r x r blocks of the matrix's grid that hold a structural entry,
    times r^2, over the structural entries (Im & Yelick's fill ratio), counted here from the
    dense pattern (True where the matrix stores an entry); a block row that two ranks share
    (first_row: the partition) is stored by both. Sizes above the order are left out."""
    n = pattern.shape[0]
    rows, columns = np.nonzero(pattern)
    rank = np.searchsorted(first_row or [0, n], rows, side="right")
    ratios = {}
    for r in BLOCK_SIZES:
        if r <= n and len(rows):
            blocks = set(zip(rank.tolist(), (rows // r).tolist(), (columns // r).tolist()))
            ratios[r] = len(blocks) * r * r / len(rows)
    return ratios


def expected_block_size(pattern: np.ndarray, first_row: list[int] | None = None) -> int | None:
    """bcsr's choice: the fewest bytes, fill (8 + 4 / r^2) per nonzero, at a fill of at most
    1.1; None: not measurable."""
    ratios = fill_ratios(pattern, first_row)
    fits = {r: f * (8 + 4 / r**2) for r, f in ratios.items() if f <= FILL_LIMIT}
    return min(fits, key=fits.get) if fits else None


def check_bcsr_applies(doc: dict, pattern: np.ndarray) -> bool:
    """bcsr ran with the block size the heuristic picks, or said why not; True when it ran."""
    variant = doc["derived"]["variants"]["bcsr"]
    first_row = doc["derived"]["partition"]["first_row"]
    r = expected_block_size(pattern, first_row)
    ratios = fill_ratios(pattern, first_row)
    if r is None:
        assert variant["not_measurable"].startswith("no block structure"), variant
        if ratios:
            assert f"{min(ratios.values()):.2f}" in variant["not_measurable"]
        return False
    assert variant["layout"].startswith(f"{r} x {r} blocks, fill ratio {ratios[r]:.3f} ")
    return True


def check_kernels(doc: dict, a: np.ndarray, pattern: np.ndarray | None = None) -> None:
    """Each kernel's y against A x, relative to sum_j |a_ij x_j|; csr_simd "not measurable" only
    in a build without x86 gathers, bcsr only without block structure (pattern: the stored
    entries, explicit zeros included; default: the nonzeros of a)."""
    x = np.array(doc["derived"]["vectors"]["x"])
    ys = doc["derived"]["vectors"]["y"]
    reference = a @ x
    scale = np.maximum(np.abs(a) @ np.abs(x), 1e-300)
    for name in KERNELS:
        variant = doc["derived"]["variants"][name]
        if name == "csr_simd" and not simd_built(doc):
            assert "AVX2 or AVX-512" in variant["not_measurable"]
            continue
        if name == "bcsr" and not check_bcsr_applies(doc, a != 0 if pattern is None else pattern):
            continue
        error = np.abs(np.array(ys[name]) - reference) / scale
        assert error.max() <= LIMIT, f"{name}: relative error {error.max():.3g}"
        assert variant["max_relative_error"] <= LIMIT
        # round-off of the same sums in another order: a few ulps of the scale, never more
        assert np.allclose(ys[name], ys["csr"], rtol=0, atol=1e-13 * scale.max())
        assert len(doc["samples"][f"{name}_s"]) == 3 and min(doc["samples"][f"{name}_s"]) > 0
    assert doc["derived"]["verified"] is True


@pytest.mark.parametrize("name", ["bcsstk01.mtx", "west0479.mtx", "jagmesh7.mtx", "494_bus.mtx"])
def test_kernels_match_the_reference_on_the_shared_matrices(name):
    path = matrix(name)
    check_kernels(kernels_of(1, f"matrix={path}", "threads=2"), read_matrix_market(path))


def same_as_csr(doc: dict) -> None:
    """Each kernel's y against csr's (itself checked by pa-spmv against the CSC product, as every
    kernel is: max_relative_error): round-off of the same sums in another order. bcsr may say
    the matrix has no block structure (a random renumbering breaks the blocks)."""
    ys = doc["derived"]["vectors"]["y"]
    y = np.array(ys["csr"])
    for name in KERNELS:
        why = doc["derived"]["variants"][name].get("not_measurable", "")
        if name == "bcsr" and why.startswith("no block structure"):
            continue
        if name != "csr_simd" or simd_built(doc):
            assert np.abs(np.array(ys[name]) - y).max() <= 1e-12 * np.abs(y).max()
            assert doc["derived"]["variants"][name]["max_relative_error"] <= LIMIT


def test_kernels_split_a_stiffness_matrix_between_threads():
    """elasticity3d n=6: 882 rows, about 52,000 nonzeros: two threads (one per 16,384 nonzeros
    at most)."""
    doc = kernels_of(1, "problem=elasticity3d", "n=6", "threads=2")
    assert doc["derived"]["n"] == 3 * 6 * 7**2
    assert 40 <= doc["derived"]["nnz"] / doc["derived"]["n"] <= 60  # issue 21's 40-60 per row
    assert doc["derived"]["nnz"] > 2 * 16384
    # 3 unknowns per node: dense 3 x 3 blocks, each stored entry in one
    layout = doc["derived"]["variants"]["bcsr"]["layout"]
    assert (
        layout
        == f"3 x 3 blocks, fill ratio 1.000 (values stored / nonzeros), {doc['derived']['nnz'] // 9} blocks"
    )
    same_as_csr(doc)


@pytest.mark.parametrize("permute", ["random", "none"])
def test_fewer_threads_than_asked_still_compute_every_row(permute):
    """OMP_THREAD_LIMIT=1: the runtime gives one thread where two parts were planned; it takes
    both (the stiffness matrix renumbered at random: irregular access; or not: bcsr's blocks)."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    words = ["problem=elasticity3d", "n=6", f"permute={permute}", "threads=2"]
    same_as_csr(measure(1, *words, "kernels=all", "variants=none", "vectors=yes", env=env))


def write_matrix(path, n: int, entries: list[tuple[int, int, float]]) -> None:
    lines = ["%%MatrixMarket matrix coordinate real general", f"{n} {n} {len(entries)}"]
    lines += [f"{i + 1} {j + 1} {v!r}" for i, j, v in entries]
    path.write_text("\n".join(lines) + "\n")


def ragged(n: int, seed: int) -> list[tuple[int, int, float]]:
    """Rows of 0 to 20 entries (every length, empty rows included), columns anywhere, listed in
    a shuffled order (not by row, not by column)."""
    rng = np.random.default_rng(seed)
    entries = []
    for i in range(n):
        for j in rng.choice(n, size=min(n, int(rng.integers(0, 21))), replace=False):
            entries.append((i, int(j), float(rng.normal())))
    rng.shuffle(entries)
    return entries


EDGE_CASES = {
    "one row": (1, [(0, 0, 2.5)]),
    "one empty row": (1, []),
    "13 rows, every length 0-12, descending": (
        13,
        [(i, j, 1.0 + j) for i in range(13) for j in range(12 - i)],
    ),  # fmt: skip
    "300 rows crossing the sorting window, ragged": (300, ragged(300, 1)),
    "9 rows, last one full": (9, [(8, j, -1.0) for j in range(9)] + [(0, 3, 1.0)]),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_kernels_handle_edge_cases(case, tmp_path):
    n, entries = EDGE_CASES[case]
    path = tmp_path / "edge.mtx"
    write_matrix(path, n, entries)
    a = np.zeros((n, n))
    for i, j, v in entries:
        a[i, j] += v
    check_kernels(kernels_of(1, f"matrix={path}"), a)


@pytest.mark.parametrize("name", KERNELS)
def test_a_wrong_kernel_result_exits_3_naming_the_first_wrong_component(name):
    env = {**os.environ, "PERFATLAS_SPMV_CORRUPT": name}
    # elasticity3d n=3: 144 rows in 3 x 3 blocks, so that bcsr runs too; y_73 is planted wrong
    done = spmv(1, "problem=elasticity3d", "n=3", f"kernels={name}", "variants=none", env=env)
    if name == "csr_simd" and "not_measurable" in done.stdout:
        pytest.skip("csr_simd is not built here (no AVX2 or AVX-512): nothing to check")
    assert done.returncode == 3, done.stderr
    assert f"{name} computed a wrong y = A x: component 73 (the first wrong one)" in done.stderr


@pytest.mark.parametrize(
    "words, says",
    [
        (["kernels=csr_fast"], "kernel 'csr_fast' is not one of csr_unroll, csr_simd, sell, bcsr"),
        (["kernels=,"], "kernels=',' names no kernel"),
        (["variants=none,bogus"], "variant 'none' is not one of"),
    ],
)
def test_bad_kernel_lists_are_one_sentence_and_status_2(words, says):
    done = spmv(1, "problem=laplace2d", "n=4", *words)
    assert done.returncode == 2, done.stderr
    said = sentences(done)
    assert len(said) == 1 and says in said.pop(), done.stderr


def test_measure_rejects_an_unknown_kernel_in_one_sentence(cli):
    result = cli("measure", "app.spmv", "problem=laplace2d", "n=8", "kernels=sell,blocked")
    assert result.code == 2
    assert (
        "kernel 'blocked' is not one of csr_unroll, csr_simd, sell, bcsr (or all, or none)"
        in result.err
    )


# -- bcsr: blocks of the matrix's grid, ragged, and no blocks at all ---------------------------


def blocked(r: int, seed: int = 1) -> tuple[int, list[tuple[int, int, float]]]:
    """Dense r x r blocks on a grid of 24 block rows, 4 blocks in each (the diagonal one and 3
    at random), block row 2 empty, order 24 r - 1 (the last block row and column one short),
    and 2 entries taken out of the blocks: a fill ratio between 1 and 1.1 at block size r, on
    one rank or two."""
    rng = np.random.default_rng(seed)
    n = 24 * r - 1
    entries = {}
    for block_row in (b for b in range(24) if b != 2):
        others = rng.choice([b for b in range(24) if b != block_row], size=3, replace=False)
        for block_column in (block_row, *others.tolist()):
            for i in range(block_row * r, min(block_row * r + r, n)):
                for j in range(block_column * r, min(block_column * r + r, n)):
                    entries[i, j] = float(rng.normal())
    off_diagonal = [key for key in entries if key[0] != key[1]]
    for index in rng.choice(len(off_diagonal), size=2, replace=False):
        del entries[off_diagonal[index]]
    return n, [(i, j, v) for (i, j), v in entries.items()]


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize("r", BLOCK_SIZES)
def test_bcsr_multiplies_ragged_blocks_of_every_size(r, np_, tmp_path):
    """Block size r chosen and y right: partial blocks at the matrix's edge (its last block
    column starts at n - r, not past x's end), holes in blocks (stored as zeros), an empty block
    row; at np=2 rank 1's rows start inside a block row (12 r - 1 is not a multiple of r), the
    block row both ranks hold stored by each."""
    n, entries = blocked(r)
    path = tmp_path / "blocked.mtx"
    write_matrix(path, n, entries)
    a = np.zeros((n, n))
    for i, j, v in entries:
        a[i, j] = v
    doc = measure(np_, f"matrix={path}", "kernels=bcsr", "variants=none", "vectors=yes",
                  "threads=2", timing=CALIBRATED)  # fmt: skip
    first_row = doc["derived"]["partition"]["first_row"]
    assert first_row[1] % r != 0 or np_ == 1
    assert expected_block_size(a != 0, first_row) == r  # the fixture exercises block size r
    x = np.array(doc["derived"]["vectors"]["x"])
    scale = np.maximum(np.abs(a) @ np.abs(x), 1e-300)
    error = np.abs(np.array(doc["derived"]["vectors"]["y"]["bcsr"]) - a @ x) / scale
    assert error.max() <= LIMIT
    assert check_bcsr_applies(doc, a != 0)


def test_bcsr_is_not_measurable_without_block_structure():
    """A random renumbering scatters the 3 x 3 blocks of the stiffness matrix: no block size
    keeps the fill ratio at 1.1 or below, bcsr says so (with the least fill ratio) and the run
    goes on, the other kernels measured."""
    doc = measure(1, "problem=elasticity3d", "n=3", "permute=random", "kernels=all",
                  "variants=none", timing=CALIBRATED)  # fmt: skip
    variants = doc["derived"]["variants"]
    why = variants["bcsr"]["not_measurable"]
    assert why.startswith(
        "no block structure: the least fill ratio of r x r blocks (r = 2, 3, 4, 6) is "
    )
    assert why.endswith("above 1.1") and "bcsr_s" not in doc["samples"]
    assert variants["sell"]["max_relative_error"] <= LIMIT
    assert doc["derived"]["verified"] is True


def test_bcsr_is_not_measurable_on_a_matrix_smaller_than_a_block(tmp_path):
    path = tmp_path / "one.mtx"
    write_matrix(path, 1, [(0, 0, 2.5)])
    doc = measure(1, f"matrix={path}", "kernels=bcsr", "variants=none", timing=CALIBRATED)
    assert doc["derived"]["variants"]["bcsr"]["not_measurable"] == (
        "no block structure: the matrix (order 1, 1 nonzeros) has no nonzero or is smaller "
        "than one 2 x 2 block"
    )


@pytest.mark.parametrize("loads", ["gather", "scalar"])
def test_both_ways_of_loading_x_give_the_csr_result(loads):
    """x_loads= forces the AVX-512 kernels' gather or scalar loads, whichever this CPU would pick
    by default, so both are checked on every AVX-512 machine; without AVX-512 it changes
    nothing and the layout says what ran."""
    doc = kernels_of(1, "problem=elasticity3d", "n=3", "threads=2", f"x_loads={loads}")
    layouts = {
        name: doc["derived"]["variants"][name].get("layout") for name in ("csr_simd", "sell")
    }
    if "avx512f" in doc["build"]["isa"]:
        said = "one vgatherdpd zmm" if loads == "gather" else "8 scalar loads"
        assert layouts == {"csr_simd": f"x's 8 lanes by {said}", "sell": f"x's 8 lanes by {said}"}
    else:
        assert "zmm" not in f"{layouts}"
    same_as_csr(doc)
