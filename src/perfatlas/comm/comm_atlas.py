"""The stored comm atlas of a machine as a model needs it, one module for every model that
predicts communication time from it: the application proxies' (app.hydro) and the join of a
program's profile with the machine (perfatlas.profile.atlas_join).

What it holds, each part from the latest run of the machine (its fingerprint) that measured it
(a link class, a process count):
- one-way ping-pong time against message size, per link class (perfatlas.machine.link_class:
  the two ranks' places in the run's topology), median and 95 % interval per size;
- MPI_Allreduce time against process count and size, MPI_Barrier time against process count;
- one-sided access (comm.rma, case "one": one origin, one target) per operation (get, put) and
  link class: the time of an operation and its MPI_Win_flush against its bytes (count x the
  element's size; where several element types give one size, the fastest), each size from the
  latest run that measured it;
- each pair of hosts measured alone (perfatlas.comm.host_links): a slow host's link.

An atlas travels as a JSON object (`atlas.document`), carried by the documents modelled with it
so that a stored result keeps the atlas it was modelled with. Interpolation is piecewise linear
in log-log (sizes; perfatlas.comm.curve_interpolation) and in log2 P (processes), held constant beyond the ends but for message
sizes above the largest measured, which extrapolate at its time per byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from perfatlas.comm.atlas_rows import (
    StoredRow,
    family_of,
    latest_per,
    sources_sentence,
    stored_rows,
)
from perfatlas.comm.curve_interpolation import HIGH, LOW, MEDIAN, between, message_ns
from perfatlas.comm.host_links import HostLink, stored_host_links
from perfatlas.machine.link_class import LINK_CLASSES, cpu_place, link_class, pus_by_cpu
from perfatlas.store.database import Store

ALLREDUCE_BYTES = 8  # app.hydro's time-step reduction: one double per rank
UNKNOWN_LINK = "unknown link"  # a ping-pong whose ranks' places the document does not tell
RMA_OPERATIONS = ("get", "put")  # comm.rma's, the kinds of one-sided transfer it tells apart
RMA_CASE = "one"  # the comm.rma case of one origin and one target, the join's


def pingpong_link(document: dict, topology: dict | None, here: str | None) -> str:
    """The link class between a ping-pong's two ranks (placement.involved), placed with the
    run's topology (`here`: the host it describes; ranks elsewhere are placed with it too)."""
    placement = document.get("placement") or {}
    ranks = {int(r["rank"]): r for r in placement.get("ranks") or [] if "rank" in r}
    involved = [ranks.get(int(r)) for r in (placement.get("involved") or [])[:2]]
    if len(involved) != 2 or None in involved:
        return UNKNOWN_LINK
    pus = pus_by_cpu(topology)
    a, b = (cpu_place(pus, r.get("host") or here, r.get("cpu")) for r in involved)
    return link_class(a, b) or UNKNOWN_LINK


@dataclass
class CommAtlas:
    """A machine's stored comm figures, as `document` writes them."""

    fingerprint: str | None = None
    mpi: str | None = None  # the MPI family it was measured with, where one was asked for
    pingpong: dict[str, list[list[float]]] = field(default_factory=dict)  # link -> [[B, m, lo, hi]]
    allreduce: list[list[float]] = field(default_factory=list)  # [[P, bytes, m, lo, hi]]
    barrier: list[list[float]] = field(default_factory=list)  # [[P, m, lo, hi]]
    sources: list[str] = field(default_factory=list)  # where each part comes from, or is missing
    host_links: list[HostLink] = field(default_factory=list)  # pairs of hosts measured alone
    # one-sided: op -> link -> [[bytes, m, lo, hi]]
    rma: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)

    @property
    def document(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "mpi": self.mpi,
            "pingpong": self.pingpong,
            "allreduce": self.allreduce,
            "barrier": self.barrier,
            "sources": self.sources,
            "host_links": [link.document for link in self.host_links],
            "rma": self.rma,
        }

    @classmethod
    def of_document(cls, document: dict) -> CommAtlas:
        """The atlas a document carries (its link classes those of this version)."""
        curves = (document.get("pingpong") or {}).items()
        return cls(
            document.get("fingerprint"),
            document.get("mpi"),
            {k: v for k, v in curves if k in (*LINK_CLASSES, UNKNOWN_LINK) and v},
            list(document.get("allreduce") or []),
            list(document.get("barrier") or []),
            list(document.get("sources") or []),
            [HostLink.of_document(link) for link in document.get("host_links") or []],
            {
                op: {k: v for k, v in curves.items() if k in (*LINK_CLASSES, UNKNOWN_LINK) and v}
                for op, curves in (document.get("rma") or {}).items()
                if op in RMA_OPERATIONS
            },
        )

    @property
    def empty(self) -> bool:
        return not (self.pingpong or self.allreduce or self.barrier or self.rma)


def stored_comm_atlas(store: Store, fingerprint: str, mpi: str | None = None) -> CommAtlas:
    """The comm atlas of machine `fingerprint` in `store`, of the MPI family `mpi` only where
    given ("openmpi", "mpich": another MPI's latencies are not this one's); a part not stored is
    empty and its source sentence says so."""
    atlas = CommAtlas(fingerprint, mpi=mpi)

    def of_mpi(benchmark: str) -> list[StoredRow]:
        found = stored_rows(store, fingerprint, benchmark)
        return [row for row in found if mpi is None or family_of(row.document) == mpi]

    def link(row: StoredRow) -> str | None:
        if row.params.get("direction", "uni") != "uni" or "bytes" not in row.params:
            return None
        return pingpong_link(row.document, row.topology, row.host)

    links = latest_per(of_mpi("comm.pingpong"), link)
    for name, (_, rows) in sorted(links.items()):
        sizes: dict[int, list[float]] = {}
        for row in rows:
            sizes.setdefault(int(row.params["bytes"]), row.figures)
        atlas.pingpong[name] = [[b, *f] for b, f in sorted(sizes.items())]
    atlas.sources.append(sources_sentence("comm.pingpong", links, str))

    def processes(row: StoredRow) -> int | None:
        return int(row.params["processes"]) if "processes" in row.params else None

    reduce = latest_per(of_mpi("comm.allreduce"), processes)
    points: dict[tuple[int, int], list[float]] = {}
    for p, (_, rows) in reduce.items():
        for row in rows:
            if "bytes" in row.params:
                points.setdefault((p, int(row.params["bytes"])), row.figures)
    atlas.allreduce = [[p, b, *f] for (p, b), f in sorted(points.items())]
    atlas.sources.append(sources_sentence("comm.allreduce", reduce, lambda p: f"P={p}"))
    barrier = latest_per(of_mpi("comm.barrier"), processes)
    atlas.barrier = [[p, *rows[0].figures] for p, (_, rows) in sorted(barrier.items())]
    atlas.sources.append(sources_sentence("comm.barrier", barrier, lambda p: f"P={p}"))
    atlas.rma, rma_parts = _stored_rma(of_mpi("comm.rma"))
    atlas.sources.append(sources_sentence("comm.rma", rma_parts, lambda k: f"{k[0]} on {k[1]}"))
    atlas.host_links = stored_host_links(store, fingerprint, mpi)
    if atlas.host_links:
        pairs = "; ".join(f"{' - '.join(link.hosts)}: {link.source}" for link in atlas.host_links)
        atlas.sources.append(f"pairs of hosts measured alone ({pairs})")
    return atlas


def _stored_rma(rows: list[StoredRow]) -> tuple[dict[str, dict[str, list[list[float]]]], dict]:
    """comm.rma's case "one" as curves op -> link -> [[bytes, m, lo, hi]], each size from the
    latest run that measured it (a run with a small max_count does not shorten the curve; of
    the element types of one size the fastest), and the parts {(op, link, run): (run, [])}."""
    points: dict[tuple[str, str, int], tuple[int, list[float]]] = {}
    for row in rows:  # the latest run first
        if row.params.get("case") != RMA_CASE or row.params.get("op") not in RMA_OPERATIONS:
            continue
        link = pingpong_link(row.document, row.topology, row.host)
        key = (str(row.params["op"]), link, int(row.params["bytes"]))
        run, figures = points.setdefault(key, (row.run_id, row.figures))
        if run == row.run_id and row.figures[MEDIAN] < figures[MEDIAN]:
            points[key] = (run, row.figures)
    curves: dict[str, dict[str, list[list[float]]]] = {}
    parts: dict[tuple[str, str, int], tuple[int, list]] = {}
    for (op, link, size), (run, figures) in sorted(points.items()):
        curves.setdefault(op, {}).setdefault(link, []).append([size, *figures])
        parts[(op, link, run)] = (run, [])
    return curves, parts


def stored_atlas(store: Store, fingerprint: str) -> dict[str, Any]:
    """What app.hydro's model reads: {"pingpong": [[bytes, one-way ns], ...] (the stored curve
    of the most sizes), "allreduce": [[processes, ns], ...] (8 B), "source": sentence}; a
    missing part is an empty list and the sentence says so."""
    atlas = stored_comm_atlas(store, fingerprint)
    said = [atlas.sources[0]]
    pingpong: list[list[float]] = []
    if atlas.pingpong:
        link = max(atlas.pingpong, key=lambda k: len(atlas.pingpong[k]))
        pingpong = [[b, m] for b, m, _, _ in atlas.pingpong[link]]
        said.append(f"the curve on {link}")
    allreduce = [[p, m] for p, b, m, _, _ in atlas.allreduce if b == ALLREDUCE_BYTES]
    said.append(
        f"{atlas.sources[1]}, 8 B"
        if allreduce
        else "no stored 8-byte comm.allreduce of this machine"
    )
    return {"pingpong": pingpong, "allreduce": allreduce, "source": "; ".join(said)}


def allreduce_ns(allreduce: list[list[float]], processes: int) -> float:
    """app.hydro's 8-byte allreduce ([[processes, ns]]) on `processes` ranks: 0 on one; else
    interpolated in log2 P."""
    if processes <= 1:
        return 0.0
    counts = [math.log2(p) for p, _ in allreduce]
    return between(math.log2(processes), counts, [float(t) for _, t in allreduce])


def _over_processes(points: list[list[float]], processes: int, at: int) -> float:
    """Interpolated in log2 P among `points` ([[P, ..., figure at index `at`]])."""
    counts = [math.log2(max(p[0], 1)) for p in points]
    return between(math.log2(processes), counts, [float(p[at]) for p in points])


def allreduce_curve(atlas: CommAtlas, processes: int) -> list[list[float]]:
    """MPI_Allreduce time against size on `processes` ranks, as a ping-pong-like curve
    ([[bytes, m, lo, hi]]), each measured size interpolated in log2 P."""
    by_size: dict[float, list[list[float]]] = {}
    for point in atlas.allreduce:
        by_size.setdefault(point[1], []).append(point)
    return [
        [size, *(_over_processes(points, processes, 2 + f) for f in (MEDIAN, LOW, HIGH))]
        for size, points in sorted(by_size.items())
    ]


def collective_ns(
    atlas: CommAtlas, call: str, processes: int, size: float, figure: int = MEDIAN
) -> float | None:
    """The time of one collective call on `processes` ranks moving `size` bytes per rank, from
    the atlas; None for a call the atlas does not measure, or not at that many processes (none
    measured as many: a collective's growth beyond is not known)."""
    if processes <= 1:
        return 0.0
    points = {"MPI_Allreduce": atlas.allreduce, "MPI_Barrier": atlas.barrier}.get(call)
    if not points or max(point[0] for point in points) < processes:
        return None
    if call == "MPI_Allreduce":
        return message_ns(allreduce_curve(atlas, processes), size, figure)
    return _over_processes(atlas.barrier, processes, 1 + figure)


def rma_ns(atlas: CommAtlas, op: str, link: str, size: float, figure: int = MEDIAN) -> float | None:
    """The time of one one-sided `op` ("get", "put") of `size` bytes and its completion on
    `link`, from comm.rma's curve; beyond its largest size (comm.rma reaches 64 doubles) plus
    what the extra bytes take on the link's ping-pong curve. None where the atlas lacks the
    curve, or beyond its end the ping-pong curve."""
    curve = atlas.rma.get(op, {}).get(link)
    if curve is None:
        return None
    largest = float(curve[-1][0])
    if size <= largest:
        return message_ns(curve, size, figure)
    pingpong = atlas.pingpong.get(link)
    if pingpong is None:
        return None
    extra = message_ns(pingpong, size, figure) - message_ns(pingpong, largest, figure)
    return float(curve[-1][1 + figure]) + max(extra, 0.0)
