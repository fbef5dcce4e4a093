"""PARbench scenarios: per-job Gantt timelines of user, system and waiting time, the summary
(CPUs, bench time, user / system / idle, waiting), the jobs with their runtime extension and
accounting check, the synthesized programs; and the interference matrix of kernel classes."""

from __future__ import annotations

import numpy as np
from markupsafe import Markup

from perfatlas.common.warning import records_from_json
from perfatlas.findings.compute import RunFindings, run_findings
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Facts, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.scenario.accounting import job_cells
from perfatlas.scenario.findings_scenario import cell_rows
from perfatlas.store.run_data import RunData

STATES = (("user", 1, "#1f77b4"), ("system", 2, "#d62728"), ("waiting", 3, "#ffbf00"))
MAX_BARS = 200  # per job: samples are merged into at most this many intervals


def _binned(timeline: list[list[float]], start: float) -> np.ndarray:
    """Rows (t0, t1, user, system, waiting), the 20 ms samples merged into <= MAX_BARS."""
    if not timeline:
        return np.zeros((0, 5))
    points = np.array(timeline, dtype=float)
    edges = np.concatenate([[start], points[:, 0]])
    groups = np.array_split(np.arange(len(points)), min(MAX_BARS, len(points)))
    rows = []
    for group in groups:
        rows.append(
            [edges[group[0]], edges[group[-1] + 1], *points[group][:, 1:4].sum(axis=0).tolist()]
        )
    return np.array(rows)


def gantt(name: str, jobs: list[dict]) -> str:
    """One row per job: in each interval, the shares of threads x time spent in user, system
    and waiting stacked from the row's bottom; white is time sleeping or not started."""
    height = 0.8
    with plots.figure(f"gantt-{name}", width=9.5, height=0.9 + 0.45 * len(jobs)) as (fig, axes):
        ax = axes[0][0]
        for row, job in enumerate(jobs):
            bins = _binned(job["timeline"], job["start_s"])
            if not len(bins):
                continue
            width = bins[:, 1] - bins[:, 0]
            capacity = np.maximum(width * job["threads"], 1e-12)
            bottom = np.full(len(bins), row - height / 2)
            for label, column, color in STATES:
                share = np.clip(bins[:, column + 1] / capacity, 0.0, 1.0) * height
                ax.bar(
                    bins[:, 0],
                    share,
                    width=width,
                    bottom=bottom,
                    align="edge",
                    color=color,
                    linewidth=0,
                    label=label if row == 0 else None,
                )
                bottom = bottom + share
            ax.plot([job["start_s"], job["end_s"]], [row + 0.45] * 2, color="0.3", linewidth=0.8)
            if job.get("dedicated_s"):
                alone = job["start_s"] + job["dedicated_s"]
                ax.plot([alone], [row + 0.45], marker="|", color="k", markersize=8)
        ax.set_yticks(range(len(jobs)), [job["job"] for job in jobs])
        ax.invert_yaxis()
        ax.set_xlabel("time since the scenario started (s)")
        ax.grid(axis="y", visible=False)
        ax.legend(
            frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.5 / len(jobs))
        )
        fig.tight_layout()
        return plots.to_svg(fig)


def extension_bars(name: str, jobs: list[dict]) -> str:
    values = [job["extension"] or 0.0 for job in jobs]
    with plots.figure(f"extension-{name}", width=9.5, height=2.8) as (
        fig,
        axes,
    ):
        ax = axes[0][0]
        colors = [plots.COLORS[i % len(plots.COLORS)] for i in range(len(jobs))]
        plots.draw_bars(ax, [job["job"] for job in jobs], values, values, values, colors)
        ax.axhline(1.0, color="0.3", linestyle=":", linewidth=0.9)
        ax.set_ylabel("runtime extension (wall / dedicated)")
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        return plots.to_svg(fig)


def summary_facts(scenario: dict) -> Facts:
    s = scenario["summary"]
    items = [
        ("CPUs", f"{s['cpus']} ({s['cpu_list']})"),
        ("jobs", str(s["jobs"])),
        ("bench time", f"{s['bench_s']:.3f} s (first start to last end)"),
        ("CPU time available", f"{s['available_s']:.3f} s (CPUs x bench time)"),
        ("user time", f"{s['user_s']:.3f} s"),
        ("system time", f"{s['system_s']:.3f} s"),
        ("idle time", f"{s['idle_s']:.3f} s (available - user - system)"),
        ("waiting time", f"{s['waiting_s']:.3f} s (runnable, not running: schedstat)"),
    ]
    if s["mean_extension"] is not None:
        items.append(
            ("runtime extension", f"mean {s['mean_extension']:.2f}, max {s['max_extension']:.2f}")
        )
    if scenario.get("scale", 1.0) != 1.0:
        items.append(("scale", f"runtimes and offsets x{scenario['scale']:g}"))
    return Facts(items, caption=scenario.get("description", ""))


def jobs_table(jobs: list[dict]) -> Table:
    rows = []
    for job in jobs:
        account = job["accounting"]
        rows.append(
            [
                *job_cells(job),
                f"{account['accounted_s']:.3f} / {account['expected_s']:.3f}"
                + ("" if account["ok"] else " (does not add up)"),
            ]
        )
    return Table(
        [
            "job",
            "threads",
            "nice",
            "binding",
            "start (s)",
            "completion (s)",
            "wall (s)",
            "dedicated (s)",
            "extension",
            "user (s)",
            "system (s)",
            "waiting (s)",
            "migrations",
            "user+system+waiting / wall x threads (s)",
        ],
        rows,
        caption="Per job: offsets from the scenario's start, wall time, the same program's wall "
        "time alone (dedicated), their ratio, CPU time from wait4's rusage, waiting time summed "
        "over the job's threads from /proc/PID/task/*/schedstat, migrations (se.nr_migrations). "
        "Accounting: user + system + waiting should be about wall x threads (10 % + 50 ms per "
        "thread allowed).",
        numeric=tuple(range(1, 13)),
    )


def programs_table(scenario: dict) -> Table:
    rows = []
    for program in scenario["programs"]:
        predicted = program["predicted"]
        rows.append(
            [
                program["job"],
                f"{program['count']} x {program['threads']} thread(s)",
                f"{program['runtime_s']:.3g} s, {program['asked']}",
                f"{predicted['runtime_s']:.3g} s, "
                f"{predicted['transfer_rate'] / 1e9:.3g} GB/s, "
                f"{predicted['flop_rate'] / 1e9:.3g} Gflop/s, w {predicted['write_fraction']:.2f}",
                ", ".join(f"{w:.3f}" for w in program["dedicated_walls_s"]),
                f"{program['lines']} lines, {program['variants']} variants",
            ]
        )
    return Table(
        ["job", "copies", "asked", "predicted (refined)", "alone (s), in order", "program"],
        rows,
        caption="The synthesized programs: what was asked, what the refined program is predicted "
        "to do from the base data and its dedicated runs, and every dedicated run (the last is "
        "the dedicated runtime).",
    )


def scenario_blocks(scenario: dict) -> list[Block]:
    jobs = scenario["jobs"]
    name = f"{scenario['id']}"
    blocks: list[Block] = [
        Note(Markup("<strong>scenario {}</strong>").format(scenario["name"])),
        summary_facts(scenario),
        Figure(
            gantt(name, jobs),
            "Per-job timeline: in every interval, the share of threads x time in user (blue), "
            "system (red) and waiting (runnable, not running; amber) mode; white is time asleep. "
            "The line above each row spans start to completion; its tick marks where the job "
            "would have ended alone (start + dedicated runtime).",
        ),
        Figure(extension_bars(name, jobs), "Runtime extension: wall time / dedicated runtime."),
        jobs_table(jobs),
    ]
    for warning in records_from_json(scenario["summary"]["accounting_warnings"]):
        blocks.append(Note(warning.text, "warning"))
    blocks.append(Details("synthesized programs", [programs_table(scenario)]))
    return blocks


def matrix_blocks(matrix: dict, found: RunFindings) -> list[Block]:
    classes = matrix["classes"]
    labels = [f"{c} ({matrix['kernels'][c]})" for c in classes]
    with plots.figure(
        f"matrix-{matrix['id']}", width=2.2 + 0.7 * len(classes), height=1.6 + 0.55 * len(classes)
    ) as (fig, axes):
        ax = axes[0][0]
        plots.draw_heatmap(
            fig, ax, matrix["slowdown"], "slowdown (together / alone)", lambda v: f"{v:.2f}"
        )
        ax.set_xticks(range(len(classes)), classes, rotation=45, ha="right")
        ax.set_yticks(range(len(classes)), labels)
        ax.set_xlabel("co-runner's class")
        fig.tight_layout()
        svg = plots.to_svg(fig)
    alone = [[c, matrix["kernels"][c], f"{matrix['alone_s'][c]:.4f}"] for c in classes]
    measured = (
        f"alone and together interleaved over {matrix['rounds']} rounds; each cell the ratio of "
        "medians with its 95 % bootstrap interval, and a cell whose interval contains 1 is no "
        "measurable interference."
        if "rounds" in matrix
        else "one measurement per cell."
    )
    cells = (
        [
            Table(
                ["class (kernel)", *classes],
                cell_rows(matrix, found),
                caption="Slowdown [95 % CI] and verdict of every cell, as the run's "
                "scenario.interference findings state them.",
            )
        ]
        if "slowdown_ci" in matrix
        else []
    )
    return [
        Figure(
            svg,
            f"Interference matrix: slowdown of the row's kernel when the column's runs beside "
            f"it on the other CPU ({matrix['cpu_list']}), {matrix['bytes'] / 1e6:.4g} MB working "
            "sets; 1 means no interference. Each time is the middle of three identical program "
            f"lines, so the co-runner is busy throughout it; {measured}",
        ),
        *cells,
        Table(["class", "kernel", "alone (s, median)"], alone, numeric=(2,)),
    ]


@section("scenario", "Interference scenarios (PARbench)", order=75)
def build(data: RunData) -> list[Block] | None:
    blocks: list[Block] = []
    for scenario in data.scenarios:
        if scenario["kind"] == "scenario":
            blocks += scenario_blocks(scenario)
        else:
            blocks += matrix_blocks(scenario, run_findings(data))
    return blocks or None
