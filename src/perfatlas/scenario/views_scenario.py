"""What `perfatlas scenario run` and `scenario matrix` print: the jobs table, the PARbench
summary, the accounting warnings; the matrix of slowdowns, as the run's findings state them."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perfatlas.common.warning import records_from_json
from perfatlas.findings.compute import run_findings
from perfatlas.scenario.accounting import job_cells
from perfatlas.scenario.findings_scenario import cell_rows
from perfatlas.store.run_data import RunData

console = Console(width=None if sys.stdout.isatty() else 170)  # piped: no 80-column squeeze


def jobs_table(name: str, rows: list[dict]) -> Table:
    table = Table(title=f"scenario {name}: jobs (times in s, offsets from the start)")
    columns = ["job", "threads", "nice", "binding", "start", "end", "wall", "dedicated"]
    columns += ["extension", "user", "system", "waiting", "migrations", "accounting"]
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i in (0, 3, 13) else "right")
    for row in rows:
        account = row["accounting"]
        table.add_row(
            *job_cells(row),
            "adds up" if account["ok"] else "[yellow]does not add up[/]",
        )
    return table


def summary_lines(document: dict) -> list[str]:
    s = document["summary"]
    lines = [
        f"CPUs {s['cpus']} ({s['cpu_list']}), {s['jobs']} jobs, bench time {s['bench_s']:.3f} s: "
        f"{s['available_s']:.3f} CPU-s available",
        f"user {s['user_s']:.3f} s, system {s['system_s']:.3f} s, idle {s['idle_s']:.3f} s, "
        f"waiting (runnable, not running) {s['waiting_s']:.3f} s",
    ]
    if s["mean_extension"] is not None:
        lines.append(
            f"runtime extension (wall / dedicated): mean {s['mean_extension']:.2f}, "
            f"max {s['max_extension']:.2f}"
        )
    for program in document["programs"]:
        walls = ", ".join(f"{w:.3f}" for w in program["dedicated_walls_s"])
        lines.append(
            f"job {program['job']}: asked {program['runtime_s']:.3g} s, {program['asked']}; "
            f"alone {walls} s ({program['lines']} lines, {program['variants']} variants)"
        )
    return lines


def print_scenario(name: str, document: dict, rows: list[dict]) -> None:
    console.print(jobs_table(name, rows))
    for line in summary_lines(document):
        console.print(line, highlight=False)
    for warning in records_from_json(document["summary"]["accounting_warnings"]):
        console.print(f"[yellow]warning:[/] {warning.text}", highlight=False)


def print_matrix(data: RunData) -> None:
    """The run's interference matrices, each cell as the run's scenario.interference findings
    state it (the report's matrix table writes the same cells)."""
    found = run_findings(data)
    for matrix in (s for s in data.scenarios if s["kind"] == "matrix"):
        rounds = f", {matrix['rounds']} interleaved rounds" if "rounds" in matrix else ""
        table = Table(
            title="interference matrix: slowdown of the row's kernel when co-run with the "
            f"column's [95 % CI] ({matrix['bytes'] / 1e6:.4g} MB working sets, CPUs "
            f"{matrix['cpu_list']}{rounds}), as the run's findings state them"
        )
        table.add_column("class (kernel)")
        for column in matrix["classes"]:
            table.add_column(column, justify="right")
        for row in cell_rows(matrix, found):
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
        if "slowdown_ci" in matrix:
            console.print(
                "a cell whose interval contains 1 is no measurable interference", highlight=False
            )
