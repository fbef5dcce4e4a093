"""MPI point-to-point: ping-pong latency and bandwidth vs message size, per direction and link."""

from __future__ import annotations

import numpy as np

from perfatlas.comm.series_comm import (
    PINGPONG,
    pingpong_figures,
    pingpong_series,
    placement_details,
    ranks_context,
)
from perfatlas.common.units import format_number, format_size
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Table
from perfatlas.report.cells import few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve, Series
from perfatlas.store.run_data import RunData

GB = 1e9


def _style(series: Series, index: int) -> dict:
    direction, link = series.key[0], series.key[1]
    return {
        "color": plots.COLORS[index % 10],
        "linestyle": "-" if direction == "uni" else "--",
        "marker": "o" if link == "intra-node" else "s",
    }


def _curve(series: Series, scale: float, index: int) -> Curve:
    c = series.curve(scale, **_style(series, index))
    return Curve(
        c.label, plots.message_x(c.x), c.median, c.ci_lo, c.ci_hi, c.color, c.linestyle, c.marker
    )


def _figure(latency: list[Series], bandwidth: list[Series]) -> str:
    keys = list(dict.fromkeys(s.key for s in [*latency, *bandwidth]))
    with plots.figure("comm-pingpong", 1, 2, width=10.5, height=4.2) as (fig, axes):
        ax = axes[0, 0]
        plots.draw_curves(ax, [_curve(s, 1e-3, keys.index(s.key)) for s in latency])
        plots.message_size_axis(ax, [x for s in latency for x in s.sizes])
        plots.plain_log_y(ax, "latency (µs), median and 95 % CI")
        ax.set_title("latency (half round trip; bi: one exchange)", loc="left")
        ax = axes[0, 1]
        if bandwidth:
            plots.draw_curves(ax, [_curve(s, 1 / GB, keys.index(s.key)) for s in bandwidth])
            plots.message_size_axis(ax, [x for s in bandwidth for x in s.sizes])
            plots.plain_log_y(ax, "bandwidth (GB/s = 10^9 byte/s)")
        ax.set_title("bandwidth (window of nonblocking sends)", loc="left")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=1,
            frameon=False,
            bbox_to_anchor=(0.5, -0.02 - 0.045 * len(labels)),
        )
        fig.tight_layout()
        return plots.to_svg(fig)


def _histogram_figure(latency: list[Series]) -> str | None:
    """The per-iteration latency distribution of each line's smallest message."""
    shown = []
    for s in latency:
        h = (
            (s.results[0].document.get("derived") or {})
            .get("latency", {})
            .get("iteration_histogram")
        )
        if h and h.get("counts"):
            shown.append((s, h))
    if not shown:
        return None
    with plots.figure("comm-pingpong-histogram", height=3.0, width=9.5) as (fig, axes):
        ax = axes[0, 0]
        for i, (s, h) in enumerate(shown):
            k = h["bins_per_doubling"]
            edges = h["scale"] * 2.0 ** ((h["first_bin"] + np.arange(len(h["counts"]) + 1)) / k)
            counts = np.asarray(h["counts"], dtype=float)
            ax.stairs(
                counts / counts.sum(),
                edges / 1e3,
                color=plots.COLORS[i % 10],
                label=f"{s.label}, {format_size(s.results[0].params['bytes'])}",
            )
        plots.plain_log_x(ax, "one iteration's latency (µs)")
        ax.set_yscale("log")
        ax.set_ylabel("fraction of iterations")
        plots.legend_below(ax, ncol=1)
        return plots.to_svg(fig)


def _headline_rows(data: RunData) -> list[list[str]]:
    rows = []
    for f in pingpong_figures(data):
        small = f.smallest
        rows.append(
            [
                f.label,
                f"{format_size(small.params['bytes'])}: {value_with_ci(small, 1e-3, 'µs')}"
                if small
                else "-",
                f"{format_number(small.min * 1e-3)} µs" if small else "-",
                f"{value_with_ci(f.peak, 1 / GB, 'GB/s')} at {format_size(f.peak.params['bytes'])}"
                if f.peak
                else "-",
                format_size(f.half_peak_bytes) if f.half_peak_bytes is not None else "-",
            ]
        )
    return rows


def _all_rows(latency: list[Series], bandwidth: list[Series]) -> list[list[str]]:
    by_key = {(s.key, r.params["bytes"]): r for s in bandwidth for r in s.results}
    rows = []
    for s in latency:
        for r in s.results:
            bw = by_key.get((s.key, r.params["bytes"]))
            window = (
                ((bw.document.get("derived") or {}).get("bandwidth") or {}).get("window")
                if bw
                else None
            )
            rows.append(
                [
                    s.label,
                    format_size(r.params["bytes"]),
                    value_with_ci(r, 1e-3, "µs"),
                    f"{format_number(r.min * 1e-3)} µs",
                    value_with_ci(bw, 1 / GB, "GB/s") if bw else "-",
                    str(window or "-"),
                    f"{r.n}" + (f" / {bw.n}" if bw else ""),
                ]
            )
    return rows


def _context(series: list[Series]) -> Table:
    rows = []
    for s in series:
        r = s.results[0]
        latency = (r.document.get("derived") or {}).get("latency") or {}
        rows.append(
            [
                s.label,
                ranks_context(r, [0, int(r.params.get("peer", 1))])
                + f" · {latency.get('iterations_per_sample', '?')} iterations per sample at "
                f"{format_size(r.params['bytes'])} · {r.n} samples/point",
            ]
        )
    return Table(
        ["line", "context (read back from the ranks)"],
        rows,
        caption="Where each line ran: host and CPU set each rank reported, the CPU it ran on, "
        "and the sampling.",
    )


@section("comm-pointtopoint", "MPI point-to-point", order=50)
def pointtopoint_section(data: RunData) -> list[Block]:
    latency = pingpong_series(data, "latency_ns")
    bandwidth = pingpong_series(data, "bandwidth_Bps")
    if not latency and not bandwidth:
        return []
    results = data.measured(PINGPONG)
    blocks: list[Block] = [note] if (note := few_samples_note(results)) else []
    blocks.append(
        Figure(
            _figure(latency, bandwidth),
            "Ping-pong between rank 0 and its peer (OSU method): latency is half the round "
            "trip (unidirectional, solid) or one simultaneous exchange (bidirectional, dashed); "
            "bandwidth keeps a window of nonblocking sends in flight (bidirectional counts both "
            "directions). Circles: intra-node; squares: inter-node, from the host names the "
            "ranks reported. Each sample is a batch of iterations; bands are 95 % CIs of the "
            "median. The 0-byte message is drawn at the left edge.",
        )
    )
    blocks.append(
        Table(
            [
                "line",
                "smallest message: latency [95 % CI]",
                "fastest sample",
                "peak bandwidth [95 % CI]",
                "n½ (half of peak)",
            ],
            _headline_rows(data),
            numeric=(1, 2, 3, 4),
            caption="Headline figures; the fastest sample is a minimum, labelled as such.",
        )
    )
    histogram = _histogram_figure(latency)
    if histogram:
        blocks.append(
            Figure(
                histogram,
                "Every iteration's latency is kept in a histogram (4 bins per doubling): the "
                "distribution behind the medians, its tail included.",
            )
        )
    blocks.append(_context(latency or bandwidth))
    if placement := placement_details(results):
        blocks.append(placement)
    blocks.append(
        Details(
            "All ping-pong figures",
            [
                Table(
                    [
                        "line",
                        "message",
                        "latency [95 % CI]",
                        "fastest sample",
                        "bandwidth [95 % CI]",
                        "window",
                        "n",
                    ],
                    _all_rows(latency, bandwidth),
                    numeric=(1, 2, 3, 4, 5, 6),
                )
            ],
        )
    )
    return blocks
