"""app.spmv: per matrix and variant, the model's predicted efficiency (E1 element-wise, E2
replication) against the measured one, with f, r, t_l and t_r; and the node-level CSR kernel
against its roofline bound (perfatlas.app.analysis_spmv)."""

from __future__ import annotations

import math

from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from perfatlas.app import analysis_spmv
from perfatlas.app.analysis_points import Point, points
from perfatlas.app.proxy_figures import optional, ratio_text, scaled_with_ci
from perfatlas.common.units import format_number, format_value
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

MARKERS = "os^vDPX*<>hp"


def _range(values: list[float] | None, digits: int = 3) -> str:
    """'41.2' or '41.2 .. 57.0' over the ranks."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    return (
        format_number(low, digits)
        if format_number(low, digits) == format_number(high, digits)
        else (f"{format_number(low, digits)} .. {format_number(high, digits)}")
    )


def _point_label(p: Point) -> str:
    return f"{analysis_spmv.matrix_name(p.params)}, {analysis_spmv.configuration(p.params)}"


def _efficiency_figure(found: list[Point]) -> Figure | None:
    modelled = [
        (k, v)
        for k, p in enumerate(found)
        for v in analysis_spmv.variants(p)
        if v.predicted and v.measured and v.predicted > 0
    ]
    if not modelled:
        return None
    names = list(dict.fromkeys(v.name for _, v in modelled))
    with plots.figure("spmv-efficiency", width=9.0, height=4.2) as (fig, axes):
        ax = axes[0, 0]
        for k, v in modelled:
            color = plots.COLORS[names.index(v.name) % len(plots.COLORS)]
            m = v.measured
            ax.errorbar(
                [v.predicted],
                [m.median],
                yerr=[[max(m.median - m.ci_lo, 0)], [max(m.ci_hi - m.median, 0)]],
                fmt=MARKERS[k % len(MARKERS)],
                color=color,
                markersize=6,
                capsize=3,
                linewidth=1,
            )
        values = [v.predicted for _, v in modelled] + [
            x for _, v in modelled for x in (v.measured.ci_lo, v.measured.ci_hi) if x > 0
        ]
        low, high = min(values) / 1.5, max(max(values) * 1.5, 1.2)
        ax.plot([low, high], [low, high], color="0.4", linestyle=":", linewidth=1)
        plots.plain_log_x(ax, "predicted efficiency (E1 element-wise, E2 replication)")
        plots.plain_log_y(ax, "measured efficiency (95 % CI)")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        handles = [
            Line2D(
                [],
                [],
                color=plots.COLORS[i % len(plots.COLORS)],
                marker="o",
                linestyle="",
                label=name,
            )
            for i, name in enumerate(names)
        ] + [
            Line2D(
                [],
                [],
                color="0.3",
                marker=MARKERS[k % len(MARKERS)],
                linestyle="",
                label=_point_label(p),
            )
            for k, p in enumerate(found)
            if any(k == j for j, _ in modelled)
        ]
        handles.append(Line2D([], [], color="0.4", linestyle=":", label="identity"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    return Figure(
        svg,
        "Predicted against measured efficiency of each remote variant (color) per matrix and "
        "launch (marker). Predicted: the document's whole-product model with the slowest rank "
        "deciding, E1 = t_l / (t_l + f t_r) for read_element and write_element, E2 = t_l / "
        "(t_l + f t_r / r) for read_replicate and write_combine. Measured: the median time per "
        "product of the variant's baseline (local for A x, local_transposed for A^T x) over the "
        "variant's, each sample the slowest rank's, with a percentile-bootstrap 95 % interval. "
        "On the dotted line the model is exact; above it the variant beats its model.",
    )


def _efficiency_table(found: list[Point]) -> Table:
    rows = []
    for p in found:
        for v in analysis_spmv.variants(p):
            rows.append(
                [
                    v.matrix,
                    v.configuration,
                    f"{v.name} ({v.operation})",
                    v.model or "-",
                    format_number(v.f, 3),
                    optional(v.r),
                    _range(v.t_l_ns),
                    _range(v.t_r_ns) + (f" ({v.t_r_kind})" if v.t_r_ns else ""),
                    optional(v.predicted),
                    optional(v.measured_document),
                    ratio_text(v.measured) if not v.not_measurable else v.not_measurable,
                ]
            )
    return Table(
        [
            "matrix",
            "launch",
            "variant",
            "model",
            "f",
            "r",
            "t_l, ns per nonzero",
            "t_r, ns",
            "predicted",
            "measured (document)",
            "measured [95 % CI]",
        ],
        rows,
        caption="f: remote accesses / nonzeros; r: remote accesses / distinct remote elements "
        "(whole matrix, summed over the ranks; '-' without remote elements). t_l: the baseline's "
        "median time per nonzero, t_r: the median latency of one single-double MPI_Get (reads) "
        "or MPI_Accumulate (writes) + MPI_Win_flush, every rank at once (ranges over the ranks). "
        "Measured (document): the slowest rank's median baseline time over the slowest rank's "
        "median variant time; measured [95 % CI]: the same ratio from the stored samples.",
        numeric=(4, 5, 6, 7, 8, 9, 10),
    )


def _roofline_figure(roofs: list[analysis_spmv.Roofline]) -> Figure | None:
    bounded = [r for r in roofs if r.bandwidth]
    if not bounded:
        return None
    with plots.figure("spmv-roofline", width=9.5, height=4.2) as (fig, axes):
        ax = axes[0, 0]
        lows = [r.intensity[0] for r in bounded]
        highs = [r.intensity[1] for r in bounded]
        x = [min(lows) / 2, max(highs) * 2]
        for i, bandwidth in enumerate(dict.fromkeys(r.bandwidth for r in bounded)):
            ax.plot(
                x,
                [bandwidth * v / 1e9 for v in x],
                color="0.35",
                linestyle=["--", ":", "-."][i % 3],
                linewidth=1.1,
                label=f"bound: {format_value(bandwidth, 'byte/s')} x intensity",
            )
        for k, r in enumerate(bounded):
            color = plots.COLORS[k % len(plots.COLORS)]
            low, high = r.intensity
            rate = r.rate.median / 1e9
            ax.plot(
                [low, high],
                [rate, rate],
                color=color,
                linewidth=2.5,
                solid_capstyle="butt",
                label=f"{r.matrix}, {r.configuration}",
            )
            middle = math.sqrt(low * high)
            ax.errorbar(
                [middle],
                [rate],
                yerr=[[rate - r.rate.ci_lo / 1e9], [r.rate.ci_hi / 1e9 - rate]],
                fmt="none",
                ecolor=color,
                capsize=3,
            )
        plots.plain_log_x(ax, "arithmetic intensity, flop/byte (2 flops per nonzero)")
        ax.xaxis.set_minor_formatter(  # the range is narrow: label 2 and 5 x 10^k too
            FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else "")
        )
        plots.plain_log_y(ax, "CSR GFlop/s")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    per_nonzero = [r.bytes_per_nonzero for r in bounded]
    return Figure(
        svg,
        "Node-level CSR y = A x (threads per rank, all ranks at once) against the memory "
        "roofline. Bytes per product: 8 B value + 4 B column index per nonzero, 8 B y + 4 B row "
        "pointer per row (rows + 1 per rank), and x between 8 B per distinct column a rank touches (perfect reuse: "
        "the right end of a segment) and 8 B per nonzero (no reuse: the left end); "
        f"{_range([b for pair in per_nonzero for b in pair])} bytes per nonzero here; "
        "write-allocate not counted. The measured rate (median, 95 % CI) is drawn across that "
        "range of intensity; a rate above the bound means the matrix and vectors stay in a "
        "cache that the DRAM bandwidth does not describe.",
    )


def _roofline_table(roofs: list[analysis_spmv.Roofline]) -> Table:
    rows = []
    for r in roofs:
        bound, fraction = r.bound, r.fraction_of_bound
        low, high = r.bytes_per_nonzero
        rows.append(
            [
                r.matrix,
                r.configuration,
                scaled_with_ci(r.rate, 1e9, ""),
                f"{format_number(low)} .. {format_number(high)}",
                f"{format_number(r.intensity[0])} .. {format_number(r.intensity[1])}",
                format_value(r.bandwidth, "byte/s") if r.bandwidth else "missing",
                "-"
                if bound is None
                else f"{format_number(bound[0] / 1e9)} .. {format_number(bound[1] / 1e9)}",
                "-"
                if fraction is None
                else f"{format_number(fraction[0])} .. {format_number(fraction[1])}",
                r.bandwidth_source if r.bandwidth else "missing (see the note)",
            ]
        )
    return Table(
        [
            "matrix",
            "launch",
            "CSR GFlop/s [95 % CI]",
            "bytes per nonzero",
            "flop/byte",
            "bandwidth",
            "bound GFlop/s",
            "measured / bound",
            "bandwidth source",
        ],
        rows,
        caption="The CSR kernel's rate against the bound bandwidth x intensity, from the most "
        "bytes (no reuse of x) to the fewest (perfect reuse); measured / bound at the fewest "
        "bytes, then at the most.",
        numeric=(2, 3, 4, 5, 6, 7),
    )


@section("app-spmv", "Irregular SpMV with remote access (app.spmv)", order=61)
def build(data: RunData) -> list[Block] | None:
    found = points(data.results, analysis_spmv.BENCHMARK)
    if not found:
        return None
    blocks: list[Block] = []
    figure = _efficiency_figure(found)
    if figure:
        blocks.append(figure)
    blocks.append(_efficiency_table(found))
    roofs = [r for r in (analysis_spmv.roofline(p) for p in found) if r is not None]
    figure = _roofline_figure(roofs)
    if figure:
        blocks.append(figure)
    missing = [r for r in roofs if not r.bandwidth]
    if missing:
        blocks.append(
            Note(
                "Bandwidth missing for "
                + "; ".join(f"{r.matrix}, {r.configuration}" for r in missing)
                + f": no roofline bound is drawn for them. {missing[0].bandwidth_source}",
                "warning",
            )
        )
    if roofs:
        blocks.append(_roofline_table(roofs))
    return blocks
