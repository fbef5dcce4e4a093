"""Memory latency: the pointer-chase curves, the detected levels beside hwloc's caches, two CPUs."""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfatlas.common.units import format_size
from perfatlas.mem.analysis_levels import MATCH_FACTOR, Comparison, Level, compare_with_hwloc
from perfatlas.mem.series_memory import (
    MIN_LEVEL_POINTS,
    is_two_thread,
    latency_series,
    levels_of,
    primary_latency,
)
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.cells import context_table, few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import Series
from perfatlas.store.run_data import RunData


def _curves_figure(
    name: str, series: list[Series], data: RunData, reference: Series | None, title: str
) -> str:
    sizes = [size for s in series for size in s.sizes]
    with plots.figure(name, height=4.6) as (fig, axes):
        ax = axes[0, 0]
        curves = [
            s.curve(color=plots.COLORS[i % 10], linestyle="-" if s.key[0] == "page" else "--")
            for i, s in enumerate(series)
        ]
        if max(len(s.results) for s in series) < MIN_LEVEL_POINTS:
            plots.draw_error_bars(ax, curves)  # a band between a few points would mislead
        else:
            plots.draw_curves(ax, curves)
        plots.size_axis(ax, sizes)
        plots.plain_log_y(ax, "load-to-use latency (ns per load)")
        plots.mark_caches(ax, data.caches)
        if reference is not None:
            index = series.index(reference)
            mark_levels(ax, levels_of(reference, data), plots.COLORS[index % 10])
        ax.set_title(title, loc="left")
        plots.legend_below(ax, ncol=2)
        return plots.to_svg(fig)


MATCHED = {"size": "by size", "order": "by order"}


def _level_cells(row: Comparison, hz: float | None) -> list[str]:
    """One level's cells; latency also in cycles where the core frequency is known."""
    level, cache = row.level, row.cache
    hwloc = f"{cache.name} {format_size(cache.size_bytes)}" if cache else "no hwloc cache"
    ratio = f"{row.ratio:.2f}" if row.ratio is not None else ""
    if level is None:
        return [row.name, "not detected", "", "", "", hwloc, "", ""] + ([""] if hz else [])
    capacity = format_size(level.capacity_bytes) if level.capacity_bytes else "beyond the caches"
    boundary = format_size(level.boundary_bytes) if level.boundary_bytes else ""
    cells = [
        row.name,
        f"{level.latency_ns:.3g}",
        f"{format_size(level.first_bytes)} – {format_size(level.last_bytes)}",
        capacity,
        boundary,
        hwloc,
        MATCHED.get(level.matched_by or "", ""),
        ratio,
    ]
    return cells + ([f"{level.latency_ns * hz / 1e9:.3g}"] if hz else [])


def _level_rows(series: list[Series], data: RunData, hz: float | None) -> list[list[str]]:
    """Detected levels beside hwloc's caches, per series (its label on its first row only)."""
    rows = []
    for s in series:
        for i, row in enumerate(compare_with_hwloc(levels_of(s, data), data.caches)):
            rows.append([s.label if i == 0 else "", *_level_cells(row, hz)])
    return rows


def _data_table(series: list[Series]) -> Table:
    rows = []
    for s in series:
        for r in s.results:
            rows.append(
                [
                    s.label,
                    format_size(r.params["bytes"]),
                    value_with_ci(r, 1.0, "ns"),
                    f"{r.min:.3g} ns",
                    str(r.n),
                    "yes" if r.warnings else "",
                ]
            )
    return Table(
        ["series", "working set", "median [95 % CI]", "minimum", "n", "warned"],
        rows,
        numeric=(1, 2, 3, 4),
    )


@section("memory-latency", "Memory latency", order=30)
def latency_section(data: RunData) -> list[Block]:
    results = data.measured("mem.latency", "latency_ns")
    if not results:
        return []
    series = latency_series(data)
    single = [s for s in series if not is_two_thread(s)]
    pairs = [s for s in series if is_two_thread(s)]
    reference = primary_latency(series)
    blocks: list[Block] = [note] if (note := few_samples_note(results)) else []
    if single:
        svg = _curves_figure(
            "latency",
            single,
            data,
            reference,
            "pointer chase: time per dependent load vs working set",
        )
        marked = (
            f"Dashed horizontal lines and dotted verticals: levels and boundaries detected on "
            f"'{reference.label}' (piecewise-constant fit, perfatlas.mem.analysis_levels). "
            if reference
            else ""
        )
        blocks.append(
            Figure(
                svg,
                "Median latency per load with its 95 % CI band. Solid line: chain=page (random lines within "
                "pages: caches without TLB misses); dashed: chain=random (adds "
                "TLB misses). " + marked + "Grey bars: hwloc's cache sizes "
                "(one instance).",
            )
        )
        blocks.append(context_table(single))
    hz = data.run["context"].get("cpu_max_hz")
    rows = _level_rows([s for s in series if len(s.results) >= MIN_LEVEL_POINTS], data, hz)
    if rows:
        blocks.append(
            Table(
                [
                    "series",
                    "level",
                    "latency (ns)",
                    "on the plateau",
                    "capacity estimate",
                    "boundary",
                    "hwloc",
                    "matched",
                    "estimate / hwloc",
                ]
                + ([f"cycles at {hz / 1e9:.3g} GHz (nominal max)"] if hz else []),
                rows,
                numeric=(2, 4, 5, 8),
                caption="Detected memory levels beside hwloc's caches. Latency: median over the "
                "plateau; capacity estimate: the largest working set still on the plateau "
                "(a lower bound, exact to the sweep's spacing); boundary: geometric midpoint "
                "to the first working set beyond it. Matched by size: within "
                f"{MATCH_FACTOR:g}x of hwloc's "
                "size; by order: the level is there but holds far less (or more) than hwloc "
                "says, e.g. a shared cache that the hypervisor or other tenants mostly keep.",
            )
        )
        if not hz:
            blocks.append(
                Note(
                    "Latency is given in ns only: the core frequency is not visible here "
                    "(no cpufreq interface), so cycles per load cannot be derived honestly."
                )
            )
    if pairs:
        svg = _curves_figure(
            "latency-two-thread",
            pairs,
            data,
            None,
            "two-thread method: both CPUs chase the same memory",
        )
        blocks.append(
            Figure(
                svg,
                "The two-thread method: one CPU allocates and first-touches "
                "the buffer, then each CPU measures it while the other spins. "
                "Curves that coincide mean the memory is equally near to both "
                "(same NUMA node); a gap is the cost of the remote node.",
            )
        )
        blocks.append(context_table(pairs))
    if not any(len(s.results) >= MIN_LEVEL_POINTS for s in series):
        blocks.append(
            Note(
                "Too few working sets per series (fewer than 5) to detect memory "
                "levels; sweep bytes= more widely (the quick suite does).",
                "warning",
            )
        )
    blocks.append(Details("All latency figures (median, 95 % CI, minimum)", [_data_table(series)]))
    return blocks


def mark_levels(ax, levels: Sequence[Level], color) -> None:
    """Detected levels: dashed plateau lines at their latency, dotted verticals at boundaries."""
    for level in levels:
        ax.hlines(
            level.latency_ns,
            level.first_bytes,
            level.last_bytes,
            colors=[color],
            linestyles="--",
            linewidth=1.6,
            alpha=0.9,
        )
        ax.annotate(
            f"{level.name} {level.latency_ns:.3g} ns",
            (math.sqrt(level.first_bytes * level.last_bytes), level.latency_ns),
            textcoords="offset points",
            xytext=(0, 5),
            ha="center",
            fontsize=7.5,
            color=color,
            fontweight="bold",
        )
        if level.boundary_bytes is not None:
            ax.axvline(level.boundary_bytes, color=color, linestyle=":", linewidth=1.1)
