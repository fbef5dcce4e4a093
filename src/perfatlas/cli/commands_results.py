"""list, show, report, compare and export: the commands that read what is stored, read-only."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perfatlas.cli.options import (
    AddCommand,
    check_output_file,
    open_store,
    print_findings,
)
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import write_text_file

if TYPE_CHECKING:  # imported where used: the command line starts without the analyses
    from perfatlas.store.run_data import RunData


def cmd_list(args: argparse.Namespace) -> int:
    from perfatlas.benchmarks import all_benchmarks
    from perfatlas.plan.suite import load, suite_names

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


def cmd_show(args: argparse.Namespace) -> int:
    from perfatlas.store.run_data import RunData
    from perfatlas.terminal.run_views import console, print_warnings, results_table, runs_table

    store = open_store(args, read_only=True)
    if args.run is None:
        if args.json:
            raise UserError("--json shows one run: give its id or 'last'")
        console.print(runs_table(store.runs()))
        return 0
    run_id = store.resolve_run(args.run)
    data = RunData.load(store, run_id)
    run = data.run
    if args.json:
        return _show_json(data)
    console.print(
        f"run {run_id}: {run['status']}, {run['started']} .. {run['finished'] or '-'}, "
        f"host {run['host']} (machine {run['fingerprint']}), suite {run['suite'] or 'measure'}"
    )
    console.print(results_table(data.launches, f"run {run_id}"))
    if data.profiles:  # a run of perfatlas profile: the profile itself, as the report has it
        from perfatlas.profile.views_profile import print_profiles

        print_profiles(data)
    print_warnings(data.launches)
    print_findings(data)
    return 0


def _show_json(data: RunData) -> int:
    """One run as JSON: the run's record, its results' statistics (no samples: export has them)
    and its findings document (perfatlas.findings/1); a run of perfatlas profile, its profile's
    figures too (key "profile", perfatlas.profile.analysis_profile)."""
    from perfatlas.findings.compute import run_findings

    fields = ("id", "benchmark", "params", "metric", "unit", "n", "median", "ci_lo", "ci_hi")
    results = [
        {**{k: getattr(r, k) for k in fields}, "not_measurable": r.not_measurable}
        for r in data.launches
    ]
    document = {"run": data.run, "results": results, "findings": run_findings(data).document()}
    if data.profiles:
        from perfatlas.profile.views_profile import profile_document

        document["profile"] = profile_document(data)
    print(json.dumps(document, indent=1))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from perfatlas.common.progress import console
    from perfatlas.report import write_report
    from perfatlas.store.run_data import RunData

    if args.profile:
        return _report_profile(args)
    if args.run is None:
        raise UserError("give the run to report (a run id or 'last'), or --profile FILE")
    check_output_file(args.output, "the report")
    store = open_store(args, read_only=True)
    run_id = store.resolve_run(args.run)
    with console.status("writing the HTML report"):
        data = RunData.load(store, run_id)
        path = write_report(data, Path(args.output or f"perfatlas-run-{run_id}.html"))
    print(path.resolve())
    return 0


def _report_profile(args: argparse.Namespace) -> int:
    """A profile file drawn as it is, without storing it."""
    from perfatlas.profile.profile_files import read_path
    from perfatlas.report import write_profile_report

    if args.run is not None:
        raise UserError("give a run or --profile FILE, not both")
    check_output_file(args.output, "the report")
    source = Path(args.profile)
    if source.exists() and not (source.is_file() or source.is_dir()):  # a FIFO would hang
        raise UserError(f"--profile {source} is neither a file nor a folder of rank files")
    path = write_profile_report(
        read_path(source), source, Path(args.output or "perfatlas-profile.html")
    )
    print(path.resolve())
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from perfatlas.experiments.analysis_comparison import point_ratios
    from perfatlas.experiments.views_comparison import comparison_table
    from perfatlas.report import write_comparison_report
    from perfatlas.store.run_data import Comparison, RunData
    from perfatlas.terminal.run_views import console

    if args.expect is not None and not (args.expect > 0 and math.isfinite(args.expect)):
        raise UserError(f"--expect {args.expect:g} must be a positive ratio (e.g. 1.333)")
    check_output_file(args.report, "the report")
    store = open_store(args, read_only=True)
    run_a, run_b = store.resolve_run(args.run_a), store.resolve_run(args.run_b)
    data_a, data_b = RunData.load(store, run_a), RunData.load(store, run_b)
    points = point_ratios(data_a.launches, data_b.launches)
    if not points:
        raise UserError(f"runs {run_a} and {run_b} have no result with the same parameters")
    console.print(comparison_table(points, run_a, run_b, args.expect))
    if args.report:
        data_b.comparison = Comparison(data_a.run, data_a.launches, args.expect)
        path = write_comparison_report(data_b, Path(args.report))
        print(f"report: {path.resolve()}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from perfatlas.export.run_export import export
    from perfatlas.store.run_data import RunData

    check_output_file(args.output, "the export")
    store = open_store(args, read_only=True)
    data = RunData.load(store, store.resolve_run(args.run))
    if args.format == "hwloc":
        return _export_hwloc(store, data, args.output)
    if args.format == "findings-csv":
        from perfatlas.findings.compute import run_findings
        from perfatlas.findings.render import findings_csv

        text = findings_csv(run_findings(data))
    else:
        text = export(data, args.format)
    if args.output:
        write_text_file(args.output, text, "the export")
    else:
        sys.stdout.write(text)
    return 0


def _export_hwloc(store, data, output: str | None) -> int:
    """The run's hwloc topology with its measured memory attributes (perfatlas.export.hwloc_export)."""
    import tempfile

    from perfatlas.common.units import format_cpu_list
    from perfatlas.export.hwloc_export import UNITS, write_calibrated_topology

    if output:
        figures = write_calibrated_topology(store, data, Path(output))
        for f in figures:
            print(
                f"{f.attribute} {f.value} {UNITS[f.attribute]}: cpus "
                f"{format_cpu_list(list(f.initiator))} -> NUMA node {f.target}"
            )
        print(
            f"{output}: {len(figures)} measured memory attribute value(s) of run {data.run['id']}"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="perfatlas-hwloc-") as folder:
        path = Path(folder) / "machine.xml"
        write_calibrated_topology(store, data, path)
        sys.stdout.write(path.read_text())
    return 0


def add_commands(command: AddCommand) -> None:
    """Add this group's commands to the parser (perfatlas.cli.entry.build_parser)."""
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
