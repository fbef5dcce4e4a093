"""app.madbench (native/app/madbench): the MADbench pipeline against a serial numpy computation
of the same quantities (same splitmix64 sky), at np = 1 and on a 2x2 grid; gangs, both I/O modes
and I/O throttling give the same results; the files hold the matrices where they should; exact
flop and byte counts; one sentence and exit status 2 for every decomposition that cannot be."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
from functools import cache

import numpy as np
import pytest
from mpi_helpers import mpirun, own_sentence

from perfatlas.launch.native import bin_dir, executable

PHASES = ("dSdC", "invD", "W", "dLdC")
SMALL = ["npix=64", "nbin=4", "lbin=3", "bsize=16", "repeat=2", "warmup=0"]
MASK = (1 << 64) - 1


def madbench_program() -> str:
    if not (bin_dir() / "pa-madbench").is_file():
        pytest.skip("pa-madbench is not built (ScaLAPACK and Open MPI are needed)")
    return str(executable("pa-madbench"))


def launch(np_: int, *words: str) -> subprocess.CompletedProcess:
    argv = [*mpirun(np_), madbench_program(), *words]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def madbench(np_: int, *words: str) -> dict:
    done = launch(np_, *words)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- the serial reference ------------------------------------------------------------------------
def uniforms(seed: int, count: int) -> np.ndarray:
    """splitmix64 (Steele, Lea and Flood 2014) doubles in [0, 1): the top 53 bits x 2^-53."""
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(((z ^ (z >> 31)) >> 11) * 2.0**-53)
    return np.array(out)


@cache
def reference(npix: int, nbin: int, lbin: int, seed: int = 1, noise: float = 1.0) -> dict:
    """Every quantity of the pipeline, computed on whole matrices (sky.h, pipeline.h)."""
    u = uniforms(seed, 3 * npix)
    z = 2 * u[0 : 2 * npix : 2] - 1
    phi = 2 * np.pi * u[1 : 2 * npix : 2]
    x, y = np.sqrt(1 - z * z) * np.cos(phi), np.sqrt(1 - z * z) * np.sin(phi)
    d = 2 * u[2 * npix :] - 1
    cosine = np.clip(np.outer(x, x) + np.outer(y, y) + np.outer(z, z), -1, 1)
    previous, current, degree = np.ones_like(cosine), cosine.copy(), 1
    derivatives, spectrum = [], []
    for b in range(nbin):
        first = 2 + b * lbin
        s = np.zeros_like(cosine)
        for multipole in range(first, first + lbin):
            while degree < multipole:  # (l + 1) P_{l+1} = (2l + 1) x P_l - l P_{l-1}
                following = ((2 * degree + 1) * cosine * current - degree * previous) / (degree + 1)
                previous, current, degree = current, following, degree + 1
            s += (2 * multipole + 1) / (4 * np.pi) * current
        derivatives.append(s)
        spectrum.append(4 * np.pi / (first * (first + 1)))
    covariance = sum(c * s for c, s in zip(spectrum, derivatives)) + noise * np.eye(npix)
    inverse = np.linalg.inv(covariance)
    w = [inverse @ s for s in derivatives]
    likelihood = np.array([0.5 * (d @ wb @ inverse @ d - np.trace(wb)) for wb in w])
    fisher = np.array([[0.5 * np.trace(wa @ wb) for wb in w] for wa in w])
    return {
        "spectrum": np.array(spectrum),
        "dSdC": derivatives,
        "W": w,
        "invD_trace": np.trace(inverse),
        "invD_checksum": inverse.sum(),
        "trace_W": np.array([np.trace(wb) for wb in w]),
        "dLdC": likelihood,
        "fisher": fisher,
        "spectrum_correction": np.linalg.solve(fisher, likelihood),
    }


def assert_matches_reference(doc: dict) -> None:
    p, derived = doc["params"], doc["derived"]
    expected = reference(p["npix"], p["nbin"], p["lbin"], p["seed"], p["noise"])
    for key in ("invD_trace", "invD_checksum"):
        assert derived[key] == pytest.approx(expected[key], rel=1e-10), key
    assert np.allclose(derived["fiducial_spectrum"], expected["spectrum"], rtol=1e-15)
    for key in ("trace_W", "dLdC", "fisher", "spectrum_correction"):
        found, wanted = np.array(derived[key]), expected[key]
        assert np.abs(found - wanted).max() <= 1e-10 * np.abs(wanted).max(), key
    assert derived["verified"] is True
    assert all(error < 1e-12 for error in derived["checks"].values() if isinstance(error, float))


def numroc(n: int, nb: int, proc: int, procs: int) -> int:
    """Rows of a block-cyclic dimension on one process (ScaLAPACK's NUMROC, source 0)."""
    blocks, extra = divmod(n // nb, procs)
    return blocks * nb + (nb if proc < extra else n % nb if proc == extra else 0)


# -- against numpy -------------------------------------------------------------------------------
@pytest.mark.parametrize("np_", [1, 4])
def test_the_pipeline_matches_numpy(np_):
    doc = madbench(np_, *SMALL)
    assert doc["schema"] == "perfatlas.result/1" and doc["benchmark"] == "app.madbench"
    assert doc["params"]["np"] == np_ and len(doc["placement"]["ranks"]) == np_
    q = math.isqrt(np_)
    assert doc["derived"]["grid"] == {**doc["derived"]["grid"], "rows": q, "cols": q}
    assert_matches_reference(doc)


def test_uneven_blocks_on_a_3x3_grid_match_numpy():
    """70 pixels in blocks of 8 on 3x3: the last block is short and the rows are uneven."""
    doc = madbench(9, "npix=70", "nbin=3", "lbin=5", "bsize=8", "repeat=1", "warmup=0")
    assert_matches_reference(doc)


def test_gangs_give_the_same_fisher_matrix():
    """np = 4: one gang of 2x2, two gangs of 1x2, four gangs of one rank each."""
    docs = {g: madbench(4, *SMALL, f"ngang={g}") for g in (1, 2, 4)}
    for g, doc in docs.items():
        assert doc["derived"]["gangs"] == g and doc["derived"]["bins_per_gang"] == 4 // g
        assert_matches_reference(doc)
        assert np.allclose(doc["derived"]["fisher"], docs[1]["derived"]["fisher"], rtol=1e-12)
    assert {k: docs[2]["derived"]["gang_grid"][k] for k in ("rows", "cols")} == {
        "rows": 1,
        "cols": 2,
    }
    assert docs[4]["derived"]["gang_grid"]["cols"] == 1


def test_shared_io_and_throttling_give_the_same_results():
    files = madbench(4, *SMALL)
    shared = madbench(4, *SMALL, "io=shared", "rmod=2", "wmod=4")
    io = shared["derived"]["io"]
    assert (io["mode"], io["readers_at_once"], io["writers_at_once"]) == ("shared", 2, 1)
    assert files["derived"]["io"]["readers_at_once"] == 4
    for key in ("fisher", "dLdC", "spectrum_correction", "invD_checksum"):
        assert np.allclose(files["derived"][key], shared["derived"][key], rtol=1e-12), key


def test_overlapped_w_io_gives_the_same_files_and_results(tmp_path):
    """overlap=1 (W reads dS/dC_b+1 and writes W_b-1 on a helper thread behind pdgemm) against
    overlap=0 (MADbench's order): the same W_b files and results; where tokens order the I/O
    (rmod > 1), with MPI-IO or with fewer than 3 bins the waited order runs."""
    docs = {}
    for overlap in (0, 1):
        (tmp_path / str(overlap)).mkdir()
        docs[overlap] = madbench(
            1, *SMALL, f"overlap={overlap}", "keep=1", f"dir={tmp_path / str(overlap)}"
        )
    assert docs[1]["derived"]["w_io_overlapped"] is True
    assert docs[0]["derived"]["w_io_overlapped"] is False
    for kind in ("dSdC.0", "W.0"):
        assert (tmp_path / "0" / kind).read_bytes() == (tmp_path / "1" / kind).read_bytes(), kind
    for key in ("fisher", "dLdC", "spectrum_correction", "trace_W", "bytes_read", "bytes_written"):
        assert docs[0]["derived"][key] == docs[1]["derived"][key], key
    assert_matches_reference(docs[1])
    two_bins = [word if not word.startswith("nbin=") else "nbin=2" for word in SMALL]
    for words in ([*SMALL, "rmod=2"], [*SMALL, "io=shared"], two_bins):
        assert madbench(4, *words, "overlap=1")["derived"]["w_io_overlapped"] is False, words
    assert madbench(1, *SMALL)["derived"]["w_io_overlapped"] is False  # MADbench's order


def test_the_shared_files_hold_every_matrix_column_major(tmp_path):
    n, nbin = 70, 3
    words = [f"npix={n}", f"nbin={nbin}", "lbin=5", "bsize=16", "repeat=1", "warmup=0"]
    doc = madbench(4, *words, "io=shared", "keep=1", f"dir={tmp_path}")
    assert doc["derived"]["io"]["kept"] is True and doc["derived"]["io"]["dir"] == str(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["W", "dSdC"]
    expected = reference(n, nbin, 5)
    for kind in ("dSdC", "W"):
        assert (tmp_path / kind).stat().st_size == nbin * n * n * 8
        stored = np.fromfile(tmp_path / kind).reshape(nbin, n, n)
        for b in range(nbin):  # column-major: the file's rows are the matrix's columns
            assert np.allclose(stored[b].T, expected[kind][b], rtol=0, atol=1e-12)


def test_each_rank_writes_its_own_files_of_its_share(tmp_path):
    n, nb, nbin = 70, 16, 3
    words = [f"npix={n}", f"nbin={nbin}", "lbin=5", f"bsize={nb}", "repeat=1", "warmup=0"]
    madbench(4, *words, "keep=1", f"dir={tmp_path}")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"{kind}.{r}" for kind in ("dSdC", "W") for r in range(4))
    for rank in range(4):
        row, col = divmod(rank, 2)  # row-major grid
        share = numroc(n, nb, row, 2) * numroc(n, nb, col, 2)
        for kind in ("dSdC", "W"):
            assert (tmp_path / f"{kind}.{rank}").stat().st_size == nbin * share * 8


def test_the_files_are_removed_unless_kept(tmp_path):
    madbench(4, *SMALL, f"dir={tmp_path}")
    madbench(4, *SMALL, f"dir={tmp_path}", "io=shared")
    assert list(tmp_path.iterdir()) == []


def test_flops_bytes_and_samples_are_exact():
    n, nbin, lbin = 64, 4, 3
    doc = madbench(4, *SMALL)
    derived, lmax = doc["derived"], 1 + nbin * lbin
    assert derived["multipoles"] == {"first": 2, "last": lmax, "per_bin": lbin}
    assert derived["flops"] == {
        "dSdC": n * n * (5 + 3 * (lmax - 1) + 2 * nbin * lbin),
        "invD": 2 * nbin * n * n + n**3,
        "W": 2 * nbin * n**3,
        "dLdC": 2 * n * n + nbin * (3 * n * n + n) + nbin * (nbin + 1) * n * n,
    }
    one_pass = nbin * n * n * 8
    assert derived["bytes_read"] == {"dSdC": 0, "invD": one_pass, "W": one_pass, "dLdC": one_pass}
    assert derived["bytes_written"] == {"dSdC": one_pass, "invD": 0, "W": one_pass, "dLdC": 0}
    assert derived["dgemm"]["n"] == 32  # 64 pixels over 2 process rows, a multiple of 16
    samples, units = doc["samples"], doc["units"]
    assert len(doc["sample_seconds"]) == 2
    for phase in PHASES:
        assert units[f"{phase}_s"] == "s" and units[f"{phase}_percent_of_dgemm"] == "%"
        assert units[f"{phase}_io_wait_s"] == "s"
        for r in range(2):
            seconds = samples[f"{phase}_s"][r]
            # every phase reads or writes, and the slowest rank waits no longer than its phase
            assert 0 < samples[f"{phase}_io_wait_s"][r] < seconds
            rate = samples[f"{phase}_flops_per_s"][r]
            assert seconds > 0 and rate == pytest.approx(derived["flops"][phase] / seconds)
            assert samples[f"{phase}_percent_of_dgemm"][r] == pytest.approx(
                100 * rate / (4 * samples["dgemm_flops_per_s"][r])
            )
    assert samples["total_s"] == pytest.approx(
        [sum(samples[f"{p}_s"][r] for p in PHASES) for r in range(2)]
    )


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "np_, words, says",
    [
        (2, [], "np=2 is not a perfect square: MADbench's process grid is square (np = 1, 4, 9,"),
        (4, ["ngang=3", "nbin=3"], "ngang=3 does not divide np=4: every gang has np/ngang ranks"),
        (4, ["ngang=2", "nbin=3"], "ngang=2 does not divide nbin=3: every gang takes nbin/ngang"),
        (
            4,
            ["npix=16", "bsize=16"],
            "npix=16 is below bsize x 2 = 32: every row and column of the 2x2 process grid must "
            "hold at least one block",
        ),
        (1, ["io=hdf5"], "io 'hdf5' is not one of files, shared"),
        (1, ["dir=/nonexistent/folder"], "dir=/nonexistent/folder is not a folder"),
        (1, ["keep=2"], "keep"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(np_, words, says):
    done = launch(np_, *words)
    assert done.returncode == 2
    assert says in own_sentence(done, "pa-madbench")


# -- through perfatlas ---------------------------------------------------------------------------
def test_measure_stores_every_phase(cli, tmp_path):
    madbench_program()
    out = tmp_path / "mb.json"
    result = cli("measure", "app.madbench", "np=4", "ngang=2", *SMALL, "--json", str(out))
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["launch"]["launcher"] == "mpirun" and doc["params"]["np"] == 4
    assert_matches_reference(doc)
    with sqlite3.connect(cli.db) as db:
        stored = db.execute(
            "SELECT metric, n FROM results WHERE benchmark = 'app.madbench'"
        ).fetchall()
    assert sorted(stored) == sorted((metric, 2) for metric in doc["samples"])
    assert len(stored) == 18 and "W_s" in result.out


@pytest.mark.parametrize(
    "words, says",
    [
        (["np=2"], "app.madbench: np=2 is not a perfect square: MADbench's process grid is"),
        (["np=4", "ngang=3", "nbin=3"], "ngang=3 does not divide np=4: every gang has np/ngang"),
        (["np=4", "ngang=2", "nbin=3"], "ngang=2 does not divide nbin=3: every gang takes"),
        (
            ["np=4", "npix=16", "bsize=16"],
            "npix=16 is below bsize x 2 = 32: every row and column of the 2x2 process grid",
        ),
        (["dir=/nonexistent/folder"], "dir=/nonexistent/folder is not a folder"),
        (["npix=1000000", "np=1"], "of memory on 1 ranks, more than 80 % of this machine's"),
    ],
)
def test_measure_rejects_what_cannot_be_decomposed_in_one_sentence(cli, words, says):
    result = cli("measure", "app.madbench", *words)
    assert result.code == 2
    assert says in result.err


def test_profile_shows_the_four_phases(cli, tmp_path):
    """Each phase is an MPI_Pcontrol region; io=files counts its POSIX reads and writes as I/O."""
    if not (bin_dir() / "libperfatlas-ipm.so").is_file():
        pytest.skip("perfatlas-ipm is not built")
    out = tmp_path / "profile"
    command = [*mpirun(4), madbench_program(), *SMALL, f"dir={tmp_path}"]
    result = cli("profile", "--out", str(out), "--", *command)
    assert result.code == 0, result.err
    document = json.loads((out / "ipm-profile.json").read_text())
    regions = {region["path"]: region for region in document["regions"]}
    assert set(PHASES) <= set(regions)
    for phase in PHASES:
        assert regions[phase]["ranks"] == 4 and regions[phase]["entries"] == 4 * 2
        assert regions[phase]["io_s"]["sum"] > 0
    assert regions["W"]["mpi_s"]["sum"] > 0  # pdgemm's broadcasts
