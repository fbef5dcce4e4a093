"""The caches hwloc reports for this machine, one per level as a single thread sees them: the
reference that measured levels (perfatlas.mem.analysis_levels) are held against, and that the
report marks on every working-set axis."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cache:
    """One hwloc cache level as a single thread sees it (one instance)."""

    level: int
    type: str  # "data" or "unified"
    size_bytes: int

    @property
    def name(self) -> str:
        return f"L{self.level}" + ("d" if self.type == "data" else "")


def hwloc_caches(topology: dict) -> list[Cache]:
    """Data and unified caches, one per level (the largest instance), in level order."""
    by_level: dict[int, Cache] = {}
    for entry in topology.get("caches") or []:
        if entry.get("type") not in ("data", "unified") or not entry.get("size_bytes"):
            continue
        cache = Cache(int(entry["level"]), entry["type"], int(entry["size_bytes"]))
        if cache.level not in by_level or cache.size_bytes > by_level[cache.level].size_bytes:
            by_level[cache.level] = cache
    return [by_level[level] for level in sorted(by_level)]
