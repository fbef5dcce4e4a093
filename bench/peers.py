#!/usr/bin/env python3
"""Every peer comparison of bench/ in one run, then ONE table of all their ratios (`make bench`).

Runs each script of SCRIPTS in turn (their own output streams through), each recording its rows in
the common format of peer_rows.py, then prints every row: the figure, the peer, perfatlas's and
the peer's medians, the value with its 95 % interval, the goal and whether it is met. With --doc
the same table, the machine and the date replace the measured part of docs/guide/peers.md (between
its BEGIN and END markers); --rows prints (or documents) rows already measured instead.

    .venv/bin/python bench/peers.py [--only likwid_compare,ipm_overhead] [--doc docs/guide/peers.md]
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from peer_rows import ROWS_ENV, markdown_table, read_rows, text_table

from perfatlas.machine.topology import Machine

HERE = Path(__file__).resolve().parent
# Each script with the arguments `make bench` gives it; a new peer script is one more line here
# (it records its rows with peer_rows.record_ratio or peer_rows.record).
SCRIPTS = {
    "likwid_compare": [],
    "peakflops_compare": [],
    "hpcc_compare": [],
    "ipm_overhead": [],
    "madbench_dgemm": ["--overlap", "0,1"],
    "spsolve_overhead": [],
    "spmv_compare": [],
}
BEGIN = "<!-- BEGIN peers table (bench/peers.py --doc) -->"
END = "<!-- END peers table -->"


def machine_line(machine: Machine) -> str:
    topology = machine.topology
    return (
        f"{topology.get('cpu_model') or 'unknown CPU'}, {len(machine.pus)} PUs, "
        f"{os.uname().sysname} {os.uname().release}"
    )


def document(doc: Path, table: str, machine: str, date: str) -> None:
    """Replaces what lies between BEGIN and END in `doc` with the machine, date and table."""
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        sys.exit(f"peers: {doc} has no '{BEGIN}' ... '{END}' section to replace")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    body = f"\nMeasured on {machine}, {date}:\n\n{table}\n\n"
    doc.write_text(head + BEGIN + body + END + tail, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="these scripts only (comma-separated names)")
    parser.add_argument("--rows", type=Path, help="rows already measured (JSON lines): no runs")
    parser.add_argument("--keep", type=Path, help="also keep the measured rows in this file")
    parser.add_argument("--doc", type=Path, help="write the table into this Markdown page")
    args = parser.parse_args()
    names = [name for name in args.only.split(",") if name] or list(SCRIPTS)
    unknown = sorted(set(names) - set(SCRIPTS))
    if unknown:
        sys.exit(f"peers: no script {', '.join(unknown)}; known: {', '.join(SCRIPTS)}")
    with tempfile.TemporaryDirectory(prefix="perfatlas-peers-") as tmp:
        rows_file = args.rows or Path(tmp) / "rows.jsonl"
        failed = []
        for name in names if args.rows is None else []:
            print(f"== bench/{name}.py", flush=True)
            done = subprocess.run(
                [sys.executable, str(HERE / f"{name}.py"), *SCRIPTS[name]],
                env={**os.environ, ROWS_ENV: str(rows_file)},
            )
            if done.returncode != 0:
                failed.append(name)
        rows = read_rows(rows_file)
        if args.keep and args.rows is None:
            args.keep.write_text(rows_file.read_text() if rows_file.exists() else "")
    machine = machine_line(Machine.detect())
    when = (
        datetime.datetime.fromtimestamp(args.rows.stat().st_mtime, datetime.UTC)
        if args.rows
        else datetime.datetime.now(datetime.UTC)
    )  # rows already measured: when their file was last written
    date = when.strftime("%Y-%m-%d %H:%M UTC")
    print(f"\nAll peer ratios ({machine}, {date}):\n{text_table(rows)}")
    if failed:
        print(f"failed (no rows): {', '.join(failed)}", file=sys.stderr)
    if args.doc:
        document(args.doc, markdown_table(rows), machine, date)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
