"""How the communication results of a run become series and figures (no plotting here).

Shared by the report sections (comm/section_*.py) and the terminal summary, so both say
the same thing: ping-pong curves per direction and link, peaks, collectives vs process count with
their growth, RMA latencies, and the ranks as they reported themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from perfatlas.comm.analysis_comm import Growth, growth, rank_hosts
from perfatlas.common.units import format_size
from perfatlas.report.blocks import Block, Details, Table
from perfatlas.report.series import Series, group_series
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

PINGPONG = "comm.pingpong"


def link(result: Result) -> str:
    return str((result.document.get("placement") or {}).get("link") or "unknown link")


def pair_hosts(result: Result, ranks: tuple[int, int]) -> str:
    hosts = rank_hosts(result.document)
    a, b = (hosts.get(r, "?") for r in ranks)
    return a if a == b else f"{a}↔{b}"


# -- ping-pong ------------------------------------------------------------------------------------
def pingpong_key(result: Result) -> tuple:
    p = result.params
    return (p.get("direction", "uni"), link(result), int(p.get("peer", 1)), int(p.get("np", 2)))


def pingpong_label(key: tuple, results: list[Result] | None = None) -> str:
    direction, link_, peer, np_ = key
    where = f" on {pair_hosts(results[0], (0, peer))}" if results else ""
    way = "unidirectional" if direction == "uni" else "bidirectional"
    return f"{way}, {link_}, ranks 0↔{peer}{where} (np={np_})"


def pingpong_series(data: RunData, metric: str) -> list[Series]:
    results = data.measured(PINGPONG, metric)
    series = group_series(results, pingpong_key, lambda k: "")
    for s in series:
        s.label = pingpong_label(s.key, s.results)
    return series


@dataclass(frozen=True)
class PingPongFigures:
    """The headline figures of one ping-pong line."""

    label: str
    key: tuple
    smallest: Result | None  # latency at the smallest message
    peak: Result | None  # the bandwidth result with the highest median
    half_peak_bytes: float | None  # smallest message reaching half the peak bandwidth (n_1/2)


def pingpong_figures(data: RunData) -> list[PingPongFigures]:
    latency = {s.key: s for s in pingpong_series(data, "latency_ns")}
    bandwidth = {s.key: s for s in pingpong_series(data, "bandwidth_Bps")}
    figures = []
    for key in dict.fromkeys([*latency, *bandwidth]):
        lat, bw = latency.get(key), bandwidth.get(key)
        peak = max(bw.results, key=lambda r: r.median) if bw else None
        half = None
        if peak is not None:
            reaching = [r for r in bw.results if r.median >= peak.median / 2]
            half = float(min(r.params["bytes"] for r in reaching)) if reaching else None
        label = (lat or bw).label
        figures.append(PingPongFigures(label, key, lat.results[0] if lat else None, peak, half))
    return figures


# -- collectives ----------------------------------------------------------------------------------
COLLECTIVES = ("comm.allreduce", "comm.barrier")


@dataclass
class CollectiveLine:
    """One collective at one vector size vs process count."""

    benchmark: str
    bytes: int
    results: list[Result]  # sorted by processes

    @property
    def processes(self) -> np.ndarray:
        return np.array([r.params["processes"] for r in self.results], dtype=float)

    @property
    def label(self) -> str:
        op = self.benchmark.removeprefix("comm.")
        return op if op == "barrier" else f"{op} {format_size(self.bytes)}"

    def values(self, field: str) -> np.ndarray:
        return np.array([getattr(r, field) for r in self.results], dtype=float)

    @property
    def growth(self) -> Growth:
        return growth(self.processes, self.values("median"))


def collective_lines(data: RunData) -> list[CollectiveLine]:
    lines: dict[tuple, list[Result]] = {}
    for benchmark in COLLECTIVES:
        for r in data.measured(benchmark, "latency_ns"):
            key = (benchmark, int(r.params.get("bytes", 0)), int(r.params.get("np", 0)))
            lines.setdefault(key, []).append(r)
    return [
        CollectiveLine(key[0], key[1], sorted(rs, key=lambda r: r.params["processes"]))
        for key, rs in lines.items()
    ]


def per_rank_medians(result: Result) -> list[float]:
    """Each rank's median of its samples (collectives keep samples rank-major)."""
    per = int((result.document.get("derived") or {}).get("samples_per_rank") or 0)
    if not per or not result.samples:
        return []
    return [
        float(np.median(result.samples[i : i + per])) for i in range(0, len(result.samples), per)
    ]


# -- RMA ------------------------------------------------------------------------------------------
RMA = "comm.rma"
CASE_TITLES = {
    "one": "one accessor",
    "two_same_node": "two accessors of one host at once",
    "each_side": "one accessor on each side",
    "shared_memory": "shared-memory window (load/store)",
}


def rma_results(data: RunData) -> list[Result]:
    return data.measured(RMA, "latency_ns")


def rma_unmeasurable(data: RunData) -> dict[str, str]:
    """case -> why, for the RMA cases that could not be measured here."""
    found = {}
    for r in data.results:
        if r.benchmark == RMA and r.not_measurable:
            found.setdefault(str(r.params.get("case")), r.not_measurable)
    return found


# -- placement ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    command: str
    notes: list[str]
    ranks: list[dict]
    benchmarks: list[str]


def placements(results: list[Result]) -> list[Placement]:
    """Each distinct launch of these results with the ranks as they reported themselves."""
    seen: dict[str, Placement] = {}
    for r in results:
        ranks = (r.document.get("placement") or {}).get("ranks")
        if not ranks:
            continue
        launch = r.document.get("launch") or {}
        key = json.dumps([launch.get("command"), ranks], sort_keys=True)
        if key not in seen:
            seen[key] = Placement(
                str(launch.get("command", "?")), list(launch.get("notes") or []), ranks, []
            )
        if r.benchmark not in seen[key].benchmarks:
            seen[key].benchmarks.append(r.benchmark)
    return list(seen.values())


def placement_details(results: list[Result]) -> Details | None:
    """The ranks of each launch as they reported themselves: host, CPU set, the CPU it ran on."""
    found = placements(results)
    if not found:
        return None
    blocks: list[Block] = []
    for p in found:
        rows = [
            [
                str(rank.get("rank")),
                str(rank.get("host")),
                str(rank.get("cpus_allowed")),
                str(rank.get("cpu")),
                str(rank.get("pid")),
            ]
            for rank in p.ranks
        ]
        notes = f" Launcher notes: {'; '.join(p.notes)}." if p.notes else ""
        blocks.append(
            Table(
                ["rank", "host (MPI_Get_processor_name)", "CPUs allowed", "ran on CPU", "pid"],
                rows,
                caption=f"{', '.join(p.benchmarks)}: {p.command}.{notes}",
                numeric=(0, 3, 4),
            )
        )
    return Details(
        "Rank placement as the ranks reported it (never assumed from the launch request)", blocks
    )


def ranks_context(result: Result, ranks: list[int]) -> str:
    """'rank 0 on vm (cpus 0, ran on 0) ↔ rank 1 on vm (cpus 1, ran on 1)'."""
    by_rank = {
        int(r["rank"]): r for r in (result.document.get("placement") or {}).get("ranks") or []
    }
    parts = []
    for rank in ranks:
        r = by_rank.get(rank)
        if r is None:
            continue
        parts.append(
            f"rank {rank} on {r.get('host')} (cpus {r.get('cpus_allowed')}, ran on {r.get('cpu')})"
        )
    return " ↔ ".join(parts)
