"""The perfatlas command line: run, measure, sweep, list, show, report, profile, compare, check,
baseline, export, topo, doctor."""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import stat
import sys
from pathlib import Path
from typing import NoReturn

from perfatlas import __version__
from perfatlas.errors import UserError, one_line
from perfatlas.text_file import write_text_file

DEFAULT_DB = "perfatlas.db"
MAX_REPEAT = 1000  # launches of one measurement (--repeat)
SCALE_RANGE = (1e-3, 1e3)  # scenario run --scale


def _store(args: argparse.Namespace, read_only: bool = False):
    """The results database; show, report, export and compare open it read-only."""
    from perfatlas.store import Store

    return Store(args.db, read_only=read_only)


def _output_file(path: str | None, what: str) -> None:
    """A file perfatlas will write (--json, -o, --report), checked before anything runs: its
    folder exists (a missing one is refused, not made: a typo should not grow a tree), and it
    is not a folder or a FIFO (whose writer waits for a reader). An empty name is refused, not
    taken as 'no file'."""
    if path is None:
        return
    if not path:
        raise UserError(f"cannot write {what} to '': the file name is empty; give one")
    target = Path(path)
    if not target.parent.is_dir():
        raise UserError(
            f"cannot write {what} to {path}: folder {target.parent} does not exist; create it first"
        )
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise UserError(f"cannot write {what} to {path}: it is not a regular file")


def _key_values(words: list[str]) -> dict[str, str]:
    pairs = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise UserError(f"'{word}' is not a key=value parameter (e.g. bytes=1GiB)")
        if key in pairs:
            raise UserError(f"parameter '{key}' is given twice")
        pairs[key] = value
    return pairs


def cmd_run(args: argparse.Namespace) -> int:
    from perfatlas import suite as suites
    from perfatlas.cluster.views import print_nodes
    from perfatlas.experiments.analysis_sweep import print_sweep
    from perfatlas.machine import Machine
    from perfatlas.plan import suite_plan
    from perfatlas.report import write_report
    from perfatlas.runner import Runner, console
    from perfatlas.summary import print_summary
    from perfatlas.units import parse_cpu_list

    _check_plan_json(args)
    definition = suites.load(args.suite)  # bad suite names fail before anything is opened
    machine = Machine.detect()
    threads = parse_cpu_list(args.threads, "--threads") if args.threads else None
    if suites.uses_llc(definition):  # sizes relative to the LLC: the one this program can use
        machine.llc_sizing = _llc_sizing(args, machine).record()
    plan = suite_plan(args.suite, definition, machine, threads, args.np, args.repeat)
    if args.plan:  # nothing measured, no database opened
        return _show_plan(plan, args.json)
    store = _store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check(plan.planned)
    console.print(
        f"suite [bold]{args.suite}[/]: {len(plan.launches)} measurements, database {args.db}"
    )
    with runner.run(args.suite, sys.argv):
        runner.measure_all(plan.planned, repeat=args.repeat)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print_summary(store, runner.run_id)
    print_sweep(store.results(runner.run_id))  # the suite's sweep steps, if it has any
    print_nodes(store, runner.run_id)  # nodes of a multi-host run that differ
    with console.status("writing the HTML report"):
        path = write_report(store, runner.run_id, out / f"run-{runner.run_id}.html")
    print(f"run {runner.run_id} stored in {args.db}; report: {path.resolve()}")
    return 0


def _llc_sizing(args: argparse.Namespace, machine):
    """The LLC a suite's sizes follow (perfatlas.memory.cache_probe), said in one line."""
    from perfatlas.memory.cache_probe import not_probed, sizing_for
    from perfatlas.progress import console

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
    from perfatlas.plan import print_plan

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
    from perfatlas.cluster.views import print_nodes
    from perfatlas.machine import Machine
    from perfatlas.runner import Planned, Runner
    from perfatlas.runner import console as progress_console
    from perfatlas.views import console, print_warnings, results_table

    benchmark = get(args.benchmark)
    machine = Machine.detect()
    params = benchmark.resolved(_key_values(args.params), machine)
    _output_file(args.json, "the result documents (--json)")
    if args.json:  # fail on an unwritable file before measuring
        Path(args.json).open("a").close()
    store = _store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check([Planned(benchmark, params)])
    with runner.run(None, sys.argv):
        if args.launcher == "slurm":  # the job's own progress bar
            docs = runner.measure(benchmark, params, repeat=args.repeat)
        else:
            with progress_console.status(f"{benchmark.name} {benchmark.label(params)}"):
                docs = runner.measure(benchmark, params, repeat=args.repeat)
    results = store.results(runner.run_id)
    console.print(results_table(results, f"run {runner.run_id}"))
    print_warnings(results)
    print_nodes(store, runner.run_id)
    _print_findings(store, runner.run_id)
    if args.json:
        write_text_file(
            args.json,
            json.dumps(docs[0] if len(docs) == 1 else docs, indent=1),
            "the result documents (--json)",
        )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from perfatlas.benchmarks import get
    from perfatlas.cluster.views import print_nodes
    from perfatlas.experiments.analysis_sweep import print_sweep
    from perfatlas.experiments.sweep import plan, schedule
    from perfatlas.machine import Machine
    from perfatlas.placement import parse_bind, parse_mempolicy
    from perfatlas.plan import sweep_plan
    from perfatlas.report import write_report
    from perfatlas.runner import Runner, console
    from perfatlas.units import parse_cpu_list

    _check_plan_json(args)
    benchmark = get(args.benchmark)
    machine = Machine.detect()
    points = plan(
        parse_cpu_list(args.threads, "--threads"),
        [parse_bind(word) for word in args.bind.split(",")],
        [parse_mempolicy(word, machine) for word in args.mempolicy.split(",")],
    )
    planned = sweep_plan(
        benchmark, _key_values(args.params), schedule(points, args.repeat), machine
    )
    if args.plan:  # nothing measured, no database opened
        return _show_plan(planned, args.json)
    store = _store(args)
    runner = Runner(store, machine, args.executor, remeasure=args.remeasure)
    runner.check(planned.planned)
    console.print(
        f"sweep of [bold]{benchmark.name}[/]: {len(points)} points x {args.repeat} repetitions, "
        f"interleaved; database {args.db}"
    )
    with runner.run(f"sweep {benchmark.name}", sys.argv):
        runner.measure_all(planned.planned)
    print_sweep(store.results(runner.run_id))
    print_nodes(store, runner.run_id)
    _print_findings_count(store, runner.run_id)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with console.status("writing the HTML report"):
        path = write_report(store, runner.run_id, out / f"run-{runner.run_id}.html")
    print(f"run {runner.run_id} stored in {args.db}; report: {path.resolve()}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from perfatlas.benchmarks import all_benchmarks
    from perfatlas.suite import load, suite_names

    print("suites:")
    for name in suite_names():
        print(f"  {name:10s} {load(name).get('description', '')}")
    for benchmark in all_benchmarks():
        print(f"\n{benchmark.name}: {benchmark.summary}")
        try:
            params = benchmark.params  # read from its executable (pa-x --params)
        except UserError as error:
            print(f"  parameters unknown here: {error}")
            continue
        for param in params:
            default = "-" if param.default is None else param.format(param.default)
            choices = f" ({'|'.join(param.choices)})" if param.choices else ""
            print(f"  {param.name:16s} default {default:10s} {param.help}{choices}")
        for line in benchmark.details():
            print(f"  {line}")
    return 0


def _print_findings(store, run_id: int) -> None:
    """The findings of a run as a table (perfatlas.findings), when it has any."""
    from perfatlas.findings.compute import findings_of_run
    from perfatlas.findings.render import findings_table
    from perfatlas.views import console

    found = findings_of_run(store, run_id)
    if found.findings:
        console.print(findings_table(found))


def _print_findings_count(store, run_id: int) -> None:
    """How many findings a run just stored has, as `perfatlas run` says it (perfatlas.summary)."""
    from perfatlas.report.data import RunData
    from perfatlas.summary import print_findings_count

    print_findings_count(RunData.load(store, run_id))


def cmd_show(args: argparse.Namespace) -> int:
    from perfatlas.views import console, print_warnings, results_table, runs_table

    store = _store(args, read_only=True)
    if args.run is None:
        if args.json:
            raise UserError("--json shows one run: give its id or 'last'")
        console.print(runs_table(store.runs()))
        return 0
    run_id = store.resolve_run(args.run)
    run = store.run(run_id)
    if args.json:
        return _show_json(store, run)
    console.print(
        f"run {run_id}: {run['status']}, {run['started']} .. {run['finished'] or '-'}, "
        f"host {run['host']} (machine {run['fingerprint']}), suite {run['suite'] or 'measure'}"
    )
    results = store.results(run_id)
    console.print(results_table(results, f"run {run_id}"))
    print_warnings(results)
    _print_findings(store, run_id)
    return 0


def _show_json(store, run: dict) -> int:
    """One run as JSON: the run's record, its results' statistics (no samples: export has them)
    and its findings document (perfatlas.findings/1)."""
    from perfatlas.findings.compute import run_findings
    from perfatlas.report.data import RunData

    data = RunData.load(store, run["id"])
    fields = ("id", "benchmark", "params", "metric", "unit", "n", "median", "ci_lo", "ci_hi")
    results = [
        {**{k: getattr(r, k) for k in fields}, "not_measurable": r.not_measurable}
        for r in data.launches
    ]
    document = {"run": run, "results": results, "findings": run_findings(data).document()}
    print(json.dumps(document, indent=1))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from perfatlas.report import write_report
    from perfatlas.runner import console

    if args.profile:
        return _report_profile(args)
    if args.run is None:
        raise UserError("give the run to report (a run id or 'last'), or --profile FILE")
    _output_file(args.output, "the report")
    store = _store(args, read_only=True)
    run_id = store.resolve_run(args.run)
    with console.status("writing the HTML report"):
        path = write_report(store, run_id, Path(args.output or f"perfatlas-run-{run_id}.html"))
    print(path.resolve())
    return 0


def _report_profile(args: argparse.Namespace) -> int:
    """A profile file drawn as it is, without storing it."""
    from perfatlas.profile.partial import read_path
    from perfatlas.report import write_profile_report

    if args.run is not None:
        raise UserError("give a run or --profile FILE, not both")
    _output_file(args.output, "the report")
    source = Path(args.profile)
    if source.exists() and not (source.is_file() or source.is_dir()):  # a FIFO would hang
        raise UserError(f"--profile {source} is neither a file nor a folder of rank files")
    path = write_profile_report(
        read_path(source), source, Path(args.output or "perfatlas-profile.html")
    )
    print(path.resolve())
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    from perfatlas.machine import Machine
    from perfatlas.profile.session import default_folder, profile, show_stored

    command = args.program[1:] if args.program[:1] == ["--"] else args.program
    _output_file(args.json, "the profile document (--json)")
    store = _store(args)
    if args.executor.here:
        return profile(command, args.out, args.json, store, sys.argv)
    folder = Path(args.out or default_folder()).resolve()

    def words(job_folder: Path) -> list[str]:
        json_path = ["--json", str(Path(args.json).resolve())] if args.json else []
        return ["profile", "--out", str(folder), *json_path, "--", *command]

    done = args.executor.run_elsewhere(words, store, "profile", Machine.detect())
    show_stored(store, done.runs[-1], folder)  # on the executor's node
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from perfatlas.experiments.analysis_comparison import point_ratios
    from perfatlas.report import write_comparison_report
    from perfatlas.views import comparison_table, console

    if args.expect is not None and not (args.expect > 0 and math.isfinite(args.expect)):
        raise UserError(f"--expect {args.expect:g} must be a positive ratio (e.g. 1.333)")
    _output_file(args.report, "the report")
    store = _store(args, read_only=True)
    run_a, run_b = store.resolve_run(args.run_a), store.resolve_run(args.run_b)
    points = point_ratios(store.results(run_a), store.results(run_b))
    if not points:
        raise UserError(f"runs {run_a} and {run_b} have no result with the same parameters")
    console.print(comparison_table(points, run_a, run_b, args.expect))
    if args.report:
        path = write_comparison_report(store, run_a, run_b, args.expect, Path(args.report))
        print(f"report: {path.resolve()}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """A run against a baseline: exit 0 (no regression), 1 (a significant regression beyond the
    tolerance), 2 (bad input). Reads the store read-only unless --remeasure (a new run)."""
    from perfatlas.regression.check import check
    from perfatlas.regression.junit import write_junit
    from perfatlas.regression.remeasure import remeasure
    from perfatlas.regression.table import verdict_table
    from perfatlas.regression.verdicts import confirm, exit_status, parse_tolerance
    from perfatlas.views import console

    tolerance = parse_tolerance(args.tolerance)
    metrics = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    _output_file(args.junit, "the JUnit XML (--junit)")
    store = _store(args, read_only=not args.remeasure)
    found = check(store, args.run, args.against, tolerance, metrics, args.any_machine)
    rows = found.rows
    if args.remeasure:
        again = remeasure(store, found.run_id, rows, args.executor)
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
    from perfatlas.views import console, titled_table

    if args.action == "list":
        if args.name or args.run:
            raise UserError("'baseline list' takes no name or run")
        store = _store(args, read_only=True)
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
    store = _store(args)
    if args.action == "rm":
        run_id = store.remove_baseline(name)
        console.print(f"baseline {name} removed (run {run_id} is kept)")
        return 0
    run_id = store.resolve_run(args.run)
    before = store.set_baseline(name, run_id)
    was = f" (was run {before})" if before is not None and before != run_id else ""
    console.print(f"baseline {name} is run {run_id}{was}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from perfatlas.export import export

    _output_file(args.output, "the export")
    store = _store(args, read_only=True)
    run_id = store.resolve_run(args.run)
    if args.format == "hwloc":
        return _export_hwloc(store, run_id, args.output)
    if args.format == "findings-csv":
        from perfatlas.findings.compute import findings_of_run
        from perfatlas.findings.render import findings_csv

        text = findings_csv(findings_of_run(store, run_id))
    else:
        text = export(store, run_id, args.format)
    if args.output:
        write_text_file(args.output, text, "the export")
    else:
        sys.stdout.write(text)
    return 0


def _export_hwloc(store, run_id: int, output: str | None) -> int:
    """The run's hwloc topology with its measured memory attributes (calibrated_topology)."""
    import tempfile

    from perfatlas.calibrated_topology import UNITS, write_calibrated_topology
    from perfatlas.units import format_cpu_list

    if output:
        figures = write_calibrated_topology(store, run_id, Path(output))
        for f in figures:
            print(
                f"{f.attribute} {f.value} {UNITS[f.attribute]}: cpus "
                f"{format_cpu_list(list(f.initiator))} -> NUMA node {f.target}"
            )
        print(f"{output}: {len(figures)} measured memory attribute value(s) of run {run_id}")
        return 0
    with tempfile.TemporaryDirectory(prefix="perfatlas-hwloc-") as folder:
        path = Path(folder) / "machine.xml"
        write_calibrated_topology(store, run_id, path)
        sys.stdout.write(path.read_text())
    return 0


def cmd_topo(args: argparse.Namespace) -> int:
    from perfatlas.machine import Machine
    from perfatlas.summary import print_topology

    machine = Machine.detect()
    if args.json:
        print(json.dumps(machine.topology, indent=1))
    else:
        print_topology(machine)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from perfatlas.doctor import print_doctor

    print_doctor()
    return 0


def cmd_parbench(args: argparse.Namespace) -> int:
    from perfatlas.machine import Machine
    from perfatlas.parbench.base import Options, print_base, run_base
    from perfatlas.units import parse_cpu_list

    machine = Machine.detect()
    options = Options(
        cpus=parse_cpu_list(args.cpus, "--cpus") if args.cpus else None,
        threads=parse_cpu_list(args.threads, "--threads") if args.threads else None,
        quick=args.quick,
        kernels=args.kernels,
    )
    store = _store(args)
    run_id = run_base(store, machine, options)
    print_base(store, run_id)
    _print_findings_count(store, run_id)
    return 0


def cmd_scenario(args: argparse.Namespace) -> int:
    """scenario run FILE | scenario matrix (perfatlas.scenario)."""
    from perfatlas.machine import Machine
    from perfatlas.report import write_report
    from perfatlas.runner import console
    from perfatlas.scenario import views

    if args.action == "run" and not args.file:
        raise UserError("give the scenario to run: a TOML file or a shipped scenario's name")
    if args.action == "matrix" and args.file:
        raise UserError(f"scenario matrix takes no file ('{args.file}'); use --classes")
    if not (SCALE_RANGE[0] <= args.scale <= SCALE_RANGE[1]):  # also refuses nan
        raise UserError(
            f"--scale {args.scale:g} must be from {SCALE_RANGE[0]:g} to {SCALE_RANGE[1]:g}"
        )
    _output_file(args.json, "the scenario document (--json)")
    if args.json:  # fail on an unwritable file before measuring
        Path(args.json).open("a").close()
    machine = Machine.detect()
    out = Path(args.out)
    if args.action == "run":  # bad input is said here, before anything runs anywhere
        from perfatlas.scenario.scenario import load

        scenario = load(args.file, machine, args.scale)
    else:
        from perfatlas.units import parse_cpu_list, parse_duration, parse_size

        matrix = (
            parse_size(args.bytes, "--bytes"),
            parse_duration(args.duration, "--duration"),
            parse_cpu_list(args.cpus, "--cpus") if args.cpus else None,
        )
    store = _store(args)
    done = args.executor.run_elsewhere(
        lambda folder: _scenario_words(args, out, folder), store, f"scenario-{args.action}", machine
    )
    if done is not None:  # on the executor's node (perfatlas.executors.elsewhere)
        run_id = done.runs[-1]
        saved = json.loads((done.folder / "scenario.json").read_text())
        if args.action == "run":
            document = {k: v for k, v in saved.items() if k not in ("name", "jobs")}
            views.print_scenario(saved["name"], document, saved["jobs"])
        else:
            views.print_matrix(store, run_id)
    elif args.action == "run":
        from perfatlas.scenario.execute import run_scenario

        run_id, document, rows = run_scenario(
            store, machine, scenario, out / f"scenario-{scenario.name}", sys.argv
        )
        views.print_scenario(scenario.name, document, rows)
        saved = {"name": scenario.name, **document, "jobs": rows}
    else:
        from perfatlas.scenario.matrix import run_matrix

        run_id, saved = run_matrix(
            store, machine, args.classes, *matrix, out / "scenario-matrix", args.rounds
        )
        views.print_matrix(store, run_id)
    _print_findings_count(store, run_id)
    if args.json:
        write_text_file(args.json, json.dumps(saved, indent=1), "the scenario document (--json)")
    with console.status("writing the HTML report"):
        path = write_report(store, run_id, out / f"run-{run_id}.html")
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


def _launch_arguments(p: argparse.ArgumentParser) -> None:
    """How MPI benchmarks are launched (perfatlas.launchers); the environment gives defaults."""
    from perfatlas.launchers import launcher_names

    p.add_argument(
        "--mpirun-args",
        help='extra mpirun arguments, passed through untouched (e.g. "--bind-to none"); '
        "default $PERFATLAS_MPIRUN_ARGS",
    )
    p.add_argument("--hostfile", help="mpirun hostfile (default $PERFATLAS_HOSTFILE)")
    p.add_argument(
        "--launcher",
        choices=launcher_names(),
        help="slurm: every measurement a step of one Slurm job; mpirun: node-level benchmarks "
        "on every host of the hostfile at once (default: each benchmark's own)",
    )
    slurm = p.add_argument_group("Slurm (--launcher slurm)")
    slurm.add_argument("--nodes", type=int, help="nodes to allocate (default 1)")
    slurm.add_argument("--tasks-per-node", type=int, help="MPI slots per node (default 1)")
    slurm.add_argument("--partition", help="partition (default: Slurm's default partition)")
    slurm.add_argument("--account", help="account to charge")
    slurm.add_argument("--time", help="time limit, in sbatch's form (e.g. 30:00)")
    slurm.add_argument("--sbatch-args", help='extra sbatch arguments, e.g. "--exclusive"')


def _plan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plan",
        action="store_true",
        help="print every launch it would make and the estimated wall time; measure and store "
        "nothing",
    )
    p.add_argument("--json", action="store_true", help="with --plan: the plan as JSON")


_SLURM_ONLY = ("nodes", "tasks_per_node", "partition", "account", "time", "sbatch_args")


def _slurm_options(args: argparse.Namespace):
    import shlex

    from perfatlas.launchers import SlurmOptions

    given = [name for name in _SLURM_ONLY if getattr(args, name, None) is not None]
    if given and getattr(args, "launcher", None) != "slurm":
        raise UserError(f"--{given[0].replace('_', '-')} applies with --launcher slurm only")
    for name in ("nodes", "tasks_per_node"):
        if getattr(args, name, None) is not None and getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1")
    try:
        extra = tuple(shlex.split(getattr(args, "sbatch_args", None) or ""))
    except ValueError as error:
        raise UserError(f"--sbatch-args cannot be split: {error}") from None
    return SlurmOptions(
        *(getattr(args, name, None) for name in _SLURM_ONLY[:-1]), sbatch_args=extra
    )


def _launch_options(args: argparse.Namespace):
    from perfatlas.launchers import LaunchOptions

    environment = LaunchOptions.from_environment()
    given = LaunchOptions.parse(getattr(args, "mpirun_args", None), getattr(args, "hostfile", None))
    launcher = getattr(args, "launcher", None)
    if launcher == "slurm" and given.hostfile:
        raise UserError("--hostfile does not apply with --launcher slurm: Slurm gives the hosts")
    return LaunchOptions(
        given.mpirun_args
        if getattr(args, "mpirun_args", None) is not None
        else environment.mpirun_args,
        None if launcher == "slurm" else given.hostfile or environment.hostfile,
        launcher,
        _slurm_options(args),
    )


def _executor(args: argparse.Namespace):
    """The executor --launcher chooses (perfatlas.executors), checked before a run is opened:
    its scheduler or hosts must answer."""
    from perfatlas.executors import executor_for

    executor = executor_for(_launch_options(args))
    if getattr(args, "launcher", None) is not None:
        executor.preflight(Path(args.db))
    return executor


def _remeasure_argument(parser: argparse.ArgumentParser) -> None:
    """--no-remeasure, on the commands that measure through the runner (perfatlas.remeasure)."""
    parser.add_argument(
        "--no-remeasure",
        dest="remeasure",
        action="store_false",
        help="do not measure again the groups whose figures pass the anomaly rule (MPI patterns, "
        "multi-host runs): anomalies are then reported from one measurement",
    )


class _Parser(argparse.ArgumentParser):
    """argparse's own refusals (a missing argument, a value of the wrong type) in one sentence
    and exit status 2, as every other refusal: its usage block is what --help is for."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("perfatlas").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"perfatlas: {where}{one_line(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfatlas",
        description="Characterize parallel machines and profile parallel programs.",
    )
    parser.add_argument("--version", action="version", version=f"perfatlas {__version__}")
    parser.add_argument(
        "--db",
        default=os.environ.get("PERFATLAS_DB", DEFAULT_DB),
        help="SQLite results database (default $PERFATLAS_DB or ./perfatlas.db)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # --db may also follow the command (`perfatlas run --db x.db`); absent there, the top-level
    # value (or its default) stands.
    db_after_command = argparse.ArgumentParser(add_help=False)
    db_after_command.add_argument("--db", default=argparse.SUPPRESS, help="results database")

    def command(name: str, function, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[db_after_command])
        p.set_defaults(function=function)
        return p

    p = command("run", cmd_run, "run a suite (default: quick) and write the HTML report")
    p.add_argument("suite", nargs="?", default="quick", help="suite name or path to a TOML file")
    p.add_argument("--out", default="perfatlas-out", help="directory for the HTML report")
    p.add_argument("--repeat", type=int, default=1, help="launch each measurement N times")
    _launch_arguments(p)
    _remeasure_argument(p)
    p.add_argument("--threads", help="thread counts to sweep, e.g. 1,2 or 1-4")
    p.add_argument("--np", help="MPI ranks of every comm.* step (a number or 'all')")
    p.add_argument(
        "--llc",
        default="probe",
        help="the LLC that 'xLLC' sizes follow: probe (measure the effective one, default), "
        "hwloc, or a size",
    )
    _plan_arguments(p)

    p = command("measure", cmd_measure, "measure one benchmark with explicit parameters")
    p.add_argument("benchmark")
    p.add_argument("params", nargs="*", metavar="key=value")
    p.add_argument("--json", help="also write the result document(s) to this file")
    p.add_argument("--repeat", type=int, default=1, help="launch the measurement N times")
    _launch_arguments(p)
    _remeasure_argument(p)

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
    _launch_arguments(p)
    _remeasure_argument(p)
    _plan_arguments(p)

    command("list", cmd_list, "list suites and benchmarks with their parameters")
    p = command("show", cmd_show, "list runs, or show one run's results and findings")
    p.add_argument("run", nargs="?", help="run id or 'last'")
    p.add_argument(
        "--json",
        action="store_true",
        help="the run, its results' statistics and its findings (perfatlas.findings/1) as JSON",
    )
    p = command("report", cmd_report, "write the HTML report of a run, or of a profile file")
    p.add_argument("run", nargs="?", help="run id or 'last'")
    p.add_argument(
        "--profile",
        metavar="FILE",
        help="draw this perfatlas-ipm profile (ipm-profile.json, a --json copy, or a folder of "
        "rank files) without storing it",
    )
    p.add_argument(
        "-o", "--output", help="HTML file (default perfatlas-run-N.html, perfatlas-profile.html)"
    )
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
        "program",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the command to profile, e.g. -- mpirun -np 4 ./app args",
    )
    _launch_arguments(p)
    p = command("compare", cmd_compare, "compare two runs: ratios B / A with confidence intervals")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument(
        "--expect",
        type=float,
        help="the expected ratio B / A (e.g. the clock ratio 1.333): every point is held against "
        "it and the report draws it",
    )
    p.add_argument("--report", metavar="FILE", help="also write the comparison as an HTML report")
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
    _launch_arguments(p)
    p = command("baseline", cmd_baseline, "name a run as a baseline for 'perfatlas check'")
    p.add_argument("action", choices=("set", "list", "rm"))
    p.add_argument("name", nargs="?", help="the baseline's name (set, rm)")
    p.add_argument("run", nargs="?", help="run id or 'last' (set)")
    p = command(
        "export",
        cmd_export,
        "export a run as JSON or CSV, its findings as CSV, or as hwloc XML with its measured "
        "memory latency and bandwidth (hwloc memattrs)",
    )
    p.add_argument("run")
    p.add_argument(
        "--format",
        choices=("json", "csv", "findings-csv", "hwloc"),
        default="json",
        help="json: every result and the findings; csv: every result; findings-csv: one row per "
        "finding; hwloc: the topology with measured memory attributes",
    )
    p.add_argument("-o", "--output", help="file (default: standard output)")
    p = command("topo", cmd_topo, "show this machine's topology (hwloc)")
    p.add_argument("--json", action="store_true", help="print the topology document")
    command("doctor", cmd_doctor, "what can and cannot be measured on this machine, and why")
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
    _launch_arguments(p)
    return parser


_PASSED_THROUGH = ("--mpirun-args", "--sbatch-args")  # their values are other programs' options


def _join_option_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """An option's value that begins with '-' (`--tolerance -5%`, `--mpirun-args "--bind-to
    none"`): argparse reads such a word as an option and prints its usage instead of the one
    sentence the option's own check gives. Written `--tolerance=-5%`, it reaches that check (or
    is passed through untouched). A word that is an option of the command stays an option (but
    for the two above), and the words of a profiled command (after `--`, or from its first
    word on) are its own."""
    (commands,) = [a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    context, joined, i = parser, [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return [*joined, *argv[i:]]
        if context is parser and word in commands:
            context = commands[word]
        elif not word.startswith("-") and any(
            a.nargs == argparse.REMAINDER for a in context._actions
        ):
            return [*joined, *argv[i:]]
        action = context._option_string_actions.get(word)
        if action is None or action.nargs is not None or i + 1 == len(argv):
            joined.append(word)
            i += 1
            continue
        value = argv[i + 1]
        if not value.startswith("-"):
            joined += [word, value]
            i += 2
        elif word in _PASSED_THROUGH or value not in context._option_string_actions:
            joined.append(f"{word}={value}")
            i += 2
        else:  # the next word is an option: argparse says the value is missing
            joined.append(word)
            i += 1
    return joined


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_join_option_values(sys.argv[1:] if argv is None else argv, parser))
    if not 1 <= getattr(args, "repeat", 1) <= MAX_REPEAT:
        print(f"perfatlas: --repeat must be from 1 to {MAX_REPEAT}", file=sys.stderr)
        return 2
    try:
        args.executor = _executor(args)
        return args.function(args)
    except UserError as error:
        print(f"perfatlas: {error}", file=sys.stderr)
    except sqlite3.DatabaseError as error:  # the store says its own; this is the last net
        print(f"perfatlas: database {args.db}: {error}", file=sys.stderr)
    except OSError as error:  # a full disk, a file that vanished: the system's own words
        where = f" {error.filename}" if error.filename else ""
        print(f"perfatlas: cannot use{where}: {error.strerror or error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
