"""parbench and scenario: PARbench's base data, scenarios and the interference matrix."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from perfatlas.cli.options import (
    AddCommand,
    add_launch_arguments,
    check_output_file,
    open_store,
)
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import write_text_file

SCALE_RANGE = (1e-3, 1e3)  # scenario run --scale


def cmd_parbench(args: argparse.Namespace) -> int:
    from perfatlas.common.units import parse_cpu_list
    from perfatlas.machine.topology import Machine
    from perfatlas.parbench.base_data import Options, print_base, run_base
    from perfatlas.terminal.run_summary import print_findings_count

    machine = Machine.detect()
    options = Options(
        cpus=parse_cpu_list(args.cpus, "--cpus") if args.cpus else None,
        threads=parse_cpu_list(args.threads, "--threads") if args.threads else None,
        quick=args.quick,
        kernels=args.kernels,
    )
    store = open_store(args)
    data = run_base(store, machine, options)
    print_base(data)
    print_findings_count(data)
    return 0


def cmd_scenario(args: argparse.Namespace) -> int:
    """scenario run FILE | scenario matrix (perfatlas.scenario)."""
    from perfatlas.common.progress import console
    from perfatlas.machine.topology import Machine
    from perfatlas.report import write_report
    from perfatlas.scenario import views_scenario as views
    from perfatlas.store.run_data import RunData
    from perfatlas.terminal.run_summary import print_findings_count

    if args.action == "run" and not args.file:
        raise UserError("give the scenario to run: a TOML file or a shipped scenario's name")
    if args.action == "matrix" and args.file:
        raise UserError(f"scenario matrix takes no file ('{args.file}'); use --classes")
    if not (SCALE_RANGE[0] <= args.scale <= SCALE_RANGE[1]):  # also refuses nan
        raise UserError(
            f"--scale {args.scale:g} must be from {SCALE_RANGE[0]:g} to {SCALE_RANGE[1]:g}"
        )
    check_output_file(args.json, "the scenario document (--json)")
    if args.json:  # fail on an unwritable file before measuring
        Path(args.json).open("a").close()
    machine = Machine.detect()
    out = Path(args.out)
    if args.action == "run":  # bad input is said here, before anything runs anywhere
        from perfatlas.scenario.scenario import load

        scenario = load(args.file, machine, args.scale)
    else:
        from perfatlas.common.units import parse_cpu_list, parse_duration, parse_size

        matrix = (
            parse_size(args.bytes, "--bytes"),
            parse_duration(args.duration, "--duration"),
            parse_cpu_list(args.cpus, "--cpus") if args.cpus else None,
        )
    store = open_store(args)
    done = args.executor.run_elsewhere(
        lambda folder: _scenario_words(args, out, folder), store, f"scenario-{args.action}", machine
    )
    if done is not None:  # on the executor's node (perfatlas.run.elsewhere)
        data = RunData.load(store, done.runs[-1])
        saved = json.loads((done.folder / "scenario.json").read_text())
        if args.action == "run":
            document = {k: v for k, v in saved.items() if k not in ("name", "jobs")}
            views.print_scenario(saved["name"], document, saved["jobs"])
        else:
            views.print_matrix(data)
    elif args.action == "run":
        from perfatlas.scenario.execute import run_scenario

        data, document, rows = run_scenario(
            store, machine, scenario, out / f"scenario-{scenario.name}", sys.argv
        )
        views.print_scenario(scenario.name, document, rows)
        saved = {"name": scenario.name, **document, "jobs": rows}
    else:
        from perfatlas.scenario.matrix import run_matrix

        data, saved = run_matrix(
            store, machine, args.classes, *matrix, out / "scenario-matrix", args.rounds
        )
        views.print_matrix(data)
    print_findings_count(data)
    run_id = data.run["id"]
    if args.json:
        write_text_file(args.json, json.dumps(saved, indent=1), "the scenario document (--json)")
    with console.status("writing the HTML report"):
        path = write_report(data, out / f"run-{run_id}.html")
    print(f"run {run_id} stored in {store.path}; report: {path.resolve()}")
    return 0


def _scenario_words(args: argparse.Namespace, out: Path, folder: Path) -> list[str]:
    """The same scenario command for a node: paths made absolute, its document into `folder`."""
    words = ["scenario", args.action]
    if args.file:  # a file, or the name of a shipped scenario
        words.append(str(Path(args.file).resolve()) if Path(args.file).exists() else args.file)
    words += ["--out", str(out.resolve()), "--json", str(folder / "scenario.json")]
    if args.action == "run":
        return [*words, "--scale", repr(args.scale)]
    words += ["--bytes", args.bytes, "--duration", args.duration, "--rounds", str(args.rounds)]
    words += ["--classes", args.classes] if args.classes else []
    return [*words, "--cpus", args.cpus] if args.cpus else words


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
    p = command("parbench", cmd_parbench, "PARbench kernels: 'base' measures every variant alone")
    p.add_argument("action", choices=("base",), help="base: the base data of every kernel variant")
    p.add_argument("--cpus", help="the PUs to use, e.g. 0-3 (default: all)")
    p.add_argument("--threads", help="thread counts, e.g. 1,2,4 (default: 1 and all of --cpus)")
    p.add_argument("--quick", action="store_true", help="240 kB, stride 1, 3 short samples only")
    p.add_argument("--kernels", help="only these kernels, e.g. triad,dgemm_blocked")
    p = command(
        "scenario",
        cmd_scenario,
        "PARbench scenarios: 'run FILE' runs jobs side by side; 'matrix' the pairwise "
        "interference of kernel classes",
    )
    p.add_argument("action", choices=("run", "matrix"))
    p.add_argument("file", nargs="?", help="scenario TOML file or a shipped scenario's name")
    p.add_argument("--json", help="also write the scenario's (or matrix's) document to this file")
    p.add_argument("--out", default="perfatlas-out", help="folder for programs and the report")
    p.add_argument("--scale", type=float, default=1.0, help="run: multiply runtimes and offsets")
    p.add_argument("--classes", help="matrix: kernel classes, e.g. stream,compute (default all)")
    p.add_argument("--bytes", default="25MB", help="matrix: working set of every kernel (25MB)")
    p.add_argument("--duration", default="0.6s", help="matrix: length of each program (0.6s)")
    p.add_argument("--cpus", help="matrix: the two CPUs, e.g. 0,1 (default: two cores)")
    p.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="matrix: rounds of alone and together runs, interleaved, for each cell's interval (5)",
    )
    add_launch_arguments(p)
