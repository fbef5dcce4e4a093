"""The links between hosts in the comm atlas, each pair of hosts apart: a throttled host, a bad
cable or a far switch makes one host's link slower than the others of its class (across
hosts), which one curve per class hides (issue 32).

What is stored, for each pair of hosts, from the latest run that measured it alone:
- a comm.pingpong between ranks on the two hosts: its one-way time against size;
- a comm.distance scan (rank 0's host to each other, one pair at a time): the latency at
  latency_bytes, and the bandwidth as the one-way time of a message of bandwidth_bytes (a
  window of such messages streamed: bytes over bandwidth).
A pair of hosts never measured together is modelled as a star network (hosts behind a switch,
each on a link of its own): a pair is as fast as the slower of its two hosts' links, and a
host's link as fast as the fastest pair measured with it -- so a distance scan from rank 0,
whose host is in every pair, tells each host's link."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from perfatlas.comm.atlas_rows import StoredRow, family_of, latest_per, stored_rows
from perfatlas.comm.curve_interpolation import HIGH, LOW, MEDIAN, message_ns
from perfatlas.store.database import Store

SLOW_LINK = 2.0  # a host's link this many times slower than the fastest host's is slow


@dataclass(frozen=True)
class HostLink:
    """One pair of hosts as measured: [[bytes, one-way ns median, low, high], ...]."""

    hosts: tuple[str, str]  # sorted
    curve: list[list[float]]
    source: str  # "comm.distance of run 3"

    @property
    def document(self) -> dict:
        return {"hosts": list(self.hosts), "curve": self.curve, "source": self.source}

    @classmethod
    def of_document(cls, document: dict) -> HostLink:
        a, b = document["hosts"]
        return cls((a, b), [list(map(float, p)) for p in document["curve"]], document["source"])


def _hosts(row: StoredRow) -> tuple[str, str] | None:
    """The two hosts of the ranks a result involves, sorted; None unless they differ."""
    placement = row.document.get("placement") or {}
    hosts = {int(r["rank"]): r.get("host") for r in placement.get("ranks") or [] if "rank" in r}
    involved = [hosts.get(int(r)) for r in (placement.get("involved") or [])[:2]]
    if len(involved) != 2 or None in involved or involved[0] == involved[1]:
        return None
    return tuple(sorted(involved))  # type: ignore[return-value]


def _points(store: Store, fingerprint: str) -> Iterator[tuple[StoredRow, list]]:
    """Each stored figure of a pair of hosts as a point [bytes, ns median, low, high]."""
    for row in stored_rows(store, fingerprint, "comm.pingpong"):
        if row.params.get("direction", "uni") == "uni" and "bytes" in row.params:
            yield row, [float(row.params["bytes"]), *row.figures]
    for row in stored_rows(store, fingerprint, "comm.distance"):
        if "latency_bytes" in row.params:
            yield row, [float(row.params["latency_bytes"]), *row.figures]
    for row in stored_rows(store, fingerprint, "comm.distance", "bandwidth_Bps"):
        size = float(row.params.get("bandwidth_bytes") or 0)
        median, low, high = row.figures
        if size > 0 and min(median, low, high) > 0:  # the slowest bandwidth is the longest time
            yield row, [size, *(1e9 * size / f for f in (median, high, low))]


def stored_host_links(store: Store, fingerprint: str, mpi: str | None = None) -> list[HostLink]:
    """The pairs of hosts of machine `fingerprint` measured alone, of MPI family `mpi` where
    given, each from the latest run that measured it."""
    found = [
        (row, point)
        for row, point in _points(store, fingerprint)
        if mpi is None or family_of(row.document) == mpi
    ]
    found.sort(key=lambda item: -item[0].run_id)  # latest_per takes the latest run first
    by_row = {id(row): point for row, point in found}
    latest = latest_per([row for row, _ in found], _hosts)
    links = []
    for hosts, (run, rows) in sorted(latest.items()):
        sizes: dict[float, list[float]] = {}
        for row in rows:
            point = by_row[id(row)]
            sizes.setdefault(point[0], point)
        benchmarks = sorted({row.document.get("benchmark", "comm") for row in rows})
        source = f"{', '.join(benchmarks)} of run {run}"
        links.append(HostLink(hosts, [sizes[s] for s in sorted(sizes)], source))  # type: ignore[arg-type]
    return links


def host_ns(links: list[HostLink], host: str, size: float, figure: int = MEDIAN) -> float | None:
    """The one-way time of a `size`-byte message on `host`'s link: that of the fastest pair
    measured with it; None where none was."""
    times = [message_ns(link.curve, size, figure) for link in links if host in link.hosts]
    return min(times) if times else None


def pair_ns(
    links: list[HostLink], a: str, b: str, size: float, figure: int = MEDIAN
) -> float | None:
    """The one-way time of a `size`-byte message between hosts `a` and `b`: as measured, else
    the slower of their links' (the star model); None where a host's link is not known."""
    pair = tuple(sorted((a, b)))
    for link in links:
        if link.hosts == pair:
            return message_ns(link.curve, size, figure)
    times = [host_ns(links, host, size, figure) for host in (a, b)]
    return None if None in times else max(times)  # type: ignore[type-var]


def slow_hosts(links: list[HostLink], hosts: list[str], size: float) -> list[str]:
    """Those of `hosts` whose link is SLOW_LINK times slower than the fastest host's at `size`
    (medians; the slow one's interval low against the fast one's high)."""
    measured = sorted({host for link in links for host in link.hosts})
    if len(measured) < 3:  # two hosts' one pair says nothing of which end is slow
        return []
    fastest = min(host_ns(links, host, size, HIGH) or 0.0 for host in measured)
    return [
        host
        for host in hosts
        if fastest > 0 and (host_ns(links, host, size, LOW) or 0.0) > SLOW_LINK * fastest
    ]
