"""A stored profile in the terminal (`perfatlas show RUN` of a run `perfatlas profile` made): the
program and how its time divides (the library's banner), the top calls and call sites, the
regions, the heaviest communicating pairs and the program against this machine's comm atlas,
the figures of analysis_profile that the report's section draws."""

from __future__ import annotations

from textwrap import indent

from rich.markup import escape
from rich.table import Table

from perfatlas.common.units import format_number, format_size
from perfatlas.profile.analysis_profile import (
    CATEGORY_LABELS,
    TOP_CALLS,
    TOP_PAIRS,
    TOP_SITES,
    CallFigures,
    CallSites,
    Overview,
    ProfileFigures,
    RegionFigures,
    Traffic,
    overview_facts,
    percent,
    profile_figures,
    seconds,
)
from perfatlas.profile.atlas_join import (
    PAIR_COLUMNS,
    PAIRS_CAPTION,
    AtlasJoin,
    noise_text,
    pair_cells,
)
from perfatlas.profile.placement_args import LaunchWords, whatif_text
from perfatlas.profile.placement_whatif import WhatIf
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.profile.storage import BENCHMARK
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import console, titled_table

SHOWN_CATEGORIES = ("mpi_s", "lbst_s", "io_s", "calc_s")  # the regions table's columns: MPI first
SOURCE_SHOWN = 60  # characters of a call site's source line under its label
MAX_FILE_LINES = 16  # a what-if's rankfile shown whole up to this many ranks


def overview_table(program: Overview, title: str) -> Table:
    table = titled_table(title, "", "")
    table.show_header = False
    for name, value in overview_facts(program):
        table.add_row(name, escape(value))
    return table


def calls_table(calls: list[CallFigures], title: str) -> Table:
    table = titled_table(
        title,
        "call",
        "region",
        "count",
        "bytes",
        "time (all ranks)",
        "% of MPI",
        "% of wall",
        "per rank min .. max",
        right=(2, 3, 4, 5, 6, 7),
    )
    for call in calls:
        table.add_row(
            escape(call.call),
            escape(call.region_label),
            str(call.count),
            format_size(call.bytes),
            seconds(call.time_s["sum"]),
            percent(call.of_mpi) if call.category == "mpi" else f"({call.category})",
            percent(call.of_wall),
            f"{seconds(call.time_s['min'])} .. {seconds(call.time_s['max'])}",
        )
    return table


def sites_table(sites: CallSites, title: str) -> Table:
    table = titled_table(
        title,
        "call site",
        "call",
        "count",
        "bytes",
        "time (all ranks)",
        "% of MPI",
        "per rank min .. max",
        "imbalance",
        right=(2, 3, 4, 5, 6, 7),
    )
    for site in sites.sites[:TOP_SITES]:
        source = [f"  | {site.source[:SOURCE_SHOWN]}"] if site.source else []
        callers = [f"  from {caller}" for caller in site.callers]
        where = "\n".join([site.site, *source, *callers])
        table.add_row(
            escape(where),
            escape(site.call),
            str(site.count),
            format_size(site.bytes),
            seconds(site.time_s["sum"]),
            percent(site.of_mpi) if site.category == "mpi" else f"({site.category})",
            f"{seconds(site.time_s['min'])} .. {seconds(site.time_s['max'])}",
            f"{percent(site.imbalance)} (rank {site.slowest_rank})",
        )
    return table


def regions_table(regions: list[RegionFigures], title: str) -> Table:
    labels = [CATEGORY_LABELS[key] for key in SHOWN_CATEGORIES]
    table = titled_table(
        title, "region", "ranks", "wall per rank", *labels, right=(1, 2, 3, 4, 5, 6)
    )
    for region in regions:
        table.add_row(
            escape(region.label),
            "-" if region.ranks is None else str(region.ranks),
            seconds(region.wall_s["avg"]),
            *(
                f"{seconds(region.average_s[key])} ({percent(region.shares[key])})"
                for key in SHOWN_CATEGORIES
            ),
        )
    return table


def _count(value: float) -> str:
    """A count from the matrix (numbers in JSON): 6, not 6.0 or 6e+00."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def pairs_table(traffic: Traffic, title: str) -> Table:
    table = titled_table(
        title, "sender -> receiver", "bytes", "messages", "% of bytes", "link", right=(1, 2, 3)
    )
    for pair in traffic.pairs:
        table.add_row(
            f"{pair.sender} -> {pair.receiver}",
            format_size(pair.bytes),
            _count(pair.messages),
            percent(pair.of_bytes),
            pair.link or "-",
        )
    return table


def against_table(join: AtlasJoin, title: str) -> Table:
    """The join's rows: what was measured, what the atlas predicts, the verdict and why."""
    table = titled_table(
        title,
        "region: traffic",
        "measured",
        "waiting",
        "atlas predicts [95 % CI]",
        "achieved",
        "verdict",
        "evidence",
        right=(1, 2, 3, 4),
    )
    for row in join.rows:
        table.add_row(
            escape(f"{row.region}: {row.call}"),
            seconds(row.measured_s),
            seconds(row.waiting_s),
            row.predicted_text,
            "-" if row.achieved is None else format_number(row.achieved),
            row.verdict,
            escape(row.evidence),
        )
    return table


def print_whatif(whatif: WhatIf, launch: list[LaunchWords]) -> None:
    """The what-if placement and the launchers' words that apply it, with their files."""
    console.print(escape(whatif_text(whatif)))
    for words in launch:
        console.print(f"  {words.launcher}: {escape(words.words)}", highlight=False)
        if words.text is not None and words.text.count("\n") <= MAX_FILE_LINES:
            console.print(escape(f"    {words.file}:\n" + indent(words.text, "      ").rstrip()))


def print_against(join: AtlasJoin) -> None:
    """The section "Against this machine", or why there is none."""
    if join.reason:
        console.print(f"against this machine: {escape(join.reason)}")
        return
    if not join.rows:
        console.print("against this machine: the program made no point-to-point or collective call")
        return
    table = against_table(join, "against this machine (the stored comm atlas)")
    missing = f"; the atlas lacks {', '.join(join.missing)}" if join.missing else ""
    _caption(
        table,
        escape(
            "time summed over the ranks; waiting: beyond the least rank's time (LBST); "
            "achieved: the atlas's time over the measured time beyond waiting; atlas: "
            f"{join.sources_text}{missing}"
        ),
    )
    console.print(table)
    if join.pairs:
        pairs = titled_table("the heaviest pairs against their links", *PAIR_COLUMNS,
                             right=(2, 3, 4, 5, 6, 7, 8))  # fmt: skip
        for pair in join.pairs[:TOP_PAIRS]:
            pairs.add_row(*pair_cells(pair))
        _caption(pairs, PAIRS_CAPTION)
        console.print(pairs)
    if said := noise_text(join.noise):
        console.print(escape(said))


def _caption(table: Table, text: str) -> None:
    table.caption, table.caption_justify = text, "left"


def print_profile(figures: ProfileFigures) -> None:
    name = f"profile {figures.id}" if figures.id is not None else "profile"
    console.print(overview_table(figures.overview, f"{name} (perfatlas-ipm)"))
    calls = figures.calls
    if calls:
        shown = f", {TOP_CALLS} of {len(calls)}" if len(calls) > TOP_CALLS else ""
        table = calls_table(calls[:TOP_CALLS], f"top calls by time{shown}")
        _caption(
            table,
            "a call's figures are its region's own, not its nested regions'; time summed over "
            "the ranks; % of MPI: of all ranks' time in MPI calls (MPI-IO and POSIX calls are "
            "I/O); % of wall: of all ranks' wallclock",
        )
        console.print(table)
    else:
        console.print("no MPI or I/O call was recorded")
    sites = figures.sites
    if sites.sites:
        shown = f", {TOP_SITES} of {len(sites.sites)}" if len(sites.sites) > TOP_SITES else ""
        table = sites_table(sites, f"top call sites by time{shown}")
        _caption(
            table,
            "where each call was made, over all regions, with its source line (| ...) and, with "
            "PERFATLAS_IPM_CALLSTACK > 1, its callers; per rank: over the ranks that made it "
            "there; imbalance: the slowest rank's time over the average, less 1",
        )
        console.print(table)
    elif sites.missing:
        console.print(escape(sites.missing))
    if figures.regions:
        table = regions_table(figures.regions, "regions")
        _caption(
            table,
            "each with its nested regions: seconds per rank, averaged over the ranks in it, and "
            "% of its wallclock",
        )
        console.print(table)
    traffic = figures.traffic
    if traffic is None:
        console.print(
            "no communication matrix: more ranks than the library keeps one for (1024), or a "
            "partial profile from rank files without record kinds (an older library)"
        )
    elif not traffic.pairs:
        console.print("no point-to-point or one-sided message was sent")
    else:
        table = pairs_table(
            traffic,
            f"heaviest communicating pairs, of {format_size(traffic.bytes)} in "
            f"{_count(traffic.messages)} messages",
        )
        _caption(table, escape(traffic.what))
        console.print(table)
    print_against(figures.against)
    if not figures.against.reason:
        print_whatif(figures.whatif, figures.whatif_launch)


def print_profiles(data: RunData) -> None:
    """Every profile the run holds (`perfatlas profile` stores one per run), and what is doubtful
    about it where no headline result carries it (a profile without per-rank times has none:
    storage.headline), so that `show` warns as the report's section does."""
    headlines = any(r.benchmark == BENCHMARK for r in data.launches)
    for stored in data.profiles:
        print_profile(profile_figures(stored, data.run))
        for warning in [] if headlines else profile_warnings(stored["document"]):
            console.print(
                f"[yellow]warning[/] {BENCHMARK}: {escape(warning.text)}", highlight=False
            )


def profile_document(data: RunData) -> dict:
    """The figures of the run's profile as JSON (`show --json`, key "profile"): its first, the
    one `perfatlas profile` stores with each run."""
    return profile_figures(data.profiles[0], data.run).document()
