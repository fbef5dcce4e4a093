"""The roofline (perfatlas.cpu.analysis_roofline): compute and bandwidth ceilings at 1 thread and at all,
the proxies' measured points at their declared intensity, and the tables behind the plot."""

from __future__ import annotations

import numpy as np

from perfatlas.common.units import format_number, format_size
from perfatlas.cpu.analysis_roofline import (
    BANDWIDTH,
    MEMORY,
    PEAKFLOPS,
    PROXY_PRECISION,
    BandwidthCeiling,
    ComputeCeiling,
    Estimate,
    ProxyPoint,
    Roofline,
    effective_llc,
    roofline,
)
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

GIGA = 1e9  # GFLOP/s = 10^9 flop/s, GB/s = 10^9 byte/s (SI, docs/architecture.md)
MARKERS = {"app.spmv": "o", "app.madbench": "s", "app.sweep": "^"}


def run_roofline(data: RunData) -> Roofline:
    """The roofline of a stored run, as the report and the summary draw it."""
    return roofline(data.results, data.run["topology"], effective_llc(data.run))


def estimate_text(rate: Estimate, unit: str) -> str:
    m, lo, hi = (format_number(v / GIGA) for v in (rate.median, rate.lo, rate.hi))
    return f"{m} [{lo}, {hi}] {unit}"


def threads_text(threads: int) -> str:
    return f"{threads} thread{'s' * (threads > 1)}"


def ceiling_name(ceiling: ComputeCeiling) -> str:
    return f"{ceiling.precision}, {ceiling.isa}"


def scopes(roof: Roofline) -> list[tuple[int, int]]:
    """(compute threads, bandwidth threads) per panel: 1 thread, then all."""
    compute, bandwidth = roof.compute_threads(), roof.bandwidth_threads()
    return list(dict.fromkeys(zip(compute, bandwidth)))


def _x_range(roof: Roofline, points: list[ProxyPoint], peak: float) -> np.ndarray:
    found = [p.intensity for p in points] + [p.intensity_low for p in points]
    found += [peak / c.rate.median for c in roof.bandwidth]
    low, high = min([1 / 16, *found]) / 2, max([16.0, *found]) * 2
    return np.geomspace(low, high, 200)


def _panel(ax, roof: Roofline, compute: int, bandwidth: int, points: list[ProxyPoint]) -> None:
    ceilings = [c for c in roof.compute if c.threads == compute]
    top = max(c.rate.median for c in ceilings)
    x = _x_range(roof, points, top)
    for c in sorted(ceilings, key=lambda c: -c.rate.median):
        best = c is roof.peak(c.precision, compute)
        style = "-" if c.precision == PROXY_PRECISION else ":"
        ax.axhline(
            c.rate.median / GIGA,
            color="0.1" if best else "0.55",
            linestyle=style,
            linewidth=1.6 if best else 0.8,
        )
        ax.annotate(
            ceiling_name(c),
            (x[-1], c.rate.median / GIGA),
            fontsize=6.5,
            ha="right",
            va="bottom",
            color="0.1" if best else "0.45",
        )
    for i, level in enumerate(roof.levels):
        ceiling = roof.ceiling(level, bandwidth)
        if ceiling is None:
            continue
        y = np.minimum(x * ceiling.rate.median, top) / GIGA
        ax.plot(
            x,
            y,
            color=plots.COLORS[i % 10],
            linewidth=1.4,
            label=f"{level}: {estimate_text(ceiling.rate, 'GB/s')}",
        )
    for i, p in enumerate(points):
        color = plots.COLORS[(len(roof.levels) + i) % 10]
        median = p.rate.median / GIGA
        ax.plot([p.intensity_low, p.intensity], [median, median], color=color, linewidth=1)
        ax.errorbar(
            [p.intensity],
            [median],
            yerr=[[median - p.rate.lo / GIGA], [p.rate.hi / GIGA - median]],
            fmt=MARKERS.get(p.benchmark, "o"),
            color=color,
            markersize=5,
            capsize=2,
            label=p.label,
        )
    ax.set_xlim(x[0], x[-1])
    plots.plain_log_x(ax, "arithmetic intensity, flop/byte")
    plots.plain_log_y(ax, "GFLOP/s")
    ax.set_title(
        f"{threads_text(compute)} (bandwidth: {threads_text(bandwidth)})",
        loc="left",
        fontweight="bold",
    )
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)


def _figure(roof: Roofline) -> Figure:
    panels = scopes(roof)
    with plots.figure("roofline", 1, len(panels), width=5.2 * len(panels), height=5.6) as (
        fig,
        axes,
    ):
        for ax, (compute, bandwidth) in zip(axes.flat, panels):
            mine = [p for p in roof.points if roof.scope(p.cores) == (compute, bandwidth)]
            _panel(ax, roof, compute, bandwidth, mine)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    return Figure(
        svg,
        "The roofline (Williams, Waterman & Patterson, CACM 2009): attainable GFLOP/s (10^9 "
        "flop/s, log) against arithmetic intensity (flop per byte of memory traffic, log). "
        "Horizontal lines: cpu.peakflops per precision and ISA (solid double, dotted single; "
        "dark: the peak). Diagonals: mem.bandwidth of each level (plateau median [95 % CI]), "
        "up to the peak. Markers: the proxies' median rate with its 95 % CI at the intensity of "
        "their declared compulsory traffic; the line to the left reaches the intensity of the "
        "traffic without reuse.",
    )


def _ceilings_table(roof: Roofline) -> Table:
    rows = []
    compute_threads = roof.compute_threads()
    for compute in compute_threads:
        for c in sorted(
            (c for c in roof.compute if c.threads == compute), key=lambda c: -c.rate.median
        ):
            peak = c is roof.peak(c.precision, compute)
            name = f"{'peak' if peak else 'ceiling'} {ceiling_name(c)}"
            rows.append([name, str(compute), estimate_text(c.rate, "GFLOP/s"), "-", PEAKFLOPS])
    for i, bandwidth in enumerate(roof.bandwidth_threads()):
        compute = compute_threads[min(i, len(compute_threads) - 1)] if compute_threads else None
        for level in roof.levels:
            b = roof.ceiling(level, bandwidth)
            if b is not None:
                rows.append(_bandwidth_row(roof, b, compute))
    return Table(
        ["ceiling", "threads", "median [95 % CI]", "ridge point, flop/byte (double)", "from"],
        rows,
        caption="Compute ceilings (cpu.peakflops, every ISA: the best is the peak) and the "
        "bandwidth of each level (mem.bandwidth: the median of the plateau's point medians for "
        "the best operation, with its 95 % interval). Ridge point: double peak / bandwidth, the "
        "intensity above which the level no longer limits.",
        numeric=(1, 2, 3),
    )


def _bandwidth_row(roof: Roofline, b: BandwidthCeiling, compute: int | None) -> list[str]:
    ridge = None
    if compute is not None:
        ridge = roof.ridge(PROXY_PRECISION, compute, b.level, bandwidth_threads=b.threads)
    sizes = f"{format_size(b.sizes[0])} – {format_size(b.sizes[-1])}"
    return [
        f"bandwidth {b.level}",
        str(b.threads),
        estimate_text(b.rate, "GB/s"),
        "-" if ridge is None else format_number(ridge),
        f"{BANDWIDTH} {b.op}, {len(b.sizes)} working set{'s' * (len(b.sizes) > 1)} {sizes}",
    ]


def points_rows(roof: Roofline) -> list[list[str]]:
    """Per proxy point: label, cores, intensity range, rate, bound, % of bound, limited by."""
    rows = []
    for p in roof.points:
        limit = roof.limit(p)
        rows.append(
            [
                p.label,
                str(p.cores),
                f"{format_number(p.intensity)} ({format_number(p.intensity_low)} without reuse)"
                if p.intensity_low != p.intensity
                else format_number(p.intensity),
                estimate_text(p.rate, "GFLOP/s"),
                "-" if limit is None else f"{format_number(limit[0] / GIGA)} GFLOP/s",
                "-" if limit is None else f"{100 * p.rate.median / limit[0]:.3g} %",
                "-" if limit is None else limit[1],
            ]
        )
    return rows


def _points_table(roof: Roofline) -> Table:
    return Table(
        [
            "proxy point",
            "cores",
            "intensity, flop/byte",
            "measured",
            "bound",
            "% of bound",
            "bound by",
        ],
        points_rows(roof),
        caption="Intensity from the counts each document declares: app.spmv 2 flops per "
        "nonzero over 12 nnz + 20 n + 4 B (CSR, compulsory, Williams et al. SC07), app.madbench "
        "2 npix^3 flops over 24 npix^2 B per bin (W phase, pdgemm), app.sweep 13 flops per cell "
        "and direction over 24 B per cell and iteration. Bound: min(double peak, intensity x "
        "memory bandwidth) at 1 thread for a one-core point, else at all threads.",
        numeric=(1, 2, 3, 4, 5),
    )


@section("roofline", "The roofline", order=37)
def roofline_section(data: RunData) -> list[Block]:
    roof = run_roofline(data)
    if not roof.compute and not roof.points:
        return []  # nothing in this run belongs on a roofline (a memory run: see bandwidth)
    blocks: list[Block] = []
    if roof.missing:
        blocks.append(Note(roof.missing, "warning"))
    elif not scopes(roof):
        blocks.append(Note("No thread count was measured by both cpu.peakflops and mem.bandwidth."))
    else:
        blocks.append(_figure(roof))
    if not [level for level in roof.levels if level != MEMORY]:
        blocks.append(
            Note("hwloc reports no caches here: the bandwidth ceilings have no levels.", "warning")
        )
    if roof.compute or roof.bandwidth:
        blocks.append(_ceilings_table(roof))
    if roof.points:
        blocks.append(_points_table(roof))
    return blocks
