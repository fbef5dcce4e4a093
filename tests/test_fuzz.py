"""Short fuzzing runs of the native Matrix Market reader and key=value parser (docs/safety/native.md).

`make fuzz-build` builds the libFuzzer targets (clang, AddressSanitizer, UndefinedBehaviorSanitizer);
each runs a fixed number of inputs from a fixed seed, starting from the seed corpus and the
regression corpus (inputs that once failed), and must end cleanly. `make fuzz-replay` builds the
same targets with GCC's sanitizers and a plain main, which replays both corpora. Long campaigns:
`make fuzz FUZZ_SECONDS=...`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "fuzz"
TARGETS = ["matrix_market", "args"]
RUNS = 20_000  # a few seconds per target under both sanitizers


def corpora(target: str) -> list[Path]:
    """The seed corpus, and the regression corpus where one exists."""
    found = [CORPUS / target, CORPUS / "regressions" / target]
    return [folder for folder in found if folder.is_dir()]


def make(goal: str, build: Path) -> None:
    if not (ROOT / "native" / "fuzz").is_dir():
        pytest.skip("the fuzz targets' sources are not here (an installed copy of the tests)")
    done = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), goal, f"FUZZ_BUILD={build}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def fuzz_build(tmp_path_factory) -> Path:
    if not shutil.which("clang"):
        pytest.skip("clang is not installed (Debian: apt-get install clang libclang-rt-14-dev)")
    build = tmp_path_factory.mktemp("fuzz")
    make("fuzz-build", build)
    return build


@pytest.mark.parametrize("target", TARGETS)
def test_short_fuzzing_run_is_clean(fuzz_build: Path, target: str, tmp_path: Path) -> None:
    assert any((CORPUS / target).iterdir()), "the seed corpus is empty"
    found = tmp_path / "corpus"
    found.mkdir()
    argv = [
        fuzz_build / f"{target}_fuzz",
        f"-runs={RUNS}",
        "-seed=1",
        "-max_len=4096",
        "-close_fd_mask=3",
        f"-artifact_prefix={tmp_path}/",
        found,
        *corpora(target),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    crashes = sorted(p.name for p in tmp_path.glob("*-*") if p.is_file())
    assert done.returncode == 0 and not crashes, f"{crashes}\n{done.stderr[-3000:]}"
    assert f"Done {RUNS} runs" in done.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_corpora_replay_cleanly_under_gcc_sanitizers(target: str, tmp_path: Path) -> None:
    if not shutil.which("gcc"):
        pytest.skip("gcc is not installed")
    make("fuzz-replay", tmp_path)
    inputs = sorted(p for folder in corpora(target) for p in folder.iterdir() if p.is_file())
    done = subprocess.run(
        [tmp_path / "gcc" / f"{target}_replay", *inputs],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"replayed {len(inputs)} inputs" in done.stdout
    assert "runtime error" not in done.stderr and "AddressSanitizer" not in done.stderr
