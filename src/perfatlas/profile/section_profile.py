"""MPI profile (perfatlas-ipm, docs/profile.md): where the time of each region and rank went
(CALC / MPI / I/O / LBST, as the IPM and MADbench papers draw it), the top calls and call sites,
who sent how much to whom, and the message sizes."""

from __future__ import annotations

import math

from markupsafe import Markup
from matplotlib.colors import LogNorm
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from perfatlas.common.units import format_size
from perfatlas.profile.analysis_profile import (
    CATEGORY_LABELS,
    TOP_CALLS,
    TOP_SITES,
    CallFigures,
    CallSites,
    ProfileFigures,
    RegionFigures,
    Traffic,
    overview_facts,
    percent,
    profile_figures,
    seconds,
)
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Facts, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

# The colours of the four categories (CATEGORY_LABELS), in stacking order.
CATEGORY_COLORS = ["#59a14f", plots.COLORS[0], plots.COLORS[1], plots.COLORS[3]]
HISTOGRAM_CALLS = 7  # calls named in the histogram; the rest are "other"


def _category_parts(rows: list, figure) -> dict[str, list[float]]:
    """CALC/MPI/I-O/LBST per row; an unknown figure (LBST of a partial profile) counts 0."""
    return {
        label: [figure(row, key) or 0.0 for row in rows] for key, label in CATEGORY_LABELS.items()
    }


def _regions_figure(
    regions: list[RegionFigures], lbst_method: str | None, name: str
) -> Figure | None:
    if not regions:
        return None
    with plots.figure(name, width=9.5, height=1.4 + 0.32 * len(regions)) as (fig, axes):
        ax = axes[0, 0]
        average = _category_parts(regions, lambda region, key: region.average_s[key])
        plots.draw_stacked_bars(
            ax, [r.label for r in regions], average, CATEGORY_COLORS, horizontal=True
        )
        ax.set_xlabel("seconds per rank (average over the ranks in the region)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    return Figure(
        svg,
        "Time per region, averaged over the ranks that entered it; a region includes its "
        "nested regions. CALC: outside MPI and I/O; MPI: inside MPI calls, less LBST; I/O: "
        "POSIX I/O on the program's files and MPI-IO; LBST (load imbalance and "
        f"synchronization): {lbst_method or 'not given'}.",
    )


def _ranks_figure(document: dict, name: str) -> Figure | None:
    ranks = [r for r in document["ranks"] if r["wall_s"] is not None]
    if not ranks:
        return None
    with plots.figure(name, width=9.5, height=3.2) as (fig, axes):
        ax = axes[0, 0]
        parts = _category_parts(ranks, lambda rank, key: rank[key])
        plots.draw_stacked_bars(ax, [str(r["rank"]) for r in ranks], parts, CATEGORY_COLORS)
        ax.set_xlabel("rank (MPI_COMM_WORLD)")
        ax.set_ylabel("seconds")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    walls = [r["wall_s"] for r in ranks]
    calc = [r["calc_s"] for r in ranks if r["calc_s"] is not None]
    spread = f"; CALC ranges {seconds(min(calc))} .. {seconds(max(calc))}" if calc else ""
    return Figure(
        svg,
        "Per-rank imbalance: each rank's wallclock split into CALC, MPI, I/O and LBST. "
        f"Wallclock ranges {seconds(min(walls))} .. {seconds(max(walls))}{spread}; ranks that "
        "computed less wait longer (LBST) in the collectives that follow.",
    )


def _calls_rows(calls: list[CallFigures]) -> list[list[str]]:
    return [
        [
            call.call,
            call.region_label,
            call.category,
            seconds(call.time_s["sum"]),
            percent(call.of_wall),
            f"{seconds(call.time_s['min'])} .. {seconds(call.time_s['max'])}",
            str(call.count),
            format_size(call.bytes),
            str(call.ranks),
            seconds(call.lbst_s),
        ]
        for call in calls
    ]


def _calls_tables(calls: list[CallFigures]) -> list[Block]:
    rows = _calls_rows(calls)
    if not rows:
        return [Note("No MPI or I/O call was recorded.")]
    columns = [
        "call",
        "region",
        "category",
        "time (sum over ranks)",
        "% of wall",
        "per rank min .. max",
        "count",
        "bytes",
        "ranks",
        "LBST",
    ]
    first = f" (the first {TOP_CALLS})" if len(rows) > TOP_CALLS else ""
    caption = (
        f"Top calls by time{first}: a call's figures are those of its region itself, not of its "
        "nested regions; % of wall is of all ranks' wallclock summed; bytes as the call's buffer "
        "describes them."
    )
    return _top_and_all(columns, rows, TOP_CALLS, caption, (3, 4, 5, 6, 7, 8, 9), "calls")


def _top_and_all(
    columns: list[str], rows: list, top: int, caption: str, numeric: tuple[int, ...], what: str
) -> list[Block]:
    """The first `top` rows as a table, and every row in a folded table when there are more."""
    shown = Table(columns, rows[:top], caption=caption, numeric=numeric)
    if len(rows) <= top:
        return [shown]
    return [shown, Details(f"All {len(rows)} {what}", [Table(columns, rows, numeric=numeric)])]


def _sites_tables(sites: CallSites) -> list[Block]:
    if not sites.sites:
        return [Note(f"{sites.missing}.")] if sites.missing else []
    columns = [
        "call site",
        "call",
        "count",
        "bytes",
        "time (sum over ranks)",
        "% of MPI",
        "per rank min .. max",
        "imbalance (slowest rank)",
        "source",
    ]
    rows = [
        [
            "; from ".join([site.site, *site.callers]),
            site.call,
            str(site.count),
            format_size(site.bytes),
            seconds(site.time_s["sum"]),
            percent(site.of_mpi) if site.category == "mpi" else site.category,
            f"{seconds(site.time_s['min'])} .. {seconds(site.time_s['max'])}",
            f"{percent(site.imbalance)} ({site.slowest_rank})",
            Markup("<code>{}</code>").format(site.source) if site.source else "",
        ]
        for site in sites.sites
    ]
    first = f" (the first {TOP_SITES})" if len(rows) > TOP_SITES else ""
    unwound = f", unwound by {sites.unwinder}" if sites.unwinder else ""
    caption = (
        f"Top call sites by time{first}: where in the program each call was made "
        f"({sites.callstack} frame{'s' if sites.callstack != 1 else ''} per site{unwound}), over all "
        "regions; per rank over the ranks that made it there; imbalance is the slowest rank's "
        "time over the average, less 1; source as the file read when the profile was stored."
    )
    return _top_and_all(columns, rows, TOP_SITES, caption, (2, 3, 4, 5, 6, 7), "call sites")


BYTE_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def _byte_unit(largest: float) -> tuple[str, float]:
    """The unit a colour scale up to `largest` bytes is labelled in: the largest that it reaches."""
    return next(((u, f) for u, f in BYTE_UNITS if largest >= f), ("B", 1.0))


def _size_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Powers of two in low..high, at most `most`: every 1st, 2nd, 5th or 10th power (1K, 1M)."""
    first, last = math.ceil(math.log2(low)), math.floor(math.log2(high))
    stride = next(s for s in (1, 2, 5, 10, 20) if (last - first) // s + 1 <= most)
    return [2.0**e for e in range(first, last + 1) if e % stride == 0]


def _draw_matrix(fig, ax, matrix: dict, sums: Traffic) -> str:
    tasks = len(matrix["bytes"])
    values = [[float(v) for v in row] for row in matrix["bytes"]]
    largest = max(map(max, values))
    unit, factor = _byte_unit(largest)
    scaled = [[v / factor for v in row] for row in values]
    annotate = (lambda v: format_size(v * factor)) if tasks <= 8 else None
    image = plots.draw_heatmap(
        fig, ax, scaled, f"bytes sent ({unit})", annotate=annotate, zero=True
    )
    if isinstance(image.norm, LogNorm):  # the cells span more than a factor of 100
        smallest = min(v for row in values for v in row if v > 0)
        bar = image.colorbar
        bar.set_label("bytes sent (K, M, G = KiB, MiB, GiB)")
        bar.locator = FixedLocator([t / factor for t in _size_ticks(smallest, largest)])
        bar.formatter = FuncFormatter(lambda v, _: plots.size_label(v * factor))
        bar.ax.yaxis.set_minor_formatter(NullFormatter())
        bar.update_ticks()
        scale = (
            f"colour on a logarithmic scale from the smallest sent ({format_size(smallest)}) to "
            f"the largest ({format_size(largest)}), as they span more than a factor of 100"
        )
    else:
        scale = f"colour from 0 to the largest ({format_size(largest)})"
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    ax.set_title("communication matrix", loc="left")
    return (
        f"Left: bytes each rank (row) sent to each rank (column), "
        f"{format_size(sums.bytes)} in {sums.messages} messages "
        f"({sums.what}; blank: none; {scale}). "
    )


def _bucket_label(bucket: int) -> str:
    """Bucket b holds [2^(b-1), 2^b) bytes; 0 holds empty messages. Labelled by its lower end."""
    return "0" if bucket == 0 else plots.size_label(2 ** (bucket - 1))


def _calls_count(counts: dict[str, int]) -> str:
    """'81571 calls (MPI_Recv 30451, MPI_Send 30451, MPI_Waitall 19354 and 11 more calls)'."""
    named = sorted(counts, key=lambda call: (-counts[call], call))
    listed = ", ".join(f"{call} {counts[call]}" for call in named[:3])
    more = (
        f" and {len(named) - 3} more call{'s' if len(named) > 4 else ''}" if len(named) > 3 else ""
    )
    total = sum(counts.values())
    return f"{total} call{'s' if total != 1 else ''} ({listed}{more})"


def _by_call(entries: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["call"]] = counts.get(e["call"], 0) + e["count"]
    return counts


def _draw_histogram(ax, entries: list[dict]) -> str:
    """Calls per size bucket, per call, of the calls that moved bytes (bucket 1 and up)."""
    counts = _by_call(entries)
    named = sorted(counts, key=counts.get, reverse=True)[:HISTOGRAM_CALLS]
    buckets = list(range(min(e["bucket"] for e in entries), max(e["bucket"] for e in entries) + 1))
    parts = {call: [0] * len(buckets) for call in [*named, "other"]}
    for e in entries:
        call = e["call"] if e["call"] in named else "other"
        parts[call][buckets.index(e["bucket"])] += e["count"]
    if not any(parts["other"]):
        del parts["other"]
    colors = [plots.COLORS[i % 10] for i in range(len(parts))]
    labels = [_bucket_label(b) for b in buckets]
    totals = [sum(column) for column in zip(*parts.values())]
    if max(totals) > 50 * min(t for t in totals if t):  # small buckets stay visible: log counts
        plots.draw_grouped_bars(ax, labels, parts, colors, log=True)
        drawn = "on a logarithmic axis, the calls of a bucket side by side"
    else:
        plots.draw_stacked_bars(ax, labels, parts, colors)
        drawn = "the calls of a bucket stacked"
    ax.set_xlabel("message size, lower end of the bucket (K, M, G = KiB, MiB, GiB)")
    ax.set_ylabel("calls")
    ax.set_title("message sizes", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return (
        "Message-size histogram over all ranks and regions: calls per size bucket (bucket b "
        f"holds [2^(b-1), 2^b) bytes), {drawn}. "
    )


def _no_bytes(entries: list[dict]) -> str:
    """The calls of bucket 0 counted: '... calls (...) moved no bytes (no message, ...)'."""
    if not entries:
        return ""
    return f"{_calls_count(_by_call(entries))} moved no bytes (no message, or an empty one)"


def _traffic_figure(document: dict, sums: Traffic | None, name: str) -> Block | None:
    """The communication matrix (when the profile has one with a message) beside the histogram
    of the calls that moved bytes; those that moved none are counted in the caption."""
    silent = sums is not None and sums.silent
    matrix = None if sums is None or silent else document["matrix"]
    entries = [e for e in document["histogram"] if e["count"]]
    sized = [e for e in entries if e["bucket"] > 0]
    empty = _no_bytes([e for e in entries if e["bucket"] == 0])
    panels = [panel for panel in (matrix, sized) if panel]
    if not panels:
        return (
            Note(f"No call moved bytes, so no message sizes are drawn: {empty}.") if empty else None
        )
    with plots.figure(name, 1, len(panels), width=9.5, height=3.8) as (fig, axes):
        caption = _draw_matrix(fig, axes[0, 0], matrix, sums) if matrix and sums else ""
        if silent:
            caption = "No point-to-point or one-sided message was sent (the matrix is empty). "
        if sized:
            caption += ("Right: " if matrix else "") + _draw_histogram(axes[0, -1], sized)
        fig.tight_layout()
        if sized:
            plots.spread_tick_labels(fig, axes[0, -1])
        if empty:
            left_out = "they are left out of the histogram" if sized else "no size to draw"
            caption += f"{empty}: {left_out}."
        return Figure(plots.to_svg(fig), caption)


def _facts(document: dict, figures: ProfileFigures) -> Facts:
    program = figures.overview
    counters = document.get("hardware_counters") or {}
    facts: list[tuple[str, str | Markup]] = [
        (label, Markup("<code>{}</code>").format(text) if label == "command" else text)
        for label, text in overview_facts(program)
    ]
    timer = document.get("timer") or {}
    if timer:
        resolution = timer.get("resolution_ns")
        text = (timer.get("source") or "?") + (
            f", resolution {resolution:.3g} ns" if resolution else ""
        )
        facts.append(("timer", text))
    facts.append(
        (
            "hardware counters",
            counters.get("source") or "available"
            if counters.get("available")
            else f"not available: {counters.get('reason') or 'not recorded'}",
        )
    )
    if document.get("table"):
        table = document["table"]
        facts.append(
            ("record table", f"{table.get('used_max', '?')} of {table.get('capacity')} used")
        )
    caption = f"Profile {figures.id}" if figures.id is not None else "Profile"
    return Facts(facts, caption=f"{caption} (perfatlas-ipm)")


def _warnings(document: dict) -> list[Note]:
    return [Note(f"{w.text}.", "warning") for w in profile_warnings(document)]


TOP_PLACES = 32  # ranks listed in the placement table; all of them under "All ranks"


def _placement_tables(figures: ProfileFigures) -> list[Block]:
    """Where each rank ran, and the link class of the heaviest pairs."""
    places = [p for p in figures.placement if p.cpus_allowed is not None or p.cpu is not None]
    if not places:
        return []

    def shown(value: int | str | None) -> str:
        return "-" if value is None else str(value)

    rows = [
        [str(p.rank), shown(p.host), shown(p.cpus_allowed), shown(p.cpu), shown(p.core_group),
         shown(p.package), shown(p.numa_node)]
        for p in places
    ]  # fmt: skip
    assumed = any(p.topology.startswith("assumed") for p in places)
    caption = (
        "Where each rank ran, read back by the library: the CPUs its MPI_Init thread may run on "
        "and the one it was seen on most (sampled every 4,096th event), mapped through this "
        "run's hwloc topology to its core group (the PUs of one last-level cache), package and "
        "NUMA node" + ("; ranks on other hosts are placed with this host's topology" if assumed else "")
        + "."
    )  # fmt: skip
    columns = ["rank", "host", "CPUs allowed", "CPU", "core group", "package", "NUMA node"]
    blocks = _top_and_all(columns, rows, TOP_PLACES, caption, (0, 3, 4, 5, 6), "ranks")
    pairs = [p for p in (figures.traffic.pairs if figures.traffic else []) if p.link]
    if pairs:
        blocks.append(
            Table(
                ["sender -> receiver", "bytes", "% of bytes", "link"],
                [
                    [
                        f"{p.sender} -> {p.receiver}",
                        format_size(p.bytes),
                        percent(p.of_bytes),
                        p.link,
                    ]
                    for p in pairs
                ],  # fmt: skip
                caption="The heaviest communicating pairs and the class of the link between "
                "their ranks' places.",
                numeric=(1, 2),
            )
        )
    return blocks


def profile_blocks(stored: dict, run: dict | None = None) -> list[Block]:
    document, figures = stored["document"], profile_figures(stored, run)
    name = f"profile-{stored.get('id') or 0}"
    blocks: list[Block] = [_facts(document, figures), *_warnings(document)]
    for figure in (
        _regions_figure(figures.regions, document.get("lbst_method"), f"{name}-regions"),
        *_calls_tables(figures.calls),
        *_sites_tables(figures.sites),
        _traffic_figure(document, figures.traffic, f"{name}-traffic"),
        _ranks_figure(document, f"{name}-ranks"),
        *_placement_tables(figures),
    ):
        if figure is not None:
            blocks.append(figure)
    return blocks


@section("profile", "MPI profile (perfatlas-ipm)", order=80)
def profile_section(data: RunData) -> list[Block]:
    return [block for stored in data.profiles for block in profile_blocks(stored, data.run)]
