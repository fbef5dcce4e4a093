"""Shared plot helpers: one look for every figure, working-set axes, CI bands, inline SVG output."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")  # no display: figures only ever become SVG text

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    FuncFormatter,
    NullFormatter,
    NullLocator,
    ScalarFormatter,
)

from perfatlas.machine.caches import Cache  # noqa: E402
from perfatlas.report.series import Curve  # noqa: E402

COLORS = plt.get_cmap("tab10").colors
STYLE = {
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.labelsize": 8.5,
    "legend.fontsize": 7.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.6,
    "svg.fonttype": "none",  # text stays text: smaller, selectable, rendered by the browser
    "font.family": "sans-serif",
}


@contextmanager
def figure(
    name: str,
    nrows: int = 1,
    ncols: int = 1,
    width: float = 9.5,
    height: float = 4.0,
    **subplot_args,
) -> Iterator[tuple[Figure, np.ndarray]]:
    """A figure in the report's style; `name` salts the SVG ids so figures never share an id."""
    with plt.rc_context({**STYLE, "svg.hashsalt": name}):
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(width, height), squeeze=False, **subplot_args
        )
        try:
            yield fig, axes
        finally:
            plt.close(fig)


def to_svg(fig: Figure) -> str:
    """The figure as an inline <svg> element (no XML prolog, no timestamp), cropped to what is
    drawn. The crop is measured with the renderer the figure's layout already used: savefig's
    own bbox_inches="tight" would first draw the whole figure once more to measure it."""
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    # Laid out already: tight_layout leaves an engine that does nothing but make savefig draw.
    fig.set_layout_engine(None)
    buffer = io.StringIO()
    crop = drawn.padded(matplotlib.rcParams["savefig.pad_inches"])
    fig.savefig(buffer, format="svg", bbox_inches=crop, metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def warm_up() -> None:
    """Draw one small figure with every kind of text a report's figures have (tick labels, axis
    label, legend): what a process's first figure pays once (fonts, text metrics, the SVG
    writer) is then paid here, ahead of the first report."""
    with figure("warm-up", width=2.0, height=1.5) as (fig, axes):
        axes[0, 0].bar([0, 1], [1, 2], label="warm-up")
        axes[0, 0].set_xlabel("warm-up")
        axes[0, 0].legend()
        fig.tight_layout()
        to_svg(fig)


def size_label(n_bytes: float) -> str:
    """Compact binary size for tick labels: 4K, 512K, 32M, 1G."""
    for unit, factor in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n_bytes >= factor:
            return f"{n_bytes / factor:g}{unit}"
    return f"{n_bytes:g}"


def size_axis(
    ax: Axes,
    sizes: Sequence[float],
    label: str = "working set (K, M, G = KiB, MiB, GiB)",
    max_ticks: int = 12,
) -> None:
    """log2 x axis with ticks at powers of two, at most `max_ticks` of them."""
    low, high = min(sizes), max(sizes)
    first, last = math.floor(math.log2(low)), math.ceil(math.log2(high))
    step = max(1, math.ceil((last - first + 1) / max_ticks))
    ticks = [2.0**e for e in range(first, last + 1) if (e - first) % step == 0]
    ax.set_xscale("log", base=2)
    ax.set_xlim(low / 1.15, high * 1.15)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_label(v)))
    ax.set_xlabel(label)


ZERO_BYTES_AT = 0.5  # where a 0-byte message sits on a log2 message-size axis


def message_x(sizes: np.ndarray) -> np.ndarray:
    """Message sizes as drawn on message_size_axis: 0 bytes at ZERO_BYTES_AT."""
    return np.where(sizes > 0, sizes, ZERO_BYTES_AT)


def message_size_axis(ax: Axes, sizes: Sequence[float]) -> None:
    """size_axis for message sizes in bytes, 0 B drawn at ZERO_BYTES_AT and labelled 0."""
    size_axis(ax, [float(s) for s in message_x(np.array(sizes, dtype=float))], "message size")
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda v, _: "0" if v < 1 else size_label(v) + ("" if v >= 1024 else "B"))
    )


def plain_log_y(ax: Axes, label: str) -> None:
    """log y axis with plain numbers (1, 2, 5, 10, 20 ...) instead of powers of ten."""
    ax.set_yscale("log")
    formatter = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(formatter)
    ax.yaxis.set_minor_formatter(
        FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else "")
    )
    ax.set_ylabel(label)


def draw_curves(ax: Axes, curves: Sequence[Curve], band: bool = True) -> None:
    """Lines through the medians, a shaded band from ci_lo to ci_hi (the 95 % CI)."""
    for i, curve in enumerate(curves):
        color = curve.color or COLORS[i % len(COLORS)]
        if band:
            ax.fill_between(curve.x, curve.ci_lo, curve.ci_hi, color=color, alpha=0.22, lw=0)
        ax.plot(
            curve.x,
            curve.median,
            color=color,
            linestyle=curve.linestyle,
            marker=curve.marker,
            markersize=2.8,
            linewidth=1.2,
            label=curve.label,
        )


def draw_error_bars(ax: Axes, curves: Sequence[Curve]) -> None:
    """Points with 95 % CI error bars (for few points, where a band would mislead)."""
    for i, curve in enumerate(curves):
        color = curve.color or COLORS[i % len(COLORS)]
        errors = np.vstack([curve.median - curve.ci_lo, curve.ci_hi - curve.median])
        ax.errorbar(
            curve.x,
            curve.median,
            yerr=np.clip(errors, 0, None),
            color=color,
            linestyle=curve.linestyle,
            marker=curve.marker,
            markersize=3.5,
            linewidth=1.2,
            capsize=3,
            label=curve.label,
        )


def mark_caches(ax: Axes, caches: Sequence[Cache], label: bool = True) -> None:
    """hwloc's cache sizes: grey solid vertical lines, named at the top of the axes."""
    low, high = ax.get_xlim()
    for cache in caches:
        if not low <= cache.size_bytes <= high:
            continue
        ax.axvline(cache.size_bytes, color="0.55", linewidth=2.2, alpha=0.35, zorder=0)
        if label:
            ax.text(
                cache.size_bytes,
                0.98,
                f"hwloc {cache.name} {size_label(cache.size_bytes)}",
                transform=ax.get_xaxis_transform(),
                fontsize=7,
                color="0.3",
                rotation=90,
                va="top",
                ha="right",
                bbox={"facecolor": "white", "alpha": 0.7, "pad": 0.6, "linewidth": 0},
            )


def legend_below(ax: Axes, ncol: int = 3) -> None:
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=ncol, frameon=False)


def line_handle(color, linestyle: str, label: str) -> Line2D:
    """A legend entry for a figure-wide legend (small multiples share one)."""
    return Line2D([], [], color=color, linestyle=linestyle, marker="o", markersize=3, label=label)


def draw_bars(
    ax: Axes,
    labels: Sequence[str],
    medians: Sequence[float],
    ci_lo: Sequence[float],
    ci_hi: Sequence[float],
    colors: Sequence,
) -> None:
    """One bar per figure with its 95 % CI as an error bar, labelled underneath."""
    positions = np.arange(len(labels))
    medians = np.asarray(medians, dtype=float)
    errors = np.vstack([medians - np.asarray(ci_lo), np.asarray(ci_hi) - medians])
    ax.bar(positions, medians, color=colors, alpha=0.8, width=0.7)
    ax.errorbar(
        positions, medians, yerr=np.clip(errors, 0, None), fmt="none", ecolor="0.2", capsize=4
    )
    ax.set_xticks(positions, labels)
    ax.grid(axis="x", visible=False)


def plain_log_x(ax: Axes, label: str) -> None:
    """log x axis with plain numbers (1, 10, 100 ...) instead of powers of ten."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label)


def draw_stacked_bars(
    ax: Axes,
    labels: Sequence[str],
    parts: dict[str, Sequence[float]],
    colors: Sequence,
    horizontal: bool = False,
) -> None:
    """One bar per label made of parts stacked in the order of `parts` (name -> value per bar),
    each part in its color and named in the legend. The value axis starts at 0 and leaves the
    axes' margin above the tallest stack; keep it linear (stacks on a log axis misdraw equal
    parts as unequal: draw_grouped_bars draws those)."""
    positions = np.arange(len(labels))
    base = np.zeros(len(labels))
    for (name, values), color in zip(parts.items(), colors):
        values = np.asarray(values, dtype=float)
        if horizontal:
            bars = ax.barh(positions, values, left=base, height=0.7, color=color, label=name)
        else:
            bars = ax.bar(positions, values, bottom=base, width=0.7, color=color, label=name)
        if base.any():  # a part resting on another: its base is no edge of the axis, so that
            for bar in bars:  # an empty top part (LBST 0) does not stop the axis at the stack
                bar.sticky_edges.x.clear()
                bar.sticky_edges.y.clear()
        base += values
    step = max(1, math.ceil(len(labels) / 40))  # at most 40 labels on the axis
    shown = positions[::step], [labels[i] for i in positions[::step]]
    if horizontal:
        ax.set_yticks(*shown)
        ax.invert_yaxis()  # the first label on top
        ax.grid(axis="y", visible=False)
    else:
        ax.set_xticks(*shown)
        ax.grid(axis="x", visible=False)


def draw_grouped_bars(
    ax: Axes,
    labels: Sequence[str],
    parts: dict[str, Sequence[float]],
    colors: Sequence,
    log: bool = False,
) -> None:
    """One group per label: the parts with a value there side by side, each bar standing on the
    axis (none stacked, so a log value axis draws them truthfully), in the order of `parts`, in
    its color and named in the legend. All bars have the width that lets the fullest group fit
    its slot. `log`: a log value axis with plain tick labels (1, 10, 100, 1,000)."""
    positions = np.arange(len(labels))
    present = [[name for name, values in parts.items() if values[i]] for i in positions]
    width = 0.8 / max(1, max(map(len, present)))
    for (name, values), color in zip(parts.items(), colors):
        xs, heights = [], []
        for i, value in enumerate(values):
            if value:
                here = present[i]
                xs.append(i + (here.index(name) - (len(here) - 1) / 2) * width)
                heights.append(value)
        ax.bar(xs, heights, width=width, color=color, label=name)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.5)  # a bar of 1 still shows
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else ""))
        ax.yaxis.set_minor_formatter(NullFormatter())
    step = max(1, math.ceil(len(labels) / 40))  # at most 40 labels on the axis
    ax.set_xticks(positions[::step], [labels[i] for i in positions[::step]])
    ax.grid(axis="x", visible=False)


def spread_tick_labels(fig: Figure, ax: Axes, gap: float = 0.5) -> None:
    """The x tick labels never overlap, measured as drawn (the renderer's box of each label): as
    they are where they fit, else turned upright, and where even those collide, only every
    second, third ... label is named (each position keeps its tick mark). `gap`: the least
    space between two labels, in font sizes. Call it after the figure's layout
    (fig.tight_layout()); it lays the figure out again after a turn."""
    renderer = fig.canvas.get_renderer()

    def collide() -> bool:
        labels = [label for label in ax.get_xticklabels() if label.get_text()]
        if not labels:
            return False
        pad = gap * labels[0].get_fontsize() * fig.dpi / 72
        boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.x0)
        return any(a.x1 + pad > b.x0 for a, b in zip(boxes, boxes[1:]))

    if not collide():
        return
    ax.tick_params(axis="x", labelrotation=90)
    fig.tight_layout()
    locations = list(ax.get_xticks())
    names = [label.get_text() for label in ax.get_xticklabels()]
    step = 1
    while collide() and step < len(locations):
        step += 1
        ax.set_xticks(locations[::step], names[::step])
        ax.set_xticks(locations, minor=True)
    fig.tight_layout()


def draw_heatmap(
    fig: Figure,
    ax: Axes,
    matrix: Sequence[Sequence[float]],
    label: str,
    annotate=None,
    *,
    zero: bool = False,
) -> AxesImage:
    """A matrix as colored cells (row i from the top, column j), zero cells left blank, with a
    color bar; a logarithmic scale when the non-zero values span more than a factor of 100.
    A linear scale runs from the smallest cell to the largest, or from 0 with `zero` (so that
    two near-equal cells look near-equal), its color bar labelled in plain numbers (no offset,
    no exponent). `annotate(value) -> str` writes each non-zero value in its cell (small
    matrices). Returns the image: its `norm` is the scale, its `colorbar` the bar."""
    values = np.asarray(matrix, dtype=float)
    positive = values[values > 0]
    wide = positive.size and positive.max() > 100 * positive.min()
    if wide:
        norm = LogNorm(positive.min(), positive.max())
    elif zero:
        norm = Normalize(0.0, positive.max() if positive.size else 1.0)
    else:
        norm = None
    image = ax.imshow(np.ma.masked_less_equal(values, 0), cmap="viridis", norm=norm)
    bar = fig.colorbar(image, ax=ax, label=label, shrink=0.85)
    if not wide:
        plain = ScalarFormatter(useOffset=False)
        plain.set_scientific(False)
        bar.formatter = plain
        bar.update_ticks()
    ax.grid(False)
    n_rows, n_columns = values.shape
    for axis, n in ((ax.xaxis, n_columns), (ax.yaxis, n_rows)):
        axis.set_major_locator(FixedLocator(range(0, n, max(1, math.ceil(n / 32)))))
    if annotate is not None:
        for (row, column), value in np.ndenumerate(values):
            if value > 0:  # dark text on viridis' light (yellow, green) end, white on its dark end
                light = image.norm(value) > 0.6
                color = "black" if light else "white"
                ax.text(
                    column, row, annotate(value), ha="center", va="center", fontsize=7, color=color
                )
    return image
