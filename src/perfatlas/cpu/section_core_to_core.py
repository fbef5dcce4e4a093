"""Core-to-core latency: the matrix as a heatmap with the groups found outlined, and the table of
latency levels checked against hwloc's objects, as the run's findings state them."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from perfatlas.common.units import format_number
from perfatlas.cpu.analysis_core_to_core import (
    SYMMETRY_ALPHA,
    CoreMatrix,
    Level,
    core_matrix,
    display_order,
    groups_found,
)
from perfatlas.cpu.findings_cpu import LEVEL_HEADER, level_rows
from perfatlas.findings.compute import run_findings
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.cells import few_samples_note
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

PAIR_TABLE_MAX = 28  # pairs listed one by one up to this many (8 CPUs)


def _figure(matrix: CoreMatrix, levels: list[Level], order: list[int]) -> str:
    n = len(order)
    side = min(9.0, 2.6 + 0.28 * n)
    with plots.figure("core-to-core", 1, 1, width=side + 1.2, height=side) as (fig, axes):
        ax = axes[0][0]
        values = np.nan_to_num(matrix.medians(order), nan=0.0)
        plots.draw_heatmap(
            fig,
            ax,
            values,
            "one-way latency (ns), median",
            annotate=(lambda v: f"{v:.3g}") if n <= 8 else None,
        )
        at = {cpu: i for i, cpu in enumerate(order)}
        outlined = False
        for k, level in enumerate(levels):
            color = plots.COLORS[(k + 1) % len(plots.COLORS)]
            drawn = [g for g in level.groups if 1 < len(g) < n]
            for group in drawn:
                first = min(at[cpu] for cpu in group)
                ax.add_patch(
                    Rectangle((first - 0.5, first - 0.5), len(group), len(group), fill=False,
                              edgecolor=color, linewidth=1.2 + 0.6 * k)
                )  # fmt: skip
            if drawn:
                ax.plot([], [], color=color, label=f"level {k + 1}: {level.name}")
                outlined = True
        ticks = ax.get_xticks()
        labels = [str(order[int(t)]) for t in ticks if 0 <= t < n]
        ax.set_xticks(ticks[: len(labels)], labels)
        ax.set_yticks(ticks[: len(labels)], labels)
        ax.set_xlabel("CPU (PU), grouped")
        ax.set_ylabel("CPU (PU), grouped")
        if outlined:
            ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.09), frameon=False)
        fig.tight_layout()
        return plots.to_svg(fig)


def _pair_rows(matrix: CoreMatrix) -> list[list[str]]:
    rows = []
    for (a, b), pooled in matrix.pairs.items():
        directions = [matrix.directed.get(d) for d in ((a, b), (b, a))]
        cells = [
            f"{format_number(r.median)} [{format_number(r.ci_lo)}, {format_number(r.ci_hi)}]"
            if r
            else "-"
            for r in directions
        ]
        both = f"{format_number(pooled.median)} [{format_number(pooled.ci_lo)}, {format_number(pooled.ci_hi)}]"
        rows.append([f"{a} - {b}", *cells, both])
    return rows


@section("core-to-core", "Core-to-core latency (cpu.core_to_core)", order=35)
def core_to_core_section(data: RunData) -> list[Block]:
    results = data.measured("cpu.core_to_core")
    matrix = core_matrix(results)
    if matrix is None:
        return []
    levels = groups_found(matrix, data.run["topology"])
    order = display_order(matrix.cpus, levels)
    n = len(matrix.cpus)
    caption = (
        f"One-way latency of a cache-line transfer between {len(matrix.pairs)} pair(s) of "
        f"{n} CPUs: two threads pinned to a pair bounce one 128-byte-aligned line, each CPU "
        "initiating in turn; a cell is the median of both directions' samples, round trip / 2. "
        "CPUs are ordered by the groups found; outlines mark the groups of each latency level."
    )
    if len(matrix.pairs) < n * (n - 1) // 2:
        caption += " Only the first CPU's pairs were measured (pairs=first): blank cells."
    blocks: list[Block] = []
    note = few_samples_note(results)
    if note:
        blocks.append(note)
    asymmetric = matrix.asymmetric()
    if asymmetric:
        shown = ", ".join(f"{a}-{b}" for a, b in asymmetric[:8])
        blocks.append(
            Note(
                f"{len(asymmetric)} pair(s) differ by direction (paired sign test, p < "
                f"{SYMMETRY_ALPHA:g}): {shown}. The round trip is the same both ways; a "
                "difference points at a CPU whose frequency or load changed with the initiator.",
                tone="warning",
            )
        )
    blocks += [
        Figure(_figure(matrix, levels, order), caption),
        Table(
            list(LEVEL_HEADER),
            level_rows(run_findings(data)),
            caption="Levels: the pair medians sorted and split where one exceeds the last by "
            "25 %; groups: CPUs joined by pairs at or below the level (single linkage); matched "
            "against the PUs that share an hwloc core, L2, L3, die, NUMA node, package or the "
            "machine, on every measured pair.",
            numeric=(1, 2),
        ),
    ]
    if len(matrix.pairs) <= PAIR_TABLE_MAX:
        blocks.append(
            Table(
                ["pair", "a initiates (ns)", "b initiates (ns)", "both (ns)"],
                _pair_rows(matrix),
                caption="Median one-way latency [95 % CI] of each direction and of both pooled.",
                numeric=(1, 2, 3),
            )
        )
    return blocks
