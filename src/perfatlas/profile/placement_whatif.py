"""What-if placement: a rank order that puts a profile's heaviest pairs on its fastest links, and
the point-to-point time the comm atlas predicts it saves (issue 32).

The slots are the places the program's ranks ran in (rank_placement: host, package, core
group); an order gives each rank a slot. Its cost is the atlas's time for the communication
matrix: each pair's messages, both ways, at their mean size, on the link between the two slots
(perfatlas.machine.link_class; across hosts the pair of hosts' own, perfatlas.comm.host_links,
where the atlas measured it). The order is found in two steps:
- top-down, the ranks are cut into the hosts' slots, then each host's into its packages, then
  each package's into its core groups, by METIS (perfatlas.machine.graph_partition) on the
  matrix weighted by what a pair would lose on the slower link;
- then pairwise swaps of ranks in different places (Kernighan & Lin, Bell Syst. Tech. J. 49,
  1970), the best first, while one lowers the predicted cost, within SWAP_WORK pairs
  re-costed (a few passes for hundreds of ranks, where METIS's order stands nearly as it is).
An order is suggested where it saves at least MIN_SAVING of the current predicted time."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from perfatlas.comm.comm_atlas import HIGH, LOW, MEDIAN, UNKNOWN_LINK, CommAtlas, message_ns
from perfatlas.comm.host_links import pair_ns
from perfatlas.machine.graph_partition import partition
from perfatlas.machine.link_class import ACROSS_HOSTS, link_class
from perfatlas.profile.atlas_join import LACKING_CURVE
from perfatlas.profile.rank_placement import RankPlace

MIN_SAVING = 0.05  # of the current predicted time: less is not worth a new order
EDGE_SCALE = 2**28  # the sum of METIS's integer edge weights at one cut
SWAP_WORK = 500_000  # pairs re-costed by the swap passes, at most (a pass is O(P^2) swaps)
LEVELS: tuple[Callable[[RankPlace], Hashable], ...] = (
    lambda p: p.host,
    lambda p: (p.host, p.package),
    lambda p: (p.host, p.package, p.core_group),
)


@dataclass(frozen=True)
class WhatIf:
    """The suggested order, or why there is none (`reason`)."""

    # order[r]: the slot of rank r, named by the rank that ran there
    order: list[int] = field(default_factory=list)
    hosts: list[str | None] = field(default_factory=list)  # each rank's host in the suggestion
    cpus: list[str | None] = field(default_factory=list)  # each rank's CPUs in the suggestion
    current_s: list[float] = field(default_factory=list)  # predicted: median, low, high
    suggested_s: list[float] = field(default_factory=list)
    moved: int = 0  # ranks that change place
    reason: str | None = None

    @property
    def saving_s(self) -> float:
        return self.current_s[MEDIAN] - self.suggested_s[MEDIAN] if self.order else 0.0


@dataclass(frozen=True)
class _Traffic:
    a: int
    b: int
    directions: tuple[tuple[float, float], ...]  # (messages, bytes) a -> b, b -> a


class _Cost:
    """The atlas's predicted time of the matrix's pairs for an order of slots."""

    def __init__(self, pairs: list[_Traffic], slots: list[RankPlace], atlas: CommAtlas):
        self.pairs, self.slots, self.atlas = pairs, slots, atlas
        self.lacking: set[str] = set()
        self.work = 0  # pairs re-costed by swap_gain
        self._times: dict[tuple[int, Hashable, int], float] = {}
        self.by_rank: dict[int, list[int]] = defaultdict(list)
        for index, pair in enumerate(pairs):
            self.by_rank[pair.a].append(index)
            self.by_rank[pair.b].append(index)

    def link(self, s: int, t: int) -> Hashable:
        a, b = self.slots[s], self.slots[t]
        if a.host and b.host and a.host != b.host:
            return (ACROSS_HOSTS, *sorted((a.host, b.host)))
        return link_class(a, b) or UNKNOWN_LINK

    def _one_way(self, key: Hashable, size: float, figure: int) -> float:
        if isinstance(key, tuple):
            measured = pair_ns(self.atlas.host_links, key[1], key[2], size, figure)
            if measured is not None:
                return measured
            key = ACROSS_HOSTS
        curve = self.atlas.pingpong.get(key)  # type: ignore[call-overload]
        if curve is None:
            self.lacking.add(f"{LACKING_CURVE}{key}")
            return 0.0
        return message_ns(curve, size, figure)

    def pair(self, index: int, order: list[int], figure: int = MEDIAN) -> float:
        """Seconds of pair `index` with rank r in slot order[r]."""
        pair = self.pairs[index]
        key = self.link(order[pair.a], order[pair.b])
        cached = self._times.get((index, key, figure))
        if cached is None:
            cached = sum(
                m * self._one_way(key, volume / m, figure) * 1e-9
                for m, volume in pair.directions
                if m
            )
            self._times[(index, key, figure)] = cached
        return cached

    def total(self, order: list[int], figure: int = MEDIAN) -> float:
        return sum(self.pair(i, order, figure) for i in range(len(self.pairs)))

    def swap_gain(self, order: list[int], a: int, b: int) -> float:
        """How much swapping ranks a and b's slots lowers the cost."""
        touched = set(self.by_rank[a]) | set(self.by_rank[b])
        self.work += len(touched)
        before = sum(self.pair(i, order) for i in touched)
        order[a], order[b] = order[b], order[a]
        after = sum(self.pair(i, order) for i in touched)
        order[a], order[b] = order[b], order[a]
        return before - after


def _pairs(matrix: dict) -> list[_Traffic]:
    sent, messages = matrix["bytes"], matrix["messages"]
    pairs = []
    for a in range(len(sent)):
        for b in range(a + 1, len(sent)):
            directions = ((messages[a][b], sent[a][b]), (messages[b][a], sent[b][a]))
            if any(m for m, _ in directions):
                pairs.append(_Traffic(a, b, directions))
    return pairs


def _split(ranks: list[int], slots: list[int], level: int, cost: _Cost, order: list[int]) -> None:
    """Give `ranks` the `slots` (as many), cutting them by LEVELS[level] and below."""
    if level == len(LEVELS):
        for rank, slot in zip(sorted(ranks), sorted(slots)):
            order[rank] = slot
        return
    groups: dict[Hashable, list[int]] = {}
    for slot in slots:
        groups.setdefault(LEVELS[level](cost.slots[slot]), []).append(slot)
    if len(groups) == 1:
        _split(ranks, slots, level + 1, cost, order)
        return
    members = list(groups.values())
    apart, together = members[0][0], members[1][0]
    within = members[0][1] if len(members[0]) > 1 else None
    local = {rank: i for i, rank in enumerate(ranks)}
    losses = {}
    trial = list(order)
    for index, pair in enumerate(cost.pairs):
        if pair.a not in local or pair.b not in local:
            continue
        trial[pair.a], trial[pair.b] = apart, together
        lost = cost.pair(index, trial)
        if within is not None:
            trial[pair.b] = within
            lost -= cost.pair(index, trial)
        losses[(local[pair.a], local[pair.b])] = max(lost, 0.0)
    total = sum(losses.values()) or 1.0  # METIS sums weights in 32 bits: scaled to 2^28 in all
    edges = {edge: max(1, round(EDGE_SCALE * lost / total)) for edge, lost in losses.items()}
    parts = partition(len(ranks), edges, [len(m) for m in members])
    for k, group in enumerate(members):
        _split([r for r in ranks if parts[local[r]] == k], group, level + 1, cost, order)


def _swapped(order: list[int], cost: _Cost) -> list[int]:
    """Pairwise swaps, the best first, while one lowers the cost; of equal swaps, that of the
    highest ranks (the lowest keep their places: rank 0 where the launcher put it)."""
    order, budget = list(order), cost.work + SWAP_WORK
    while cost.work < budget:
        best, swap = 0.0, None
        for a in reversed(range(len(order))):
            for b in reversed(range(a + 1, len(order))):
                if cost.link(order[a], order[b]) == cost.link(order[a], order[a]):
                    continue  # the same place: a swap changes nothing
                gain = cost.swap_gain(order, a, b)
                if gain > best * (1 + 1e-9) + 1e-15:
                    best, swap = gain, (a, b)
            if cost.work >= budget:
                break
        if swap is None:
            break
        a, b = swap
        order[a], order[b] = order[b], order[a]
    return order


def placement_whatif(document: dict, places: list[RankPlace]) -> WhatIf:
    """The what-if of a profile document (its matrix, its atlas), its ranks at `places`."""
    atlas_document, matrix = document.get("atlas"), document.get("matrix")
    if not atlas_document or atlas_document.get("missing"):
        return WhatIf(reason="no comm atlas to predict with")
    if matrix is None:
        return WhatIf(reason="the profile has no communication matrix")
    tasks = document["tasks"]
    by_rank = {place.rank: place for place in places}
    slots = [by_rank.get(rank) for rank in range(tasks)]
    if None in slots or any(s.host is None for s in slots):  # type: ignore[union-attr]
        return WhatIf(reason="the ranks' places are not known")
    pairs = _pairs(matrix)
    if not pairs:
        return WhatIf(reason="the ranks sent no point-to-point or one-sided messages")
    cost = _Cost(pairs, slots, CommAtlas.of_document(atlas_document))  # type: ignore[arg-type]
    current = list(range(tasks))
    partitioned = [0] * tasks
    _split(list(range(tasks)), list(range(tasks)), 0, cost, partitioned)
    candidates = [_swapped(current, cost), _swapped(partitioned, cost)]
    best = min(candidates, key=lambda o: (cost.total(o), sum(r != s for r, s in enumerate(o)), o))
    now = [cost.total(current, f) for f in (MEDIAN, LOW, HIGH)]
    then = [cost.total(best, f) for f in (MEDIAN, LOW, HIGH)]
    if cost.lacking:
        return WhatIf(reason=f"the atlas has no {' and no '.join(sorted(cost.lacking))}")
    if now[MEDIAN] - then[MEDIAN] <= MIN_SAVING * now[MEDIAN]:
        return WhatIf(
            current_s=now,
            suggested_s=now,
            reason=f"no order found saves {100 * MIN_SAVING:g} % of the {now[MEDIAN]:.3g} s "
            "the atlas predicts for this one",
        )
    return WhatIf(
        order=best,
        hosts=[slots[s].host for s in best],  # type: ignore[union-attr]
        cpus=[slots[s].cpus_allowed for s in best],  # type: ignore[union-attr]
        current_s=now,
        suggested_s=then,
        moved=sum(r != s for r, s in enumerate(best)),
    )
