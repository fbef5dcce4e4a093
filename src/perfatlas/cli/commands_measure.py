"""run, measure and sweep: the commands that measure through the runner (perfatlas.run) and
write the report."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from perfatlas.cli.options import (
    AddCommand,
    add_launch_arguments,
    add_plan_arguments,
    add_remeasure_argument,
    check_output_file,
    key_values,
    open_store,
    print_findings,
)
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import write_text_file


def cmd_run(args: argparse.Namespace) -> int:
    from perfatlas.cluster.views_nodes import print_nodes
    from perfatlas.common.units import parse_cpu_list
    from perfatlas.experiments.analysis_param_sweep import print_sweep
    from perfatlas.machine.topology import Machine
    from perfatlas.plan import suite as suites
    from perfatlas.plan.measurement_plan import suite_plan
    from perfatlas.report import write_report
    from perfatlas.run.runner import Runner, console
    from perfatlas.terminal.run_summary import print_summary

    _check_plan_json(args)
    definition = suites.load(args.suite)  # bad suite names fail before anything is opened
    machine = Machine.detect()
    threads = parse_cpu_list(args.threads, "--threads") if args.threads else None
    if suites.uses_llc(definition):  # sizes relative to the LLC: the one this program can use
        machine.llc_sizing = _llc_sizing(args, machine).record()
    plan = suite_plan(args.suite, definition, machine, threads, args.np, args.repeat)
    if args.plan:  # nothing measured, no database opened
        return _show_plan(plan, args.json)
    store = open_store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check(plan.planned)
    console.print(
        f"suite [bold]{args.suite}[/]: {len(plan.launches)} measurements, database {args.db}"
    )
    with runner.run(args.suite, sys.argv):
        runner.measure_all(plan.planned, repeat=args.repeat)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = runner.data  # read back once, for every table and the report
    print_summary(data)
    print_sweep(data.launches)  # the suite's sweep steps, if it has any
    print_nodes(data)  # nodes of a multi-host run that differ
    with console.status("writing the HTML report"):
        path = write_report(data, out / f"run-{runner.run_id}.html")
    print(f"run {runner.run_id} stored in {args.db}; report: {path.resolve()}")
    return 0


def _llc_sizing(args: argparse.Namespace, machine):
    """The LLC a suite's sizes follow (perfatlas.mem.cache_probe), said in one line."""
    from perfatlas.common.progress import console
    from perfatlas.mem.cache_probe import not_probed, sizing_for

    if args.llc == "probe" and args.plan:
        sizing = not_probed(machine, "not probed for a plan: a run probes first and sizes from it")
    elif args.llc == "probe" and getattr(args, "launcher", None) in ("slurm", "mpirun"):
        sizing = not_probed(machine, "not probed: this host's caches need not be the nodes'")
    elif args.llc == "probe" and not machine.this_system:
        sizing = not_probed(machine, "not probed: the topology is read from a file")
    else:
        with console.status("probing the effective last-level cache (latency)"):
            sizing = sizing_for(args.llc, machine)
    console.print(sizing.sentence(), soft_wrap=True)
    return sizing


def _check_plan_json(args: argparse.Namespace) -> None:
    if args.json and not args.plan:
        raise UserError("--json applies with --plan only (a run's results: perfatlas export)")


def _show_plan(plan, as_json: bool) -> int:
    from perfatlas.plan.measurement_plan import print_plan

    try:
        if as_json:
            print(json.dumps(plan.document(), indent=1))
        else:
            print_plan(plan)
        sys.stdout.flush()
    except BrokenPipeError:  # `--plan | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def cmd_measure(args: argparse.Namespace) -> int:
    from perfatlas.benchmarks import get
    from perfatlas.cluster.views_nodes import print_nodes
    from perfatlas.machine.topology import Machine
    from perfatlas.run.runner import Planned, Runner
    from perfatlas.run.runner import console as progress_console
    from perfatlas.terminal.run_views import console, print_warnings, results_table

    benchmark = get(args.benchmark)
    machine = Machine.detect()
    params = benchmark.resolved(key_values(args.params), machine)
    check_output_file(args.json, "the result documents (--json)")
    if args.json:  # fail on an unwritable file before measuring
        Path(args.json).open("a").close()
    store = open_store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check([Planned(benchmark, params)])
    with runner.run(None, sys.argv):
        if args.launcher == "slurm":  # the job's own progress bar
            docs = runner.measure(benchmark, params, repeat=args.repeat)
        else:
            with progress_console.status(f"{benchmark.name} {benchmark.label(params)}"):
                docs = runner.measure(benchmark, params, repeat=args.repeat)
    data = runner.data
    console.print(results_table(data.launches, f"run {runner.run_id}"))
    print_warnings(data.launches)
    print_nodes(data)
    print_findings(data)
    if args.json:
        write_text_file(
            args.json,
            json.dumps(docs[0] if len(docs) == 1 else docs, indent=1),
            "the result documents (--json)",
        )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from perfatlas.benchmarks import get
    from perfatlas.cluster.views_nodes import print_nodes
    from perfatlas.common.units import parse_cpu_list
    from perfatlas.experiments.analysis_param_sweep import print_sweep
    from perfatlas.machine.placement import parse_bind, parse_mempolicy
    from perfatlas.machine.topology import Machine
    from perfatlas.plan.measurement_plan import sweep_plan
    from perfatlas.plan.sweep_grid import plan, schedule
    from perfatlas.report import write_report
    from perfatlas.run.runner import Runner, console
    from perfatlas.terminal.run_summary import print_findings_count

    _check_plan_json(args)
    benchmark = get(args.benchmark)
    machine = Machine.detect()
    points = plan(
        parse_cpu_list(args.threads, "--threads"),
        [parse_bind(word) for word in args.bind.split(",")],
        [parse_mempolicy(word, machine) for word in args.mempolicy.split(",")],
    )
    planned = sweep_plan(benchmark, key_values(args.params), schedule(points, args.repeat), machine)
    if args.plan:  # nothing measured, no database opened
        return _show_plan(planned, args.json)
    store = open_store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check(planned.planned)
    console.print(
        f"sweep of [bold]{benchmark.name}[/]: {len(points)} points x {args.repeat} repetitions, "
        f"interleaved; database {args.db}"
    )
    with runner.run(f"sweep {benchmark.name}", sys.argv):
        runner.measure_all(planned.planned)
    data = runner.data
    print_sweep(data.launches)
    print_nodes(data)
    print_findings_count(data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with console.status("writing the HTML report"):
        path = write_report(data, out / f"run-{runner.run_id}.html")
    print(f"run {runner.run_id} stored in {args.db}; report: {path.resolve()}")
    return 0


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
    p = command("run", cmd_run, "run a suite (default: quick) and write the HTML report")
    p.add_argument("suite", nargs="?", default="quick", help="suite name or path to a TOML file")
    p.add_argument("--out", default="perfatlas-out", help="directory for the HTML report")
    p.add_argument("--repeat", type=int, default=1, help="launch each measurement N times")
    add_launch_arguments(p)
    add_remeasure_argument(p)
    p.add_argument("--threads", help="thread counts to sweep, e.g. 1,2 or 1-4")
    p.add_argument("--np", help="MPI ranks of every comm.* step (a number or 'all')")
    p.add_argument(
        "--llc",
        default="probe",
        help="the LLC that 'xLLC' sizes follow: probe (measure the effective one, default), "
        "hwloc, or a size",
    )
    add_plan_arguments(p)

    p = command("measure", cmd_measure, "measure one benchmark with explicit parameters")
    p.add_argument("benchmark")
    p.add_argument("params", nargs="*", metavar="key=value")
    p.add_argument("--json", help="also write the result document(s) to this file")
    p.add_argument("--repeat", type=int, default=1, help="launch the measurement N times")
    add_launch_arguments(p)
    add_remeasure_argument(p)

    p = command(
        "sweep",
        cmd_sweep,
        "measure one benchmark over threads x binding x memory policy, repeated and interleaved",
    )
    p.add_argument("benchmark")
    p.add_argument("params", nargs="*", metavar="key=value", help="the fixed parameters")
    p.add_argument("--threads", default="1", help="thread counts, e.g. 1,2,4 or 1-4 (default 1)")
    p.add_argument(
        "--bind",
        default="close",
        help="thread binding(s): none (the OS decides), close, spread (default close)",
    )
    p.add_argument(
        "--mempolicy",
        default="local",
        help="memory policy(ies): local, interleave, node:K (default local)",
    )
    p.add_argument("--repeat", type=int, default=3, help="launches of every point (default 3)")
    p.add_argument("--out", default="perfatlas-out", help="directory for the HTML report")
    add_launch_arguments(p)
    add_remeasure_argument(p)
    add_plan_arguments(p)
