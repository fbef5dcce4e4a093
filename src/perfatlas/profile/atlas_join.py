"""A profile joined with the machine's comm atlas: for each region's point-to-point traffic and
each collective call, the time the atlas says the machine needs against the time measured, and
a verdict with its evidence (issue 32).

The method, per row (sums over ranks, seconds):
- measured M: the time in the calls; waiting W: the part of it beyond the least rank's (the
  LBST rule of docs/profile.md: for collectives the library's `lbst_s`, for point-to-point each
  rank's time in the region's sends, receives and waits less the least rank's, for one-sided
  each rank's in its transfer and synchronization calls, where its accesses complete:
  one_sided_traffic);
- predicted P: point-to-point, each message once, at its sender, its one-way ping-pong time at
  its size on its link class (perfatlas.comm.comm_atlas.message_ns; a bucket's messages at their
  mean size), across hosts on the two hosts' own link where the atlas measured it
  (perfatlas.comm.host_links); a collective, its calls times the atlas's time at the program's
  process count (a call's communicator is not recorded: MPI_COMM_WORLD's size is taken) and the
  call's mean size (collective_ns); one-sided, each transfer at its origin, comm.rma's time of
  its operation (get or put) and its flush at its size on its link class (rma_ns), and each
  MPI_Win_fence a barrier of the program's processes (a fence synchronizes the window's
  group, taken as MPI_COMM_WORLD); P's interval from the atlas's 95 % intervals;
- the latency part of P: the messages times the curve's time at 1 byte; the rest is bandwidth.

Verdicts, in this order:
- `waiting` where W is at least half of M: other ranks arrive late (an imbalance);
- `latency-bound` or `bandwidth-bound` where the atlas explains the transfer time T = M - W (the
  latency part is most of P: many small messages; or not). T is explained when it is at most
  LATENCY_SLACK times the latency part's upper end plus BANDWIDTH_SLACK times the rest's: a
  ping-pong's latency is a best case that a program's small messages rarely reach (each call's
  own overhead, request handling and matching, a partner a little late: LogGP's o and g, which
  a tight ping-pong loop overlaps), while a large transfer reaches the link's bandwidth but for
  sharing it: an exchange moves both directions at once through the same memory or link, where
  the unidirectional curve's bandwidth is shared (up to twice its time);
- `waiting` too where point-to-point calls took longer than that but their calls at the speed of
  the fastest of them (each record's count times its minimum: `floor_s`) are explained: partners
  that arrive late in turn, an imbalance that alternates between ranks and so hides from
  per-rank totals, or noise;
- `unexplained` else: slower than the machine can do (a contended link, a protocol switch, a
  noisy node);
- `not joined` where the atlas lacks what the row needs, which the evidence names;
- `minor` for a row of under MINOR of all rows' measured time (a start-up barrier), not judged.
The achieved fraction of the machine is P / T (above 1: faster than the atlas's ping-pong,
as overlapped messages can be)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from perfatlas.comm.comm_atlas import (
    HIGH,
    LOW,
    MEDIAN,
    UNKNOWN_LINK,
    CommAtlas,
    collective_ns,
    message_ns,
    rma_ns,
)
from perfatlas.comm.host_links import SLOW_LINK, pair_ns, slow_hosts
from perfatlas.common.units import format_number, format_size
from perfatlas.machine.link_class import ACROSS_HOSTS
from perfatlas.profile.command import FAMILY_NAMES
from perfatlas.profile.figure_text import region_labels, seconds

WAITING = 0.5  # the share of the measured time beyond the least rank's that makes it waiting
LATENCY_SLACK = 4.0  # how far above the atlas's latency a small message's time is explained
BANDWIDTH_SLACK = 2.0  # how far above the atlas's time a large transfer's is explained
POINT_TO_POINT = "point-to-point"
ONE_SIDED = "one-sided"
LACKING_CURVE = "ping-pong curve on "  # what a row lacks: "ping-pong curve on across hosts"
LACKING_RMA = "one-sided "  # what a row lacks: "one-sided get curve on same package"
MINOR = 0.01  # a row of less of all rows' measured time is listed, not judged
FIGURES = (MEDIAN, LOW, HIGH)


@dataclass(frozen=True)
class JoinRow:
    """One region's point-to-point traffic, or one collective call of a region."""

    region: str  # its label (analysis_profile.region_labels)
    call: str  # a collective's name, or POINT_TO_POINT
    calls: list[str]  # the calls it sums
    messages: float  # point-to-point: messages sent; a collective: its calls over the ranks
    bytes: float
    links: list[str]  # the link classes its messages took
    measured_s: float
    waiting_s: float
    predicted_s: float | None
    predicted_low_s: float | None
    predicted_high_s: float | None
    latency_s: float | None  # the part of predicted_s that is the links' latency
    achieved: float | None  # predicted / (measured - waiting)
    verdict: str
    evidence: str
    lacking: list[str]  # what the atlas lacks for this row ([] where it has all)

    @property
    def transfer_s(self) -> float:
        return self.measured_s - self.waiting_s

    @property
    def predicted_text(self) -> str:
        """The prediction with its interval, as the views write it."""
        if self.predicted_s is None:
            return "-"
        low, high = seconds(self.predicted_low_s), seconds(self.predicted_high_s)
        return f"{seconds(self.predicted_s)} [{low}, {high}]"


@dataclass(frozen=True)
class PairJoin:
    """One of the heaviest pairs against its link: the bandwidth its sending calls achieved."""

    sender: int
    receiver: int
    link: str | None
    messages: float
    bytes: float
    time_s: float  # in the calls that sent its messages
    achieved_Bps: float | None  # bytes / time_s
    best_Bps: float | None  # its fastest sending call's (link_traffic.pair_traffic)
    link_Bps: float | None  # the atlas's: the bytes over its time for these messages
    achieved: float | None  # achieved_Bps / link_Bps
    hosts: list[str] = field(default_factory=list)  # the sender's and the receiver's, across hosts
    slow_hosts: list[str] = field(default_factory=list)  # of those, the ones on a slow link


def rate_text(bytes_per_s: float | None) -> str:
    return "-" if bytes_per_s is None else f"{format_size(bytes_per_s)}/s"


def pair_cells(pair: PairJoin) -> list[str]:
    """A pair's row as the views write it (pair_columns)."""
    link = pair.link or "-"
    if pair.hosts:
        link += f" ({' - '.join(pair.hosts)})"
    if pair.slow_hosts:
        link += f", slow link: {', '.join(pair.slow_hosts)}"
    return [
        f"{pair.sender} -> {pair.receiver}",
        link,
        format_size(pair.bytes),
        format_number(pair.messages),
        seconds(pair.time_s),
        rate_text(pair.achieved_Bps),
        rate_text(pair.best_Bps),
        rate_text(pair.link_Bps),
        "-" if pair.achieved is None else format_number(pair.achieved),
    ]


PAIRS_CAPTION = (
    "achieved: bytes over the time of the calls that sent them (a blocking send or a Sendrecv "
    "holds the transfer; a nonblocking send's is in its Wait, not counted here); fastest "
    "call: a message over the pair's fastest sending call, what the link gave where nothing "
    "waited; the link's: "
    "the atlas's one-way ping-pong at the pair's mean message size, across hosts that of the "
    "pair's two hosts where the atlas measured them (else the slower of their links); a slow "
    f"link: a host's link {SLOW_LINK:g}x slower than the fastest host's; fraction: achieved "
    "over the link's"
)
PAIR_COLUMNS = ["sender -> receiver", "link", "bytes", "messages", "time in its sends",
                "achieved", "fastest call", "the link's (atlas)", "fraction"]  # fmt: skip


@dataclass(frozen=True)
class AtlasJoin:
    """The join of one profile; `rows` empty with `reason` where nothing could be joined."""

    rows: list[JoinRow] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the atlas's parts and where from
    missing: list[str] = field(default_factory=list)  # what the atlas lacked for some row
    reason: str | None = None  # why there is no join
    noise: dict[str, Any] = field(default_factory=dict)  # the atlas's BSP model (noise_cadence)
    pairs: list[PairJoin] = field(default_factory=list)  # the heaviest, the most bytes first
    mpi: str | None = None  # the MPI family of the atlas ("openmpi", "mpich"; None: any)

    @property
    def sources_text(self) -> str:
        """Where the atlas comes from, as the views write it: "(Open MPI) comm.pingpong ..."."""
        of = f"({FAMILY_NAMES.get(self.mpi, self.mpi)}) " if self.mpi else ""
        return of + "; ".join(self.sources)

    def document(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Prediction:
    median: float = 0.0
    low: float = 0.0
    high: float = 0.0
    latency: float = 0.0  # of the median
    latency_high: float = 0.0
    events: float = 0.0  # the messages or calls predicted
    lacking: list[str] = field(default_factory=list)

    def add(
        self, count: float, figures: tuple[float, float, float], latency: tuple[float, float]
    ) -> None:
        """`count` messages or calls of one size: its time (median, low, high) and latency
        (median, high), capped at the time (a size below the curve's first)."""
        self.events += count
        self.median += count * figures[MEDIAN]
        self.low += count * figures[LOW]
        self.high += count * figures[HIGH]
        self.latency += count * min(latency[0], figures[MEDIAN])
        self.latency_high += count * min(latency[1], figures[HIGH])

    @property
    def explains(self) -> float:
        """The most transfer time this prediction explains."""
        return LATENCY_SLACK * self.latency_high + BANDWIDTH_SLACK * (self.high - self.latency_high)


def _message_figures(curve: list[list[float]], size: float) -> tuple[float, float, float]:
    median, low, high = (message_ns(curve, size, f) * 1e-9 for f in (MEDIAN, LOW, HIGH))
    return median, low, high


def _one_way(
    row: dict, atlas: CommAtlas, size: float
) -> tuple[tuple[float, float, float], tuple[float, float]] | None:
    """The atlas's one-way seconds of a row's message of `size` bytes (median, low, high) and
    its latency (median, high): on the pair of hosts' own link where the atlas measured it
    (perfatlas.comm.host_links), else on the row's link class; None where it has neither."""
    hosts = row.get("hosts") or []
    if len(hosts) == 2:
        times = [pair_ns(atlas.host_links, *hosts, at, f) for at in (size, 1.0) for f in FIGURES]
        if None not in times:
            median, low, high, latency, _, latency_high = (t * 1e-9 for t in times)  # type: ignore[operator]
            return (median, low, high), (latency, latency_high)
    curve = atlas.pingpong.get(row["link"] or UNKNOWN_LINK)
    if curve is None:
        return None
    latency = _message_figures(curve, 1.0)
    return _message_figures(curve, size), (latency[MEDIAN], latency[HIGH])


def _point_to_point(
    rows: list[dict], atlas: CommAtlas
) -> tuple[_Prediction, float, float, set[str]]:
    """The prediction of a region's messages, their count, bytes and links."""
    prediction, messages, volume, links = _Prediction(), 0.0, 0.0, set()
    for row in rows:
        link = row["link"] or UNKNOWN_LINK
        links.add(link)
        messages += row["messages"]
        volume += row["bytes"]
        size = row["bytes"] / row["messages"] if row["messages"] else 0.0
        figures = _one_way(row, atlas, size)
        if figures is None:
            prediction.lacking.append(f"{LACKING_CURVE}{link}")
            continue
        prediction.add(row["messages"], *figures)
    return prediction, messages, volume, links


def _one_sided(
    row: dict, atlas: CommAtlas, tasks: int
) -> tuple[_Prediction, float, float, set[str]]:
    """The prediction of a region's one-sided transfers and fences, their count, bytes and
    links."""
    prediction = _collective(
        {"call": "MPI_Barrier", "count": row["fences"], "bytes": 0}, atlas, tasks
    )
    messages, volume, links = 0.0, 0.0, set()
    for transfer in row["transfers"]:
        link = transfer["link"] or UNKNOWN_LINK
        links.add(link)
        messages += transfer["messages"]
        volume += transfer["bytes"]
        size = transfer["bytes"] / transfer["messages"] if transfer["messages"] else 0.0
        times = [rma_ns(atlas, transfer["op"], link, at, f) for at in (size, 1.0) for f in FIGURES]
        if None in times:
            lacking = f"{LACKING_RMA}{transfer['op']} curve on {link}"
            if link in atlas.rma.get(transfer["op"], {}):  # beyond its sizes: the ping-pong's
                lacking = LACKING_CURVE + link
            prediction.lacking.append(lacking)
            continue
        median, low, high, latency, _, latency_high = (t * 1e-9 for t in times)  # type: ignore[operator]
        prediction.add(transfer["messages"], (median, low, high), (latency, latency_high))
    return prediction, messages, volume, links


def _collective(call: dict, atlas: CommAtlas, tasks: int) -> _Prediction:
    prediction = _Prediction()
    count = call["count"]
    if not count:
        return prediction
    size = call["bytes"] / count
    figures = [collective_ns(atlas, call["call"], tasks, size, f) for f in (MEDIAN, LOW, HIGH)]
    latency = [collective_ns(atlas, call["call"], tasks, 1.0, f) for f in (MEDIAN, HIGH)]
    if None in figures or None in latency:
        prediction.lacking.append(f"{call['call']} on {tasks} processes")
        return prediction
    median, low, high = (f * 1e-9 for f in figures)  # type: ignore[operator]
    prediction.add(count, (median, low, high), (latency[0] * 1e-9, latency[1] * 1e-9))  # type: ignore[operator]
    return prediction


def _rate(bytes_: float, seconds_: float) -> str:
    return rate_text(bytes_ / seconds_ if seconds_ > 0 else None)


def _judge(
    measured: float,
    waiting: float,
    prediction: _Prediction,
    volume: float,
    what: str,
    floor: float | None = None,
) -> tuple[str, str, float | None]:
    """(verdict, evidence, achieved fraction)."""
    transfer = measured - waiting
    achieved = prediction.median / transfer if transfer > 0 and not prediction.lacking else None
    if measured > 0 and waiting >= WAITING * measured:
        return (
            "waiting",
            f"{seconds(waiting)} of {seconds(measured)} ({100 * waiting / measured:.0f} %) is "
            "ranks waiting beyond the least rank's time: other ranks arrive late",
            achieved,
        )
    if prediction.lacking:
        return (
            "not joined",
            f"the atlas has no {' and no '.join(sorted(set(prediction.lacking)))}",
            None,
        )
    if transfer <= prediction.explains:
        if prediction.latency >= prediction.median / 2:
            return (
                "latency-bound",
                f"{format_number(prediction.events)} {what} x "
                f"{seconds(prediction.latency / max(prediction.events, 1))} "
                f"latency = {seconds(prediction.latency)} of the {seconds(prediction.median)} "
                f"the atlas predicts; measured {seconds(transfer)} beyond waiting",
                achieved,
            )
        moving = prediction.median - prediction.latency
        return (
            "bandwidth-bound",
            f"{format_size(volume)} at the link's {_rate(volume, moving)} = {seconds(moving)} "
            f"of the {seconds(prediction.median)} the atlas predicts; measured "
            f"{seconds(transfer)} beyond waiting",
            achieved,
        )
    if floor is not None and floor <= prediction.explains:
        return (
            "waiting",
            f"{seconds(transfer)} beyond waiting on the slowest rank, but at the speed of their "
            f"fastest calls the same calls took {seconds(floor)}, as the atlas's "
            f"{seconds(prediction.median)}: the rest is waits on partners that arrive late in "
            "turn (an imbalance that alternates between ranks, which per-rank totals do not "
            "show) or noise",
            achieved,
        )
    slower = transfer / prediction.median if prediction.median > 0 else math.inf
    return (
        "unexplained",
        f"{seconds(transfer)} beyond waiting is {format_number(slower)}x the "
        f"{seconds(prediction.median)} the atlas predicts, more than its slack explains: a "
        "contended link, a protocol switch or a noisy node",
        achieved,
    )


def _row(
    region: str,
    call: str,
    calls: list[str],
    measured: float,
    waiting: float,
    prediction: _Prediction,
    messages: float,
    volume: float,
    links: list[str],
    floor: float | None = None,
) -> JoinRow:
    what = {POINT_TO_POINT: "messages", ONE_SIDED: "accesses and fences"}.get(call, "calls")
    verdict, evidence, achieved = _judge(measured, waiting, prediction, volume, what, floor)
    known = not prediction.lacking
    return JoinRow(
        region=region,
        call=call,
        calls=calls,
        messages=messages,
        bytes=volume,
        links=links,
        measured_s=measured,
        waiting_s=waiting,
        predicted_s=prediction.median if known else None,
        predicted_low_s=prediction.low if known else None,
        predicted_high_s=prediction.high if known else None,
        latency_s=prediction.latency if known else None,
        achieved=achieved,
        verdict=verdict,
        evidence=evidence,
        lacking=sorted(set(prediction.lacking)),
    )


def noise_text(noise: dict[str, Any]) -> str | None:
    """The BSP noise model of the program's superstep as a sentence; None without a model."""
    if not noise:
        return None
    if noise.get("missing"):
        return f"No noise model: {noise['missing']}."
    shown = ", ".join(
        f"{100 * slowdown:.2g} % at {processes} processes"
        for processes, slowdown in zip(noise["processes"], noise["slowdown"])
    )
    beyond = [p for p in noise["processes"] if p > noise["independent_windows"]]
    bound = ""
    if beyond:
        bound = (
            f" (a lower bound from {beyond[0]} processes on, beyond the noise run's "
            f"{noise['independent_windows']} independent windows)"
        )
    return (
        f"Noise, a model (BSP: Petrini, Kerbyson & Pakin, SC03): the program computes "
        f"{seconds(noise['superstep_ns'] * 1e-9)} between collective calls; this machine's noise "
        f"({noise['source']}) would make each such superstep longer by {shown}{bound}. "
        "Communication and correlated noise are left out."
    )


def _pair(pair: dict, atlas: CommAtlas, hosts: dict[int, str | None]) -> PairJoin:
    """A pair's achieved bandwidth against its link's for messages of its mean size: across
    hosts, the pair of hosts' own (perfatlas.comm.host_links) where the atlas has it, else the
    link class's curve. The time is that of its sending calls: a blocking send or a Sendrecv
    holds the transfer, a nonblocking send does not (its Wait does, and is not the pair's
    alone)."""
    curve = atlas.pingpong.get(pair["link"] or UNKNOWN_LINK)
    achieved = pair["bytes"] / pair["time_s"] if pair["time_s"] > 0 and pair["bytes"] else None
    ends = [hosts.get(pair["sender"]), hosts.get(pair["receiver"])]
    across = pair["link"] == ACROSS_HOSTS and None not in ends
    size = pair["bytes"] / pair["messages"] if pair["messages"] else 0.0
    one_way = None
    if across:
        one_way = pair_ns(atlas.host_links, ends[0], ends[1], size)  # type: ignore[arg-type]
    if one_way is None and curve is not None:
        one_way = message_ns(curve, size)
    link = None
    if one_way and pair["bytes"]:
        link = pair["bytes"] / (pair["messages"] * one_way * 1e-9)
    slow = slow_hosts(atlas.host_links, ends, size) if across and pair["bytes"] else []  # type: ignore[arg-type]
    return PairJoin(
        sender=pair["sender"],
        receiver=pair["receiver"],
        link=pair["link"],
        messages=pair["messages"],
        bytes=pair["bytes"],
        time_s=pair["time_s"],
        achieved_Bps=achieved,
        best_Bps=pair.get("best_Bps"),
        link_Bps=link,
        achieved=achieved / link if achieved is not None and link else None,
        hosts=ends if across else [],  # type: ignore[arg-type]
        slow_hosts=slow,
    )


def _minor(row: JoinRow, total: float) -> JoinRow:
    """A row too small to judge (a start-up barrier): listed, its gaps not asked for."""
    share = f"{100 * row.measured_s / total:.2g} %" if total > 0 else "none"
    return replace(
        row,
        verdict="minor",
        evidence=f"{share} of the time measured in these calls: not judged",
        lacking=[],
    )


def atlas_join(document: dict) -> AtlasJoin:
    """The join of a profile document with the atlas it carries (`atlas`, put there by
    `perfatlas profile`)."""
    atlas_document = document.get("atlas")
    if not atlas_document:
        return AtlasJoin(
            reason="the profile carries no comm atlas (profiled with --atlas none, or by a "
            "perfatlas older than the join)"
        )
    if atlas_document.get("missing"):
        return AtlasJoin(reason=str(atlas_document["missing"]))
    atlas = CommAtlas.of_document(atlas_document)
    if "point_to_point" not in document:
        return AtlasJoin(
            sources=atlas.sources,
            reason="the profile has no per-rank point-to-point times (its rank files were "
            "missing, or written by a library older than the join)",
        )
    labels = region_labels(document)
    traffic: dict[int, list[dict]] = defaultdict(list)
    for row in document.get("link_traffic") or []:
        traffic[row["region"]].append(row)
    rows = []
    for group in document["point_to_point"]:
        times = [s for _, s in group["rank_s"]]
        measured = sum(times)
        waiting = measured - len(times) * min(times) if times else 0.0
        prediction, messages, volume, links = _point_to_point(traffic[group["region"]], atlas)
        rows.append(
            _row(
                labels.get(group["region"], "?"),
                POINT_TO_POINT,
                group["calls"],
                measured,
                waiting,
                prediction,
                messages,
                volume,
                sorted(links),
                group.get("floor_s"),
            )
        )
    for group in document.get("one_sided") or []:
        times = [s for _, s in group["rank_s"]]
        measured = sum(times)
        prediction, messages, volume, links = _one_sided(group, atlas, document["tasks"])
        rows.append(
            _row(
                labels.get(group["region"], "?"),
                ONE_SIDED,
                group["calls"],
                measured,
                measured - len(times) * min(times) if times else 0.0,
                prediction,
                messages,
                volume,
                sorted(links),
                group["floor_s"],
            )
        )
    for call in document["calls"]:
        if not call.get("collective"):
            continue
        prediction = _collective(call, atlas, document["tasks"])
        measured = call["time_s"]["sum"]
        rows.append(
            _row(
                labels.get(call["region"], "?"),
                call["call"],
                [call["call"]],
                measured,
                min(call.get("lbst_s") or 0.0, measured),
                prediction,
                call["count"],
                call["bytes"],
                [],
            )
        )
    rows.sort(key=lambda r: -r.measured_s)
    total = sum(row.measured_s for row in rows)
    rows = [row if row.measured_s >= MINOR * total else _minor(row, total) for row in rows]
    missing = sorted({lack for row in rows for lack in row.lacking})
    noise = atlas_document.get("noise") or {}
    hosts = {row["rank"]: row.get("host") for row in document.get("ranks") or []}
    pairs = [_pair(pair, atlas, hosts) for pair in document.get("pair_traffic") or []]
    return AtlasJoin(rows, atlas.sources, missing, noise=noise, pairs=pairs, mpi=atlas.mpi)
