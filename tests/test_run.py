"""`perfatlas run`: a suite end to end, and an interrupted run that keeps what finished."""

import signal
import sqlite3
import subprocess
import sys
import time

from perfatlas.common.units import parse_size_series

SLOW_SUITE = """
description = "one size series: one launch, long enough to be interrupted inside it"
[[step]]
benchmark = "mem.latency"
chain = "page"
bytes = { from = "4KiB", to = "64MiB", per_doubling = 2 }
samples = 20
min_sample_time = "20ms"
"""
SLOW_POINTS = len(parse_size_series("4KiB..64MiB/2"))


def test_sigterm_inside_a_series_launch_keeps_its_finished_points(tmp_path):
    """The series is one native launch: its points are stored as it measures them, so a SIGTERM
    in the middle keeps those before it and marks the run interrupted."""
    suite, db = tmp_path / "slow.toml", tmp_path / "p.db"
    suite.write_text(SLOW_SUITE)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "perfatlas",
            "--db",
            str(db),
            "run",
            str(suite),
            "--out",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    stored = 0
    while stored < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0
    assert process.poll() is None, process.stderr.read().decode()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 130
    status, kept = (
        sqlite3.connect(db)
        .execute("SELECT status, (SELECT COUNT(*) FROM results) FROM runs")
        .fetchone()
    )
    assert status == "interrupted" and 2 <= kept < SLOW_POINTS
