"""Where a CPU sits in a machine, and the class of the link between two places.

The comm atlas is measured per link class and a profile's pairs are joined with it per link
class (issue 32), so both classify with this one rule: ranks on two hosts are `across hosts`;
on one host, on two packages `across packages`; in one package, under one last-level cache (an
AMD CCX, an Intel package's L3; an L2 where there is no L3) `same core group`, else `same
package`. A place is read from pa-topology's document: each PU's indices of its caches, package
and NUMA node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

SAME_CORE_GROUP = "same core group"
SAME_PACKAGE = "same package"
ACROSS_PACKAGES = "across packages"
ACROSS_HOSTS = "across hosts"
LINK_CLASSES = (SAME_CORE_GROUP, SAME_PACKAGE, ACROSS_PACKAGES, ACROSS_HOSTS)


class Placed(Protocol):
    host: str | None
    core_group: int | None
    package: int | None


@dataclass(frozen=True)
class CpuPlace:
    """A CPU's place on its host; None where the topology does not list it."""

    host: str | None
    core_group: int | None  # the index of the last-level cache over the CPU (L3, else L2)
    package: int | None
    numa_node: int | None


def _index(pu: dict | None, key: str) -> int | None:
    """A PU's index of `key` in pa-topology's document; None where it has none (-1)."""
    value = pu.get(key) if pu else None
    return value if isinstance(value, int) and value >= 0 else None


def pus_by_cpu(topology: dict | None) -> dict[int, dict]:
    """pa-topology's PUs by OS index."""
    return {pu["os_index"]: pu for pu in (topology or {}).get("pus", [])}


def cpu_place(pus: dict[int, dict], host: str | None, cpu: int | None) -> CpuPlace:
    """The place of `cpu` on `host`, from pus_by_cpu's map of that host's topology."""
    pu = pus.get(cpu) if cpu is not None else None
    l3 = _index(pu, "l3")
    return CpuPlace(
        host=host,
        core_group=l3 if l3 is not None else _index(pu, "l2"),
        package=_index(pu, "package"),
        numa_node=_index(pu, "numa_node"),
    )


def link_class(a: Placed, b: Placed) -> str | None:
    """The class of the link between two places; None where they do not tell."""
    if a.host is None or b.host is None:
        return None
    if a.host != b.host:
        return ACROSS_HOSTS
    if a.package is None or b.package is None:
        return None
    if a.package != b.package:
        return ACROSS_PACKAGES
    if a.core_group is not None and a.core_group == b.core_group:
        return SAME_CORE_GROUP
    return SAME_PACKAGE
