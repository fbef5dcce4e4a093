"""The figures of one stored profile (a perfatlas.ipm/1 document, docs/profile.md), computed once
for every view of it: the report's profile section (section_profile), `perfatlas show`
(views_profile), `show --json`, and the headline results stored with the run (storage). What the
program was and how its time divides (the figures of the library's banner), its calls and call
sites by time, its regions, and its traffic with the heaviest communicating pairs: seconds, bytes
and fractions (0..1), which seconds() and percent() write alike in every view."""

from __future__ import annotations

import heapq
import shlex
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from perfatlas.common.units import format_size
from perfatlas.machine.link_class import link_class
from perfatlas.profile.atlas_join import AtlasJoin, atlas_join
from perfatlas.profile.documents import CATEGORIES
from perfatlas.profile.figure_text import percent, region_labels, seconds, share
from perfatlas.profile.placement_args import LaunchWords, launch_words
from perfatlas.profile.placement_whatif import WhatIf, placement_whatif
from perfatlas.profile.rank_placement import RankPlace, rank_places

TOP_PAIRS = 10  # the heaviest sender -> receiver pairs kept of a communication matrix
TOP_CALLS = 20  # the calls by time the report and `show` list first
TOP_SITES = 20  # the call sites by time the report and `show` list first
CATEGORY_LABELS = {"calc_s": "CALC", "mpi_s": "MPI", "io_s": "I/O", "lbst_s": "LBST"}


def whole_program(document: dict) -> dict:
    """Region 0, the root: its figures are the ranks' totals."""
    return next(region for region in document["regions"] if region["parent"] is None)


def comm_fraction(document: dict) -> float | None:
    """The share of all ranks' wallclock spent in MPI, MPI_s + LBST_s over wall_s (IPM's %comm,
    the banner's); None without per-rank times (a partial profile from rank files that carry
    none) or where they make no share."""
    wall, whole = document["wallclock_s"], whole_program(document)
    if not wall or not whole["mpi_s"] or not wall["sum"] > 0:
        return None
    return share(whole["mpi_s"]["sum"] + (whole["lbst_s"] or {}).get("sum", 0.0), wall["sum"])


@dataclass(frozen=True)
class Overview:
    """The program and how its time divides: the figures of the library's banner."""

    command: list[str]
    tasks: int
    hosts: list[str]
    mpi_library: str | None
    started_unix: float | None
    partial: bool
    partial_reason: str | None
    wallclock_s: dict | None  # per rank: sum, min, max, avg over the ranks
    comm_fraction: float | None  # MPI + LBST of all ranks' wallclock (IPM's %comm)
    shares: dict[str, float | None]  # calc_s, mpi_s, io_s, lbst_s: of all ranks' wallclock
    maxrss_bytes: float | None  # the largest rank's peak memory


def overview(document: dict) -> Overview:
    wall, whole = document["wallclock_s"], whole_program(document)
    total = wall["sum"] if wall else None
    return Overview(
        command=list(document["command"]),
        tasks=document["tasks"],
        hosts=list(document.get("hosts") or []),
        mpi_library=document.get("mpi_library"),
        started_unix=document.get("started_unix"),
        partial=document["partial"],
        partial_reason=document.get("partial_reason") if document["partial"] else None,
        wallclock_s=dict(wall) if wall else None,
        comm_fraction=comm_fraction(document),
        shares={key: share((whole[key] or {}).get("sum"), total) for key in CATEGORIES},
        maxrss_bytes=(document.get("maxrss_bytes") or {}).get("max"),
    )


def overview_facts(program: Overview) -> list[tuple[str, str]]:
    """The banner's figures as (label, text), as the report's facts and the terminal show them."""
    hosts = program.hosts
    facts = [
        ("command", shlex.join(program.command)),
        ("ranks", f"{program.tasks} on {len(hosts) or '?'} host(s) {', '.join(hosts)}".rstrip()),
        ("MPI library", program.mpi_library or "not recorded"),
    ]
    if program.started_unix:
        started = datetime.fromtimestamp(program.started_unix, UTC)
        facts.append(("started", started.isoformat(timespec="seconds")))
    wall, shares = program.wallclock_s, program.shares
    if wall:
        facts += [
            (
                "wallclock",
                f"{seconds(wall['max'])} (the slowest rank; average {seconds(wall['avg'])}, "
                f"min {seconds(wall['min'])})",
            ),
            (
                "in MPI",
                f"{percent(program.comm_fraction)} of all ranks' wallclock (MPI "
                f"{percent(shares['mpi_s'])}, LBST {percent(shares['lbst_s'])})",
            ),
            ("in I/O", percent(shares["io_s"])),
            ("computing (CALC)", percent(shares["calc_s"])),
        ]
    if program.maxrss_bytes is not None:
        facts.append(("peak memory per rank", format_size(program.maxrss_bytes)))
    facts.append(
        (
            "profile",
            f"partial: {program.partial_reason or 'the program did not finish'}"
            if program.partial
            else "complete (every rank reached MPI_Finalize)",
        )
    )
    return facts


@dataclass(frozen=True)
class CallFigures:
    """One call in one region (its own figures, not its nested regions'), summed over ranks."""

    call: str
    region: int
    region_label: str
    category: str  # mpi, mpi-io or posix-io
    count: int
    bytes: int  # as the calls' buffers describe them
    ranks: int  # the ranks that made it
    time_s: dict  # the spread of the per-rank totals: sum, min, max, avg
    lbst_s: float | None
    of_wall: float | None  # of all ranks' wallclock summed
    of_mpi: float | None  # of all ranks' time in MPI calls (MPI-IO is I/O: None, as I/O)


def calls_by_time(document: dict) -> list[CallFigures]:
    """Every (region, call), the most time first."""
    labels = region_labels(document)
    wall = (document["wallclock_s"] or {}).get("sum")
    in_mpi = sum(c["time_s"]["sum"] for c in document["calls"] if c["category"] == "mpi")
    calls = sorted(document["calls"], key=lambda c: c["time_s"]["sum"], reverse=True)
    return [
        CallFigures(
            call=call["call"],
            region=call["region"],
            region_label=labels[call["region"]],
            category=call["category"],
            count=call["count"],
            bytes=call["bytes"],
            ranks=call["ranks"],
            time_s=dict(call["time_s"]),
            lbst_s=call.get("lbst_s"),
            of_wall=share(call["time_s"]["sum"], wall),
            of_mpi=share(call["time_s"]["sum"], in_mpi) if call["category"] == "mpi" else None,
        )
        for call in calls
    ]


@dataclass(frozen=True)
class SiteFigures:
    """One call made at one call site (docs/profile.md, Call sites), over the ranks."""

    site: str  # its innermost frame: "function (file:line)", or "object+0xOFF (why)"
    call: str
    category: str  # mpi, mpi-io or posix-io
    count: int
    bytes: int
    ranks: int  # the ranks that made it there
    time_s: dict  # the spread of the per-rank totals over those ranks: sum, min, max, avg
    imbalance: float | None  # max / avg - 1 of those totals (0: every rank alike)
    slowest_rank: int
    of_mpi: float | None  # of all ranks' time in MPI calls (None for I/O)
    source: str | None  # the innermost frame's source line, when its file was readable
    callers: list[str]  # the further frames (PERFATLAS_IPM_CALLSTACK > 1), the next caller first


@dataclass(frozen=True)
class CallSites:
    """The call-site table, or why a profile has none."""

    callstack: int | None  # frames kept per site
    unwinder: str | None  # what unwound the stacks (libunwind, backtrace); None: none was
    sites: list[SiteFigures]  # the most time first
    missing: str | None  # why there are no sites (call sites off, rank files unreadable)


def call_sites(document: dict) -> CallSites:
    found = document.get("call_sites")
    if not found or found.get("missing"):
        return CallSites(
            None,
            None,
            [],
            (found or {}).get("missing")
            or "no call sites: PERFATLAS_IPM_CALLSTACK=0, a profile file without its rank files, "
            "or a library older than call sites",
        )
    in_mpi = sum(c["time_s"]["sum"] for c in document["calls"] if c["category"] == "mpi")
    sites = [
        SiteFigures(
            site=row["site"],
            call=row["call"],
            category=row["category"],
            count=row["count"],
            bytes=row["bytes"],
            ranks=row["ranks"],
            time_s=dict(row["time_s"]),
            imbalance=share(row["time_s"]["max"] - row["time_s"]["avg"], row["time_s"]["avg"]),
            slowest_rank=row["slowest_rank"],
            of_mpi=share(row["time_s"]["sum"], in_mpi) if row["category"] == "mpi" else None,
            source=row["frames"][0].get("source") if row["frames"] else None,
            callers=[frame["label"] for frame in row["frames"][1:]],
        )
        for row in found.get("sites") or []
    ]
    return CallSites(found.get("callstack"), found.get("unwinder"), sites, None)


@dataclass(frozen=True)
class RegionFigures:
    """One region (its nested regions included) over the ranks that entered it."""

    id: int
    label: str
    ranks: int | None  # the ranks that entered it, where the document says
    entries: int | None
    wall_s: dict  # sum, min, max, avg over those ranks
    average_s: dict[str, float | None]  # calc_s, mpi_s, io_s, lbst_s: per rank, on average
    shares: dict[str, float | None]  # calc_s, mpi_s, io_s, lbst_s: of the region's wallclock


def regions(document: dict) -> list[RegionFigures]:
    """The regions with wall times (a partial profile's may have none), in the document's order:
    the whole program first."""
    labels = region_labels(document)
    found = []
    for region in document["regions"]:
        wall = region["wall_s"]
        if wall is None:
            continue
        ranks = region.get("ranks")  # not a field the views must have (documents)
        found.append(
            RegionFigures(
                id=region["id"],
                label=labels[region["id"]],
                ranks=ranks if isinstance(ranks, int) and not isinstance(ranks, bool) else None,
                entries=region.get("entries"),
                wall_s=dict(wall),
                average_s={key: (region[key] or {}).get("avg") for key in CATEGORIES},
                shares={
                    key: share((region[key] or {}).get("sum"), wall["sum"]) for key in CATEGORIES
                },
            )
        )
    return found


@dataclass(frozen=True)
class Pair:
    """What one rank sent to another (ranks of MPI_COMM_WORLD)."""

    sender: int
    receiver: int
    bytes: float
    messages: float
    of_bytes: float | None  # of all bytes the matrix holds
    link: str | None = None  # its link class (machine.link_class.LINK_CLASSES); None: not known


@dataclass(frozen=True)
class Traffic:
    """The communication matrix in sums: each message counted once, at its sender."""

    what: str
    bytes: float
    messages: float
    silent: bool  # no byte in the matrix: the report draws no heatmap
    pairs: list[Pair] = field(default_factory=list)  # the heaviest first, TOP_PAIRS of them


def _link(by_rank: dict[int, RankPlace], sender: int, receiver: int) -> str | None:
    if sender not in by_rank or receiver not in by_rank:
        return None
    return link_class(by_rank[sender], by_rank[receiver])


def traffic(
    document: dict, places: list[RankPlace] | None = None, top: int = TOP_PAIRS
) -> Traffic | None:
    """None when the profile has no matrix (more tasks than the library keeps one for, or a
    partial view of rank files without record kinds); the heaviest pairs by bytes, then
    messages, each with its link class where the ranks' `places` tell it."""
    matrix = document["matrix"]
    if matrix is None:
        return None
    sent, messages = matrix["bytes"], matrix["messages"]
    total = sum(map(sum, sent))
    cells = (
        (sent[i][j], messages[i][j], i, j)
        for i in range(len(sent))
        for j in range(len(sent[i]))
        if sent[i][j] or messages[i][j]
    )
    heaviest = heapq.nlargest(top, cells, key=lambda c: (c[0], c[1], -c[2], -c[3]))
    by_rank = {place.rank: place for place in places or []}
    return Traffic(
        what=matrix.get("what") or "point-to-point",
        bytes=total,
        messages=sum(map(sum, messages)),
        silent=not any(any(row) for row in sent),
        pairs=[Pair(i, j, b, m, share(b, total), _link(by_rank, i, j)) for b, m, i, j in heaviest],
    )


@dataclass(frozen=True)
class ProfileFigures:
    """Everything a view of one stored profile shows, from Store.profiles' entry."""

    id: int | None  # the profile's id in the store
    overview: Overview
    calls: list[CallFigures]
    sites: CallSites
    regions: list[RegionFigures]
    traffic: Traffic | None
    placement: list[RankPlace]  # each rank's place ([] for a profile without placements)
    against: AtlasJoin  # the profile against the machine's comm atlas (atlas_join)
    whatif: WhatIf  # a rank order for the fastest links (placement_whatif)
    whatif_launch: list[LaunchWords]  # the launchers' words that apply it

    def document(self) -> dict[str, Any]:
        """As JSON (`perfatlas show RUN --json`, key "profile")."""
        return asdict(self)


def profile_figures(stored: dict, run: dict | None = None) -> ProfileFigures:
    """The figures of a stored profile; `run` (RunData.run: its topology and host) places the
    ranks."""
    document = stored["document"]
    places = rank_places(document, (run or {}).get("topology"), (run or {}).get("host"))
    whatif = placement_whatif(document, places)
    return ProfileFigures(
        id=stored.get("id"),
        overview=overview(document),
        calls=calls_by_time(document),
        sites=call_sites(document),
        regions=regions(document),
        traffic=traffic(document, places),
        placement=places,
        against=atlas_join(document),
        whatif=whatif,
        whatif_launch=launch_words(whatif),
    )
