"""Against this machine: a profile joined with the stored comm atlas (atlas_join): the verdict
table, and the time per message the program's sends took at each size against the atlas's
one-way ping-pong curve of the link that carried them."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from markupsafe import Markup

from perfatlas.comm.comm_atlas import HIGH, LOW, MEDIAN, UNKNOWN_LINK, CommAtlas
from perfatlas.common.units import format_number, format_size
from perfatlas.profile.analysis_profile import TOP_PAIRS, ProfileFigures, profile_figures
from perfatlas.profile.atlas_join import (
    PAIR_COLUMNS,
    PAIRS_CAPTION,
    AtlasJoin,
    noise_text,
    pair_cells,
)
from perfatlas.profile.figure_text import seconds
from perfatlas.profile.placement_args import whatif_text
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.run_data import RunData


def _table(join: AtlasJoin) -> Table:
    rows = []
    for row in join.rows:
        rows.append(
            [
                f"{row.region}: {row.call}",
                format_number(row.messages),
                format_size(row.bytes),
                ", ".join(row.links) or "-",
                seconds(row.measured_s),
                seconds(row.waiting_s),
                row.predicted_text,
                "-" if row.achieved is None else format_number(row.achieved),
                row.verdict,
                row.evidence,
            ]
        )
    missing = f" The atlas lacks {', '.join(join.missing)}." if join.missing else ""
    return Table(
        [
            "region: traffic",
            "messages or calls",
            "bytes",
            "links",
            "measured",
            "waiting",
            "atlas predicts [95 % CI]",
            "achieved",
            "verdict",
            "evidence",
        ],
        rows,
        caption="Each region's point-to-point traffic and each collective call against what "
        "this machine's comm atlas says it needs: time summed over the ranks; waiting is the "
        "part beyond the least rank's time (LBST); achieved is the atlas's time over the "
        "measured time beyond waiting. Atlas: " + join.sources_text + "." + missing,
        numeric=(1, 2, 4, 5, 6, 7),
    )


def _points(document: dict) -> dict[str, tuple[list[float], list[float]]]:
    """Per link class: (mean size, time per message in the calls that sent it) per bucket."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in document.get("link_traffic") or []:
        if row.get("time_s") is None or not row["messages"]:
            continue
        entry = sums[(row["link"] or UNKNOWN_LINK, row["bucket"])]
        entry[0] += row["messages"]
        entry[1] += row["bytes"]
        entry[2] += row["time_s"]
    points: dict[str, tuple[list[float], list[float]]] = {}
    for (link, _), (messages, volume, time) in sorted(sums.items()):
        sizes, times = points.setdefault(link, ([], []))
        sizes.append(volume / messages)
        times.append(time / messages)
    return points


def _figure(document: dict, atlas: CommAtlas, name: str) -> Figure | None:
    points = _points(document)
    links = [link for link in atlas.pingpong if link in points]
    if not links:
        return None
    with plots.figure(name, width=8.0, height=4.2) as (fig, axes):
        ax = axes[0, 0]
        sizes: list[float] = []
        for i, link in enumerate(links):
            curve = np.array(atlas.pingpong[link], dtype=float)
            color = plots.COLORS[i % 10]
            x = plots.message_x(curve[:, 0])
            micro = curve[:, 1:] * 1e-3
            plots.draw_curves(
                ax,
                [
                    Curve(
                        f"atlas: one-way ping-pong, {link}",
                        x,
                        micro[:, MEDIAN],
                        micro[:, LOW],
                        micro[:, HIGH],
                        color,
                    )
                ],
            )
            own_sizes, own_times = points[link]
            ax.plot(
                plots.message_x(np.array(own_sizes)),
                np.array(own_times) * 1e6,
                linestyle="none",
                marker="D",
                markersize=5,
                color=color,
                markerfacecolor="white",
                label=f"program: time per message in its sends, {link}",
            )
            sizes += [*curve[:, 0], *own_sizes]
        plots.message_size_axis(ax, sizes)
        plots.plain_log_y(ax, "time per message (µs), logarithmic")
        ax.set_title("the program's sends against the atlas", loc="left")
        plots.legend_below(ax, ncol=1)
        fig.tight_layout()
        return Figure(
            plots.to_svg(fig),
            "Time per message in the calls that sent it, per size bucket (at the bucket's mean "
            "size), against the atlas's one-way ping-pong time (median and 95 % CI) on the same "
            "link class; both axes logarithmic, 0 B drawn at the axis' left end. A blocking send "
            "or a Sendrecv holds the transfer (a Sendrecv its receive too); a nonblocking send "
            "returns at once, its transfer is in the Wait that completes it. Across hosts the "
            "class's curve is drawn; a pair of hosts the atlas measured apart (a slow host's "
            "link) is judged on its own, in the table of pairs.",
        )


def whatif_blocks(figures: ProfileFigures) -> list[Block]:
    """The what-if placement, and the launchers' words that apply it (their files written
    beside the profile's by perfatlas profile)."""
    blocks: list[Block] = [Note(whatif_text(figures.whatif))]
    if figures.whatif_launch:
        rows = [
            [w.launcher, w.words, Markup("<pre>{}</pre>").format(w.text) if w.text else ""]
            for w in figures.whatif_launch
        ]
        caption = (
            "How each launcher applies the order; a file is written beside the profile's "
            "files (and this report) by perfatlas profile."
        )
        blocks.append(Table(["launcher", "arguments", "file"], rows, caption=caption))
    return blocks


def against_blocks(stored: dict, run: dict | None = None) -> list[Block]:
    document = stored["document"]
    figures = profile_figures(stored, run)
    join = figures.against
    if join.reason:
        return [Note(f"Not joined with this machine's comm atlas: {join.reason}.")]
    if not join.rows:
        return [Note("The program made no point-to-point or collective call to join.")]
    blocks: list[Block] = [_table(join)]
    figure = _figure(
        document,
        CommAtlas.of_document(document["atlas"]),
        f"profile-{stored.get('id') or 0}-against",
    )
    if figure is not None:
        blocks.append(figure)
    if join.pairs:
        rows = [pair_cells(pair) for pair in join.pairs[:TOP_PAIRS]]
        caption = f"The heaviest pairs against their links: {PAIRS_CAPTION}."
        blocks.append(Table(PAIR_COLUMNS, rows, caption=caption, numeric=(2, 3, 4, 5, 6, 7, 8)))
    if said := noise_text(join.noise):
        blocks.append(Note(said))
    return blocks + whatif_blocks(figures)


@section("profile-against-machine", "MPI profile against this machine", order=81)
def against_section(data: RunData) -> list[Block]:
    return [block for stored in data.profiles for block in against_blocks(stored, data.run)]
