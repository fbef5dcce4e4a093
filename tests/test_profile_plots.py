"""The profile section's figures tell the truth (issue 31): the communication matrix's colours
start at 0 and its colour bar reads plain numbers in the cells' unit; the message-size labels never
overlap as drawn; calls that move no bytes stay out of the histogram and are counted apart; no
bars are stacked on a log axis; the per-rank chart has room above its tallest bar. Each figure is
checked on the matplotlib figure the section draws (caught as it becomes SVG), for a document
shaped like the LAMMPS profile that showed the faults and for a real MPI program under
`perfatlas profile`."""

from __future__ import annotations

import copy
import re

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm
from matplotlib.patches import Rectangle
from test_ipm import mpirun_command
from test_profile import profile_document

from perfatlas.launch.native import bin_dir
from perfatlas.profile.section_profile import profile_blocks
from perfatlas.report import plots
from perfatlas.report.blocks import Figure, Note

MIB = 2**20
# Buckets of MPI_Send and MPI_Irecv 1 .. 17 (1 B .. 64 KiB): counts falling from 90000 to 10.
SIZED = [
    {"call": call, "bucket": b, "count": max(10, 90000 // 2 ** (b // 2)), "bytes": 0, "time_s": 0}
    for call in ("MPI_Send", "MPI_Irecv")
    for b in range(1, 18)
]
NO_BYTES = [  # calls that carry no message: bucket 0
    {"call": "MPI_Wtime", "bucket": 0, "count": 50000, "bytes": 0, "time_s": 0.001},
    {"call": "MPI_Comm_size", "bucket": 0, "count": 4, "bytes": 0, "time_s": 1e-6},
    {"call": "read", "bucket": 0, "count": 2, "bytes": 0, "time_s": 1e-6},
    {"call": "MPI_Waitall", "bucket": 0, "count": 900, "bytes": 0, "time_s": 0.01},
]


def lammps_like() -> dict:
    """Two ranks that send each other 178.2 and 178.3 MiB, many message sizes, many calls
    without a message; both ranks 1 s tall, rank 0's top part (LBST) empty (the test document's
    ranks)."""
    document = copy.deepcopy(profile_document())
    document["matrix"]["bytes"] = [[0, round(178.2 * MIB)], [round(178.3 * MIB), 0]]
    document["matrix"]["messages"] = [[0, 5000], [5001, 0]]
    document["histogram"] = SIZED + NO_BYTES
    return document


@pytest.fixture
def caught(monkeypatch) -> list:
    """The matplotlib figures drawn from here on, each as it was saved as SVG, in order."""
    figures = []
    to_svg = plots.to_svg

    def catch(fig):
        svg = to_svg(fig)  # as saved: the layout the SVG has
        figures.append(fig)
        return svg

    monkeypatch.setattr(plots, "to_svg", catch)
    return figures


@pytest.fixture
def drawn(caught):
    """draw(document) -> (blocks, figures) of the profile section for one profile document."""

    def draw(document: dict):
        caught.clear()
        return profile_blocks({"id": 1, "document": document}), list(caught)

    return draw


def axes_titled(figures, title: str):
    found = [ax for fig in figures for ax in fig.axes if ax.get_title(loc="left") == title]
    assert len(found) == 1, f"{len(found)} axes titled {title!r}"
    return found[0]


def caption_of(blocks, text: str) -> str:
    (caption,) = [b.caption for b in blocks if isinstance(b, Figure) and text in b.caption]
    return caption


def figures_text(blocks) -> str:
    return " ".join(b.svg for b in blocks if isinstance(b, Figure))


def bars(ax) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def tick_texts(axis) -> list[str]:
    return [label.get_text() for label in axis.get_ticklabels() if label.get_text()]


def drawn_again(fig):
    """The figure drawn as it was saved (a closed figure gets a canvas again): its renderer."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def assert_labels_apart(ax) -> None:
    """No two drawn x tick labels overlap: their boxes as the renderer lays them out."""
    renderer = drawn_again(ax.figure)
    labels = [label for label in ax.get_xticklabels() if label.get_visible() and label.get_text()]
    assert labels, "no tick labels"
    boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.x0)
    for a, b in zip(boxes, boxes[1:]):
        assert not a.overlaps(b), f"labels overlap: {a} and {b}"


def colour_bar_of(ax):
    (image,) = ax.get_images()
    return image, image.colorbar


def assert_plain_colour_bar(bar) -> None:
    drawn_again(bar.ax.figure)
    assert bar.ax.yaxis.get_offset_text().get_text() == "", "an offset or exponent on the bar"
    texts = tick_texts(bar.ax.yaxis)
    assert texts and all(re.fullmatch(r"\d+(\.\d+)?[KMG]?", t) for t in texts), texts


def assert_no_stack_on_a_log_axis(figures) -> None:
    for ax in (ax for fig in figures for ax in fig.axes):
        if ax.get_yscale() in ("log", "symlog"):
            assert all(bar.get_y() == 0 for bar in bars(ax)), "a bar stacked on a log axis"
        if ax.get_xscale() in ("log", "symlog"):  # horizontal bars: each from the axis too
            assert all(bar.get_x() == 0 for bar in bars(ax)), "a bar stacked on a log axis"


# -- the communication matrix -------------------------------------------------------------------
def test_the_matrix_colours_start_at_0_with_plain_ticks_in_mib(drawn):
    blocks, figures = drawn(lammps_like())
    image, bar = colour_bar_of(axes_titled(figures, "communication matrix"))
    assert not isinstance(image.norm, LogNorm)
    assert image.norm.vmin == 0 and image.norm.vmax == pytest.approx(178.3, abs=0.01)
    assert image.norm(178.2) > 0.99  # near-equal cells, near-equal colours
    assert bar.ax.get_ylabel() == "bytes sent (MiB)"
    assert_plain_colour_bar(bar)
    assert set(tick_texts(bar.ax.yaxis)) >= {"0", "50", "100", "150"}
    caption = caption_of(blocks, "Left: bytes")
    assert "colour from 0 to the largest (178.3 MiB)" in caption
    assert "178.2 MiB" in figures_text(blocks)  # the cells say their figure


def test_a_matrix_spanning_decades_says_its_log_scale_and_labels_sizes(drawn):
    document = lammps_like()
    document["matrix"]["bytes"] = [[0, 3 * 2**30], [512, 0]]
    blocks, figures = drawn(document)
    image, bar = colour_bar_of(axes_titled(figures, "communication matrix"))
    assert isinstance(image.norm, LogNorm)
    assert_plain_colour_bar(bar)
    assert "1K" in tick_texts(bar.ax.yaxis) and "1G" in tick_texts(bar.ax.yaxis)
    assert (
        "colour on a logarithmic scale from the smallest sent (512 B) to the largest (3 GiB)"
        in caption_of(blocks, "Left: bytes")
    )


# -- the message-size histogram -----------------------------------------------------------------
@pytest.mark.parametrize("last", [6, 17, 40])
def test_the_size_labels_never_overlap_as_drawn(drawn, last):
    document = lammps_like()
    document["histogram"] = [e for e in SIZED if e["bucket"] <= last] + [
        {"call": "MPI_Bcast", "bucket": b, "count": 5, "bytes": 0, "time_s": 0}
        for b in range(18, last + 1)
    ]
    _, figures = drawn(document)
    ax = axes_titled(figures, "message sizes")
    assert_labels_apart(ax)
    shown = tick_texts(ax.xaxis)
    assert shown[0] == "1" and len(shown) >= min(last, 8), shown  # thinned only as needed
    marks = {*ax.get_xticks(), *ax.get_xticks(minor=True)}
    assert marks == set(range(last))  # a thinned axis keeps every bucket's tick mark


def test_calls_without_bytes_stay_out_of_the_histogram_and_are_counted(drawn):
    blocks, figures = drawn(lammps_like())
    ax = axes_titled(figures, "message sizes")
    assert "0" not in tick_texts(ax.xaxis)
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == ["MPI_Send", "MPI_Irecv"]  # no MPI_Wtime, MPI_Comm_size, read, MPI_Waitall
    assert sum(bar.get_height() for bar in bars(ax)) == sum(e["count"] for e in SIZED)
    assert (
        "50906 calls (MPI_Wtime 50000, MPI_Waitall 900, MPI_Comm_size 4 and 1 more call) moved "
        "no bytes (no message, or an empty one): they are left out of the histogram."
        in caption_of(blocks, "Message-size histogram")
    )


def test_a_profile_whose_calls_move_no_bytes_says_so_without_a_histogram(drawn):
    document = lammps_like()
    document["matrix"] = None
    document["histogram"] = NO_BYTES
    blocks, figures = drawn(document)
    assert not [ax for fig in figures for ax in fig.axes if ax.get_title(loc="left")]
    (note,) = [b for b in blocks if isinstance(b, Note) and "No call moved bytes" in b.text]
    assert "50906 calls (MPI_Wtime 50000" in note.text


def test_counts_spanning_decades_are_side_by_side_on_a_log_axis(drawn):
    _, figures = drawn(lammps_like())  # 90000 down to 10 calls a bucket
    ax = axes_titled(figures, "message sizes")
    assert ax.get_yscale() == "log"
    assert_no_stack_on_a_log_axis(figures)
    # side by side: no two bars share any width
    spans = sorted((bar.get_x(), bar.get_x() + bar.get_width()) for bar in bars(ax))
    assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
    assert all(re.fullmatch(r"[\d,]+", t) for t in tick_texts(ax.yaxis))


def test_counts_of_one_order_are_stacked_on_a_linear_axis(drawn):
    document = lammps_like()
    document["histogram"] = [dict(e, count=100 + e["bucket"]) for e in SIZED] + NO_BYTES
    _, figures = drawn(document)
    ax = axes_titled(figures, "message sizes")
    assert ax.get_yscale() == "linear" and any(bar.get_y() > 0 for bar in bars(ax))
    assert_no_stack_on_a_log_axis(figures)


# -- the per-rank chart -------------------------------------------------------------------------
def test_the_per_rank_chart_has_room_above_its_tallest_bar(drawn):
    _, figures = drawn(lammps_like())  # rank 0: 1 s tall, its top part (LBST) empty
    (ax,) = [ax for fig in figures for ax in fig.axes if ax.get_xlabel().startswith("rank")]
    tallest = max(bar.get_y() + bar.get_height() for bar in bars(ax))
    assert tallest == pytest.approx(1.0)
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] > 1.03 * tallest


# -- for real: an MPI program under perfatlas profile -------------------------------------------
def test_a_real_profile_draws_truthful_figures(cli, tmp_path, caught):
    """pa-comm-pingpong from 0 bytes to 1 MiB: 22 size buckets, empty messages, barriers."""
    pingpong = [str(bin_dir() / "pa-comm-pingpong"), "min_bytes=0", "max_bytes=1MiB"]
    quick = ["samples=3", "time_limit=20ms", "warmup_time=1ms", f"json={tmp_path / 'pp.json'}"]
    out = tmp_path / "out"
    result = cli("profile", "--out", str(out), "--", *mpirun_command(), *pingpong, *quick)
    assert result.code == 0, result.err
    image, bar = colour_bar_of(axes_titled(caught, "communication matrix"))
    assert image.norm.vmin == 0 or isinstance(image.norm, LogNorm)
    assert_plain_colour_bar(bar)
    sizes = axes_titled(caught, "message sizes")
    assert_labels_apart(sizes)
    assert "0" not in tick_texts(sizes.xaxis)
    assert_no_stack_on_a_log_axis(caught)
    (ranks,) = [ax for fig in caught for ax in fig.axes if ax.get_xlabel().startswith("rank")]
    assert ranks.get_ylim()[1] > max(bar.get_y() + bar.get_height() for bar in bars(ranks))
    html = (out / "report.html").read_text()
    assert re.search(r"\d+ calls \(MPI_\w+ \d+, [^)]*\) moved no bytes", html), "not counted"
