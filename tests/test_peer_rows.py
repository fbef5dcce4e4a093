"""The one peers table (bench/peer_rows.py, bench/peers.py): rows recorded by the bench scripts in
one format, the goal's verdict from the interval, the terminal and Markdown tables, and the page's
table replaced between its markers, nothing else of the page touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from peer_rows import (  # noqa: E402  (bench/ is scripts, not a package)
    ROWS_ENV,
    PeerRow,
    markdown_table,
    read_rows,
    record,
    record_ratio,
    text_table,
)


def row(value: float, lo: float, hi: float, goal: str) -> PeerRow:
    return PeerRow("b", "figure", "peer", 1, 2.0, 1.0, "GB/s", value, lo, hi, goal)


@pytest.mark.parametrize(
    ("value", "lo", "hi", "goal", "verdict"),
    [
        (1.2, 1.1, 1.3, ">= 1", "yes"),
        (0.9, 0.8, 0.95, ">= 1", "no"),
        (1.05, 0.9, 1.2, ">= 1", "yes?"),
        (0.95, 0.9, 1.2, ">= 1", "no?"),
        (12.0, 10.0, 19.0, "<= 20", "yes"),
        (25.0, 21.0, 30.0, "<= 20", "no"),
    ],
)
def test_the_verdict_reads_the_interval(value, lo, hi, goal, verdict):
    assert row(value, lo, hi, goal).verdict == verdict
    assert row(value, lo, hi, goal).met == verdict.startswith("yes")


def test_rows_go_to_the_named_file_only(tmp_path, monkeypatch):
    rows = tmp_path / "rows.jsonl"
    monkeypatch.delenv(ROWS_ENV, raising=False)
    record_ratio("b", "alone", "peer", [1.0, 1.1, 1.2], [1.0, 1.0, 1.0], ">= 1")
    assert not rows.exists()
    monkeypatch.setenv(ROWS_ENV, str(rows))
    r = record_ratio("b", "f", "p", [2.0, 2.0, 2.0], [1.0, 1.0, 1.0], ">= 1", 2, "GB/s", "why")
    record_ratio("b", "g", "p", [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], ">= 1", 1, "GB/s", "why not")
    record(row(5.0, 4.0, 6.0, "<= 20"))
    found = read_rows(rows)
    assert r.median == 2.0 and [x.figure for x in found] == ["f", "g", "figure"]
    assert (found[0].value, found[0].ours, found[0].theirs, found[0].threads) == (2.0, 2.0, 1.0, 2)
    assert found[0].note == "" and found[1].note == "why not"  # the note only where it misses
    with pytest.raises(ValueError, match="goal"):
        record(row(1.0, 1.0, 1.0, "at least 1"))


def test_the_tables_hold_every_row_and_the_notes():
    rows = [row(1.2, 1.1, 1.3, ">= 1"), PeerRow("b", "x|y", "p", None, None, None, "", 0.5,
                                                 0.4, 0.6, ">= 1", "likwid unrolls")]  # fmt: skip
    text = text_table(rows)
    assert len(text.splitlines()) == 2 + 2 + 2  # header, rule, rows, "notes:", one note
    assert "1.200 [1.100, 1.300]" in text and "likwid unrolls" in text
    markdown = markdown_table(rows)
    assert "| x\\|y | p | - |" in markdown and markdown.count("\n|") == 3


def test_peers_writes_the_table_between_the_markers(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("")
    env = {**os.environ, ROWS_ENV: str(rows)}
    subprocess.run([sys.executable, "-c", "import peer_rows as p; p.record(p.PeerRow('b', 'f', "
                    "'p', 1, 1.0, 1.0, 's', 1.0, 0.9, 1.1, '>= 1'))"], cwd=BENCH, env=env,
                   check=True)  # fmt: skip
    page = tmp_path / "peers.md"
    page.write_text("# Peers\n\nbefore\n<!-- BEGIN peers table (bench/peers.py --doc) -->\nold\n"
                    "<!-- END peers table -->\nafter\n")  # fmt: skip
    done = subprocess.run([sys.executable, str(BENCH / "peers.py"), "--rows", str(rows), "--doc",
                           str(page)], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert text.startswith("# Peers\n\nbefore\n") and text.endswith("-->\nafter\n")
    assert "old" not in text and "| f | p | 1 |" in text and "Measured on " in text
    assert "All peer ratios" in done.stdout and "1.000 [0.900, 1.100]" in done.stdout
    bad = subprocess.run([sys.executable, str(BENCH / "peers.py"), "--only", "nothing"],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode != 0 and "no script nothing" in bad.stderr
