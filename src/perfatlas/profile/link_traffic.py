"""What the join with the comm atlas (atlas_join) needs of a profile that only the rank files
know, made where they are read and kept in the profile document (docs/profile.md):
- `link_traffic`: the messages by region, call, size bucket and the class of the link that
  carried them (each record's peer placed with rank_placement in the topology of the machine
  perfatlas runs on); a message counts once, at its sender (the kind `send`; one-sided
  transfers, which the matrix counts too, are joined apart: one_sided_traffic);
- `point_to_point`: each rank's time in point-to-point calls (sends, receives and the Wait and
  Test family) per region, from which the join tells transfer from waiting;
- `pair_traffic`: the heaviest sender -> receiver pairs, with the time of the calls that sent
  their messages (sends: a one-sided transfer call returns before its bytes moved), from which
  the join tells each pair's achieved bandwidth."""

from __future__ import annotations

from collections import defaultdict

from perfatlas.machine.link_class import ACROSS_HOSTS, link_class
from perfatlas.profile.partial import region_paths
from perfatlas.profile.rank_placement import RankPlace

SENDER_KINDS = ("send",)  # point-to-point only: one-sided is one_sided_traffic's
TOP_PAIR_TRAFFIC = 64  # the heaviest pairs kept with their time
POINT_TO_POINT_KINDS = ("send", "recv", "irecv", "completion")


def link_traffic(ranks: list[dict], document: dict, places: list[RankPlace]) -> list[dict]:
    """Rows {"region" (an id of the document's regions), "call", "bucket", "link" (a link class,
    null where the places do not tell), "hosts" (across hosts only: the two, sorted, whose link
    the atlas may know apart: perfatlas.comm.host_links), "messages", "bytes", "time_s" (in the
    calls that sent them)}, summed over the ranks' files."""
    ids = {region["path"]: region["id"] for region in document["regions"]}
    by_rank = {place.rank: place for place in places}
    sums: dict[tuple, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for rank in ranks:
        paths = region_paths(rank)
        here = by_rank.get(rank["rank"])
        for record in rank["records"]:
            if record.get("kind") not in SENDER_KINDS or record["peer"] is None:
                continue
            there = by_rank.get(record["peer"])
            link = link_class(here, there) if here and there else None
            region = ids.get(paths.get(record["region"], ""))
            if region is None:
                continue
            hosts = tuple(sorted((here.host, there.host))) if link == ACROSS_HOSTS else ()  # type: ignore[union-attr]
            entry = sums[(region, record["call"], record["bucket"], link, hosts)]
            entry[0] += record["count"]
            entry[1] += record["bytes"]
            entry[2] += record["total_s"]
    return [
        {"region": r, "call": c, "bucket": b, "link": link, **({"hosts": list(h)} if h else {}),
         "messages": m, "bytes": n, "time_s": t}
        for (r, c, b, link, h), (m, n, t) in sorted(sums.items(), key=_row_order)
    ]  # fmt: skip


def _row_order(item: tuple) -> tuple:
    (region, call, bucket, link, hosts), _ = item
    return region, call, bucket, link or "", hosts


def point_to_point(ranks: list[dict], document: dict) -> list[dict]:
    """Rows {"region", "calls" (the point-to-point calls made in it), "rank_s" ([[rank,
    seconds], ...] for the ranks that made one), "floor_s" (each record's calls at the time of
    its fastest call, summed: what the calls took where no call waited)}."""
    ids = {region["path"]: region["id"] for region in document["regions"]}
    seconds: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    calls: dict[int, set[str]] = defaultdict(set)
    floor: dict[int, float] = defaultdict(float)
    for rank in ranks:
        paths = region_paths(rank)
        for record in rank["records"]:
            region = ids.get(paths.get(record["region"], ""))
            if record.get("kind") in POINT_TO_POINT_KINDS and region is not None:
                seconds[region][rank["rank"]] += record["total_s"]
                calls[region].add(record["call"])
                floor[region] += record["count"] * (record.get("min_s") or 0.0)
    return [
        {"region": r, "calls": sorted(calls[r]), "rank_s": sorted(map(list, by.items())),
         "floor_s": floor[r]}
        for r, by in sorted(seconds.items())
    ]  # fmt: skip


def pair_traffic(
    ranks: list[dict], places: list[RankPlace], top: int = TOP_PAIR_TRAFFIC
) -> list[dict]:
    """The `top` pairs that sent the most bytes: {"sender", "receiver", "link", "messages",
    "bytes", "time_s", "best_Bps" (the bandwidth of its fastest sending call: a record's mean
    message over its fastest call, the most of its records; null without bytes)}, the most
    bytes first."""
    by_rank = {place.rank: place for place in places}
    sums: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for rank in ranks:
        for record in rank["records"]:
            if record.get("kind") in SENDER_KINDS and record["peer"] is not None:
                entry = sums[(rank["rank"], record["peer"])]
                entry[0] += record["count"]
                entry[1] += record["bytes"]
                entry[2] += record["total_s"]
                fastest = record.get("min_s") or 0.0
                if fastest > 0 and record["count"]:
                    entry[3] = max(entry[3], record["bytes"] / record["count"] / fastest)
    heaviest = sorted(sums.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))[:top]
    pairs = []
    for (sender, receiver), (messages, volume, seconds, best) in heaviest:
        here, there = by_rank.get(sender), by_rank.get(receiver)
        link = link_class(here, there) if here and there else None
        pairs.append({"sender": sender, "receiver": receiver, "link": link,
                      "messages": messages, "bytes": volume, "time_s": seconds,
                      "best_Bps": best or None})  # fmt: skip
    return pairs
