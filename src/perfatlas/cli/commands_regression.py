"""check and baseline: a run against a named baseline (perfatlas.regression)."""

from __future__ import annotations

import argparse
import sys

from perfatlas.cli.options import (
    AddCommand,
    add_launch_arguments,
    check_output_file,
    open_store,
)
from perfatlas.common.errors import UserError


def cmd_check(args: argparse.Namespace) -> int:
    """A run against a baseline: exit 0 (no regression), 1 (a significant regression beyond the
    tolerance), 2 (bad input). Reads the store read-only unless --remeasure (a new run)."""
    from perfatlas.regression.check import check
    from perfatlas.regression.junit import write_junit
    from perfatlas.regression.remeasure import remeasure
    from perfatlas.regression.table import verdict_table
    from perfatlas.regression.verdicts import confirm, exit_status, parse_tolerance
    from perfatlas.terminal.run_views import console

    tolerance = parse_tolerance(args.tolerance)
    metrics = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    check_output_file(args.junit, "the JUnit XML (--junit)")
    store = open_store(args, read_only=not args.remeasure)
    found = check(store, args.run, args.against, tolerance, metrics, args.any_machine)
    rows = found.rows
    if args.remeasure:
        again = remeasure(store, found.data, rows, args.executor)
        if again is not None:
            rows = confirm(rows, again[1], tolerance, again[0])
    title = f"run {found.run_id} against {found.against}, tolerance {tolerance:.1%}"
    console.print(verdict_table(rows, title))
    tally = {v: sum(r.verdict == v for r in rows) for v in dict.fromkeys(r.verdict for r in rows)}
    console.print(", ".join(f"{n} {v}" for v, n in tally.items()))
    if args.junit:
        write_junit(rows, f"perfatlas check: {title}", args.junit)
    return exit_status(rows)


def cmd_baseline(args: argparse.Namespace) -> int:
    from perfatlas.regression.check import baseline_name
    from perfatlas.terminal.run_views import console, titled_table

    if args.action == "list":
        if args.name or args.run:
            raise UserError("'baseline list' takes no name or run")
        store = open_store(args, read_only=True)
        table = titled_table("baselines", "name", "run", "host", "started", "status")
        missing = []  # a baseline whose run is gone is listed as such, and said
        for name, run_id in store.baselines().items():
            try:
                run = store.baseline_run(name)
            except UserError as error:
                missing.append(str(error))
                table.add_row(name, str(run_id), "-", "-", "missing")
                continue
            table.add_row(name, str(run_id), run["host"], run["started"], run["status"])
        console.print(table)
        for sentence in missing:
            print(f"perfatlas: warning: {sentence}", file=sys.stderr)
        return 0
    if not args.name or (args.action == "set") != bool(args.run):
        usage = "'baseline set NAME RUN'" if args.action == "set" else "'baseline rm NAME'"
        raise UserError(f"give {usage}")
    name = baseline_name(args.name)
    store = open_store(args)
    if args.action == "rm":
        run_id = store.remove_baseline(name)
        console.print(f"baseline {name} removed (run {run_id} is kept)")
        return 0
    run_id = store.resolve_run(args.run)
    before = store.set_baseline(name, run_id)
    was = f" (was run {before})" if before is not None and before != run_id else ""
    console.print(f"baseline {name} is run {run_id}{was}")
    return 0


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
    p = command(
        "check",
        cmd_check,
        "check a run against a baseline: exit 0 (no regression), 1 (a significant regression "
        "beyond the tolerance), 2 (bad input)",
    )
    p.add_argument("run", help="run id or 'last'")
    p.add_argument("--against", required=True, help="a baseline's name or a run id")
    p.add_argument(
        "--tolerance", default="5%", help="worse by more than this is a regression (default 5%%)"
    )
    p.add_argument("--metrics", help="only these metrics or finding kinds, comma-separated")
    p.add_argument(
        "--any-machine",
        action="store_true",
        help="compare with a baseline measured on another machine (another fingerprint)",
    )
    p.add_argument(
        "--remeasure",
        action="store_true",
        help="measure what regressed once more (a new run); a regression stands only if the "
        "better of the two measurements still is one",
    )
    p.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    add_launch_arguments(p)
    p = command("baseline", cmd_baseline, "name a run as a baseline for 'perfatlas check'")
    p.add_argument("action", choices=("set", "list", "rm"))
    p.add_argument("name", nargs="?", help="the baseline's name (set, rm)")
    p.add_argument("run", nargs="?", help="run id or 'last' (set)")
