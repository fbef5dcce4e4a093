"""profile: an MPI program run under perfatlas-ipm, its profile stored and reported."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from perfatlas.cli.options import (
    AddCommand,
    add_launch_arguments,
    check_output_file,
    open_store,
)


def cmd_profile(args: argparse.Namespace) -> int:
    from perfatlas.machine.topology import Machine
    from perfatlas.profile.session import default_folder, profile, show_stored

    command = args.program[1:] if args.program[:1] == ["--"] else args.program
    check_output_file(args.json, "the profile document (--json)")
    store = open_store(args)
    if args.executor.here:
        return profile(command, args.out, args.json, store, sys.argv, args.atlas, args.atlas_budget)
    folder = Path(args.out or default_folder()).resolve()

    def words(job_folder: Path) -> list[str]:
        json_path = ["--json", str(Path(args.json).resolve())] if args.json else []
        atlas = ["--atlas", args.atlas, "--atlas-budget", str(args.atlas_budget)]
        return ["profile", "--out", str(folder), *json_path, *atlas, "--", *command]

    done = args.executor.run_elsewhere(words, store, "profile", Machine.detect())
    show_stored(store, done.runs[-1], folder)  # on the executor's node
    return 0


def _budget(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds, 0 or more")
    return seconds


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
    p = command(
        "profile",
        cmd_profile,
        "run an MPI program under perfatlas-ipm, store its profile and write its report",
    )
    p.add_argument(
        "--out",
        help="folder for the library's files and the report (default "
        "./perfatlas-profile-YYYYmmdd-HHMMSS)",
    )
    p.add_argument("--json", help="also write the profile document to this file")
    p.add_argument(
        "--atlas",
        choices=("auto", "stored", "none"),
        default="auto",
        help="the comm atlas the profile is joined with: this machine's stored one, what it "
        "lacks measured after the program (auto, the default); the stored one only (stored: "
        "refuse to run without one); or none",
    )
    p.add_argument(
        "--atlas-budget",
        type=_budget,
        default=os.environ.get("PERFATLAS_ATLAS_BUDGET") or "60",
        metavar="SECONDS",
        help="--atlas auto: the most seconds measuring what the atlas lacks; 0 measures nothing "
        "(default $PERFATLAS_ATLAS_BUDGET, else 60)",
    )
    p.add_argument(
        "program",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the command to profile, e.g. -- mpirun -np 4 ./app args",
    )
    add_launch_arguments(p)
