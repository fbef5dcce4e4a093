"""Shared fixtures: the CLI run in-process against a temporary database."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from perfatlas.cli.entry import main
from perfatlas.machine.topology import Machine

# Property-based tests (Hypothesis): the same examples on every machine and every run, so that a
# red CI is reproducible; no deadline, since 2 shared cores make a single example's time noisy.
settings.register_profile(
    "perfatlas",
    derandomize=True,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("perfatlas")

# perfatlas profile measures none of the comm atlas its join lacks unless a test gives an
# --atlas-budget: the default would measure it after every profiled test program
# (tests/test_profile_atlas.py tests that).
os.environ["PERFATLAS_ATLAS_BUDGET"] = "0"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


ZOO_DIR = Path(__file__).parent / "data" / "topologies"  # machines perfatlas does not run on


@pytest.fixture
def on(monkeypatch):
    """Make hwloc (and so pa-topology) load one zoo machine by file name; returns its Machine."""

    def load(name: str) -> Machine:
        monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / name))
        monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
        return Machine.detect()

    return load


@pytest.fixture
def cli(tmp_path, capsys):
    """Run `perfatlas --db TMP ARGS...`; returns exit code and captured output."""
    db = tmp_path / "perfatlas.db"

    def run(*args: str, db_path: Path | None = None) -> CliResult:
        try:
            code = main(["--db", str(db_path or db), *args])
        except SystemExit as exit_:  # argparse errors
            code = exit_.code
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    run.db = db
    return run


@pytest.fixture
def read_json():
    return lambda path: json.loads(Path(path).read_text())


# -- a small real run, shared by the report and summary tests ------------------------------------
TINY_SUITE = """
description = "every report section from a few seconds of real measurements"

[[step]]
benchmark = "mem.latency"
chain = "page"
bytes = { from = "4KiB", to = "4MiB", per_doubling = 1 }
samples = 3
min_sample_time = "1ms"

[[step]]  # the two-thread method
benchmark = "mem.latency"
cpus = "0,1"
bytes = ["16KiB", "1MiB"]
samples = 3
min_sample_time = "1ms"

[[step]]  # not measurable on a one-node machine
benchmark = "mem.latency"
node = "remote"
bytes = "1MiB"
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "mem.bandwidth"
op = ["read", "triad"]
bytes = { from = "16KiB", to = "1MiB", per_doubling = 1 }
threads = [1, "all"]
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "mem.bandwidth"
op = "copy"
store = "nt"
bytes = ["64KiB", "1MiB"]
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "mem.contention"
measure = ["latency", "bandwidth"]
bytes = ["16KiB", "1MiB"]
load_bytes = "2MiB"
samples = 3
min_sample_time = "1ms"

[[step]]  # OS noise on every PU at once
benchmark = "noise"
cpus = "all"
duration = "0.3s"
"""


@dataclass
class SmallRun:
    db: Path
    run_id: int
    report: Path  # the HTML report `perfatlas run` wrote
    stdout: str


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> SmallRun:
    """`perfatlas run` of TINY_SUITE through the CLI, with the real native executables."""
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("small-run")
    suite, db, out = folder / "tiny.toml", folder / "perfatlas.db", folder / "out"
    suite.write_text(TINY_SUITE)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["--db", str(db), "run", str(suite), "--out", str(out)])
    assert code == 0, stderr.getvalue()
    reports = sorted(out.glob("run-*.html"))
    assert len(reports) == 1, f"expected one report in {out}, found {reports}"
    return SmallRun(db, int(reports[0].stem.split("-")[1]), reports[0], stdout.getvalue())


def find_chromium() -> str:
    """The headless browser the report tests render with; its absence is a failure, not a skip."""
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(
        "no chromium to render the report: install it with 'make deps' (apt-get install chromium)"
    )


@pytest.fixture(scope="session")
def render_html(tmp_path_factory):
    """render(html_path, *flags) -> stdout of headless Chromium (e.g. '--dump-dom')."""
    import subprocess

    browser = find_chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")

    def render(path: Path, *flags: str) -> str:
        argv = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *flags,
            path.resolve().as_uri(),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    return render
