"""How the memory results of a run become series and derived figures (no plotting here).

Shared by the report sections and the terminal summary, so both say the same thing: latency
curves and their levels, bandwidth lines and peaks, contention ratios with bootstrap CIs.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.common.stats import Ratio, ratio
from perfatlas.common.units import format_size
from perfatlas.mem.analysis_levels import Level, detect_levels
from perfatlas.report.series import Series, group_series
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

MIN_LEVEL_POINTS = 5  # working sets a latency series needs before its levels are detected


# -- latency --------------------------------------------------------------------------------------
def _document_value(result: Result, key: str):
    """A per-document value the native side writes beside or inside params (cpu, owner, load)."""
    if result.document.get(key) is not None:
        return result.document[key]
    return result.params.get(key)


def measuring_cpu(result: Result) -> int | None:
    """The PU that ran the chase (the two-thread method writes one document per PU)."""
    cpu = _document_value(result, "cpu")
    if cpu is not None:
        return int(cpu)
    cpus = result.params.get("cpus") or []
    return int(cpus[0]) if cpus else None


def latency_key(result: Result) -> tuple:
    """(chain, page, measuring cpu, node, owner): owner is set for the two-thread method only."""
    p = result.params
    owner = None
    if len(p.get("cpus") or []) == 2:
        owner = _document_value(result, "owner")
        owner = p["cpus"][0] if owner is None else owner
    return (
        p.get("chain", "page"),
        p.get("page", 4096),
        measuring_cpu(result),
        str(p.get("node", "local")),
        owner,
    )


def latency_label(key: tuple) -> str:
    chain, page, cpu, node, owner = key
    text = f"chain={chain}, {format_size(page)} pages, cpu {cpu}, node {node}"
    if owner is not None:
        text += f", memory of cpu {owner}"
    return text


def latency_series(data: RunData) -> list[Series]:
    return group_series(data.measured("mem.latency", "latency_ns"), latency_key, latency_label)


def is_two_thread(series: Series) -> bool:
    return series.key[4] is not None


def primary_latency(series: list[Series]) -> Series | None:
    """The reference curve for the levels: page chain, 4 KiB pages, local memory, one thread."""
    single = [s for s in series if not is_two_thread(s) and len(s.results) >= MIN_LEVEL_POINTS]
    preferred = [
        s for s in single if s.key[0] == "page" and s.key[1] == 4096 and s.key[3] == "local"
    ]
    candidates = preferred or single
    return max(candidates, key=lambda s: len(s.results)) if candidates else None


def levels_of(series: Series, data: RunData) -> list[Level]:
    if len(series.results) < MIN_LEVEL_POINTS:
        return []
    return detect_levels(series.sizes, series.values("median"), data.caches)


# -- bandwidth ------------------------------------------------------------------------------------
def threads_of(result: Result) -> int:
    return result.params.get("threads") or len(result.params.get("cpus") or [0])


def bandwidth_key(result: Result) -> tuple:
    """(op, threads, store, page, node)."""
    p = result.params
    return (
        p.get("op", "?"),
        threads_of(result),
        p.get("store", "normal"),
        p.get("page", 4096),
        str(p.get("node", "local")),
    )


def line_label(key: tuple) -> str:
    """The line within an op's panel: threads and stores (and page/node when not default)."""
    _, threads, store, page, node = key
    text = f"{threads} thread{'s' * (threads > 1)}, {'non-temporal' if store == 'nt' else 'normal'} stores"
    if page != 4096:
        text += f", {format_size(page)} pages"
    if node != "local":
        text += f", node {node}"
    return text


def bandwidth_series(data: RunData) -> list[Series]:
    return group_series(
        data.measured("mem.bandwidth", "bandwidth_Bps"),
        bandwidth_key,
        lambda key: f"{key[0]}: {line_label(key)}",
    )


def peak(series: Series) -> Result:
    return max(series.results, key=lambda r: r.median)


@dataclass(frozen=True)
class PeakRow:
    """One operation with one kind of stores: per thread count, its peak and its largest working set."""

    op: str
    variant: str  # "normal stores", "non-temporal stores" (+ page size / node when not default)
    peak: dict[int, Result]  # threads -> the best working set's result
    largest: dict[int, Result]  # threads -> the largest working set's result


def bandwidth_peaks(series: list[Series]) -> tuple[list[int], list[PeakRow]]:
    """The thread counts measured, and a row per (op, stores, page, node) in measuring order."""
    threads = sorted({s.key[1] for s in series})
    rows: dict[tuple, PeakRow] = {}
    for s in series:
        op, count, store, page, node = s.key
        variant = line_label((op, 2, store, page, node)).split(", ", 1)[1]
        row = rows.setdefault((op, store, page, node), PeakRow(op, variant, {}, {}))
        row.peak[count] = peak(s)
        row.largest[count] = s.results[-1]
    return threads, list(rows.values())


# -- contention -----------------------------------------------------------------------------------
ALONE = "none"


def load_of(result: Result) -> str:
    """What the other core did during this round: none (alone), read or write."""
    load = _document_value(result, "load")
    return ALONE if load is None else str(load)


@dataclass(frozen=True)
class ContentionRatio:
    measure: str  # latency | bandwidth
    metric: str
    bytes: int
    load: str  # read | write
    alone: Result
    loaded: Result
    ratio: Ratio  # loaded / alone, bootstrap 95 % CI

    @property
    def slowdown(self) -> float:
        """How many times slower with the load (>1 is worse, for latency and bandwidth alike)."""
        return self.ratio.median if self.metric == "latency_ns" else 1.0 / self.ratio.median


def contention_ratios(data: RunData) -> list[ContentionRatio]:
    """Loaded / alone for every measure, working set and load kind, from the raw samples."""
    results = data.measured("mem.contention")
    rounds: dict[tuple, dict[str, Result]] = {}
    for r in results:
        key = (r.params.get("measure", "latency"), r.metric, r.params["bytes"])
        rounds.setdefault(key, {})[load_of(r)] = r
    ratios = []
    for (measure, metric, n_bytes), by_load in sorted(
        rounds.items(), key=lambda kv: (kv[0][0] != "latency", kv[0])
    ):
        alone = by_load.get(ALONE)
        if alone is None:
            continue
        for load in sorted(k for k in by_load if k != ALONE):
            loaded = by_load[load]
            ratios.append(
                ContentionRatio(
                    measure,
                    metric,
                    n_bytes,
                    load,
                    alone,
                    loaded,
                    ratio(loaded.samples, alone.samples),
                )
            )
    return ratios
