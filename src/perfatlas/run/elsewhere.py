"""A perfatlas command run where an executor measures (a compute node, the first host), for the
work that is more than launches: a PARbench scenario (its programs are synthesized, run alone,
refined and run together, watched through /proc) and a profile (perfatlas-ipm).

The node starts from a copy of this database (stored base data is reused), runs
`python -m perfatlas --db COPY ARGS` on a node-local copy, and leaves the result in the shared
folder; this side imports the new runs (perfatlas.store.run_import). SQLite is never written on the
shared folder from a node: only whole files are copied there.

    FOLDER/front.db   this database when the command started
    FOLDER/node.db    the node's database when the command ended (SQLite online backup)
    FOLDER/host       the node it ran on
    FOLDER/stdout, stderr, status   the command's output and exit status (written last)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.launch.per_node import error_tail
from perfatlas.store.database import Store
from perfatlas.store.run_import import import_runs, newest_run, snapshot

# sh -c SCRIPT perfatlas-node FOLDER PYTHON ARGS... The variables by which the MPI that started
# the script (mpirun -np 1) reaches its process are dropped: an mpirun the command starts (a
# profiled program) would take itself for a rank of that job.
_SCRIPT = (
    "for v in $(env | cut -d= -f1 | grep -E '^(OMPI|PMIX|OPAL|ORTE|PMI|HYDRA)_'); do "
    "unset $v; done; "
    'folder=$1 py=$2; shift 2; echo "${SLURMD_NODENAME:-$(hostname)}" >"$folder/host"; '
    'tmp=$(mktemp -d) || exit 1; cp "$folder/front.db" "$tmp/perfatlas.db" || exit 1; '
    '"$py" -m perfatlas --db "$tmp/perfatlas.db" "$@"; s=$?; '
    '"$py" -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup('
    'sqlite3.connect(sys.argv[2]))" "$tmp/perfatlas.db" "$folder/node.db.tmp" && '
    'mv "$folder/node.db.tmp" "$folder/node.db"; rm -rf "$tmp"; exit $s'
)


@dataclass
class Elsewhere:
    """A command prepared to run elsewhere: its folder, and what this database held before."""

    folder: Path
    argv: list[str]
    after: int  # the newest run of this database when the command started
    runs: list[int] = field(default_factory=list)  # imported, once it ended
    host: str = ""


def prepare(store: Store, folder: Path, args: list[str]) -> Elsewhere:
    """Snapshot the database into `folder`; the command that runs `perfatlas ARGS` there."""
    folder.mkdir(parents=True, exist_ok=True)
    snapshot(store, folder / "front.db")
    argv = ["sh", "-c", _SCRIPT, "perfatlas-node", str(folder), sys.executable, *args]
    return Elsewhere(folder, argv, newest_run(store))


def conclude(store: Store, command: Elsewhere, status: int | None, output: str) -> Elsewhere:
    """Import what the node stored (even after a failure); a failure becomes the node's own
    sentence."""
    node_db = command.folder / "node.db"
    if node_db.exists():
        command.runs = import_runs(node_db, store, command.after)
    host_file = command.folder / "host"
    command.host = host_file.read_text().strip() if host_file.exists() else ""
    if status == 0:
        return command
    where = f"on {command.host}" if command.host else "elsewhere"
    said = [line for line in output.splitlines() if line.startswith("perfatlas: ")]
    why = said[-1].removeprefix("perfatlas: ") if said else error_tail(output) or "no output"
    kept = f"; runs {', '.join(map(str, command.runs))} imported" if command.runs else ""
    ended = "did not finish" if status is None else f"exited with status {status}"
    raise UserError(f"perfatlas {where} {ended}: {why}{kept} (files in {command.folder})")
