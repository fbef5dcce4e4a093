"""The rows of the one peers table: every bench script records each figure it compares in the same
format, and bench/peers.py prints them all as one table (and writes docs/guide/peers.md's).

A row is one comparison: the figure, the peer, perfatlas's median and the peer's, the value (a
ratio of medians, or a difference such as nanoseconds added) with its 95 % bootstrap interval, and
the goal it is held to ("<= 1", ">= 0.85", "<= 20"). When the environment names a file
(PERFATLAS_PEER_ROWS, set by bench/peers.py) each row is appended to it as one JSON line;
otherwise recording only returns the ratio, so a script run alone prints its own output as before.

    from peer_rows import record_ratio
    r = record_ratio("likwid_compare", "triad (normal)", "likwid-bench stream_avx512", ours,
                     theirs, goal=">= 1", threads=1, unit="GB/s")
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from perfatlas.common.stats import Ratio, ratio

ROWS_ENV = "PERFATLAS_PEER_ROWS"
_GOALS = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class PeerRow:
    bench: str  # the script that measured it
    figure: str  # what is compared
    peer: str  # against what
    threads: int | None
    ours: float | None  # perfatlas's median, in `unit`
    theirs: float | None  # the peer's median
    unit: str
    value: float  # ratio (ours / theirs unless `figure` says otherwise) or difference
    ci_lo: float
    ci_hi: float
    goal: str  # "<= X" or ">= X", on `value`
    note: str = ""  # e.g. why a goal cannot be reached here

    @property
    def met(self) -> bool:
        """The median meets the goal."""
        op, threshold = self.goal.split()
        return _GOALS[op](self.value, float(threshold))

    @property
    def verdict(self) -> str:
        """yes / no where the whole interval meets or misses the goal; else "yes?" or "no?" (the
        interval holds the goal: the median's side, not established by the measurement)."""
        op, threshold = self.goal.split()
        meets = [_GOALS[op](bound, float(threshold)) for bound in (self.ci_lo, self.ci_hi)]
        return "yes" if all(meets) else "no" if not any(meets) else "yes?" if self.met else "no?"


def goal_is_valid(goal: str) -> bool:
    parts = goal.split()
    if len(parts) != 2 or parts[0] not in _GOALS:
        return False
    try:
        float(parts[1])
    except ValueError:
        return False
    return True


def record(row: PeerRow) -> PeerRow:
    """Appends the row to $PERFATLAS_PEER_ROWS where it is set; returns it."""
    if not goal_is_valid(row.goal):
        raise ValueError(f"goal {row.goal!r} is not '<= X' or '>= X'")
    path = os.environ.get(ROWS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as rows:
            rows.write(json.dumps(asdict(row)) + "\n")
    return row


def record_ratio(
    bench: str,
    figure: str,
    peer: str,
    ours: Sequence[float],
    theirs: Sequence[float],
    goal: str,
    threads: int | None = None,
    unit: str = "",
    note_if_missed: str = "",
) -> Ratio:
    """median(ours) / median(theirs) with its interval (perfatlas.common.stats.ratio), recorded; with
    `note_if_missed` (why: what the peer does differently) where the median misses the goal."""
    r = ratio(ours, theirs)
    row = PeerRow(
        bench, figure, peer, threads, float(np.median(ours)), float(np.median(theirs)), unit,
        r.median, r.ci_lo, r.ci_hi, goal,
    )  # fmt: skip
    record(replace(row, note=note_if_missed) if not row.met else row)
    return r


def read_rows(path: Path) -> list[PeerRow]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [PeerRow(**json.loads(line)) for line in text.splitlines() if line.strip()]


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _cells(row: PeerRow) -> list[str]:
    return [
        row.figure,
        row.peer,
        "-" if row.threads is None else str(row.threads),
        _number(row.ours),
        _number(row.theirs),
        row.unit,
        f"{row.value:.3f} [{row.ci_lo:.3f}, {row.ci_hi:.3f}]",
        row.goal,
        row.verdict,
    ]


HEADER = ["figure", "peer", "thr", "perfatlas", "peer's", "unit", "value [95% CI]", "goal", "met"]


def text_table(rows: Sequence[PeerRow]) -> str:
    """The terminal table, one line per row, columns padded to their widest cell."""
    lines = [HEADER, *(_cells(row) for row in rows)]
    widths = [max(len(line[k]) for line in lines) for k in range(len(HEADER))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
           for line in lines]  # fmt: skip
    out.insert(1, "  ".join("-" * width for width in widths))
    notes = [
        f"  {row.figure} ({row.peer}, {row.threads} thr): {row.note}" for row in rows if row.note
    ]
    return "\n".join(out + (["notes:", *notes] if notes else []))


def markdown_table(rows: Sequence[PeerRow]) -> str:
    """The same rows as a Markdown table (pipes in cells escaped)."""
    escape = [[cell.replace("|", "\\|") for cell in _cells(row)] for row in rows]
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in escape]
    notes = [
        f"- {row.figure} ({row.peer}, {row.threads} thr): {row.note}" for row in rows if row.note
    ]
    return "\n".join(lines + (["", "Where a goal is missed:", "", *notes] if notes else []))
