"""Where each rank of a profile ran, and which link class carries each pair's messages.

The library reads each rank's placement back (native/ipm/placement.c): the CPUs it may run on
and the CPU its MPI_Init thread was seen on most. Mapped through the run's hwloc topology, that
CPU gives the rank's core group (the PUs that share its last-level cache: an AMD CCX, an Intel
package's L3), package and NUMA node; two ranks' places give the class of the link between them,
the classes the comm atlas is measured per (issue 32): same core group, same package, across
packages, across hosts. The topology is the machine perfatlas ran on; ranks on other hosts are
placed with it too, as on a cluster of one node type, and say so (`topology`)."""

from __future__ import annotations

from dataclasses import dataclass

SAME_CORE_GROUP = "same core group"
SAME_PACKAGE = "same package"
ACROSS_PACKAGES = "across packages"
ACROSS_HOSTS = "across hosts"
LINK_CLASSES = (SAME_CORE_GROUP, SAME_PACKAGE, ACROSS_PACKAGES, ACROSS_HOSTS)


@dataclass(frozen=True)
class RankPlace:
    """One rank's place; None where it is not known (a library older than placement, a CPU the
    topology does not list)."""

    rank: int
    host: str | None
    cpus_allowed: str | None  # as the kernel lists them: "0-3,8"
    cpu: int | None  # the CPU its MPI_Init thread was seen on most
    core_group: int | None  # the index of the last-level cache over that CPU (L3, else L2)
    package: int | None
    numa_node: int | None
    topology: str  # "this host", "assumed: this host's" (a rank elsewhere), "none"


def _index(pu: dict | None, key: str) -> int | None:
    """A PU's index of `key` in pa-topology's document; None where it has none (-1)."""
    value = pu.get(key) if pu else None
    return value if isinstance(value, int) and value >= 0 else None


def rank_places(document: dict, topology: dict | None, here: str | None) -> list[RankPlace]:
    """Each rank of a profile document, placed with `topology` (pa-topology's document of the
    host `here`, where perfatlas ran)."""
    pus = {pu["os_index"]: pu for pu in (topology or {}).get("pus", [])}
    places = []
    for row in document.get("ranks") or []:
        cpu, host = row.get("cpu"), row.get("host")
        pu = pus.get(cpu) if cpu is not None else None
        l3 = _index(pu, "l3")
        if topology is None:
            source = "none"
        else:
            source = "this host" if host is None or host == here else "assumed: this host's"
        places.append(
            RankPlace(
                rank=row["rank"],
                host=host,
                cpus_allowed=row.get("cpus_allowed"),
                cpu=cpu,
                core_group=l3 if l3 is not None else _index(pu, "l2"),
                package=_index(pu, "package"),
                numa_node=_index(pu, "numa_node"),
                topology=source,
            )
        )
    return places


def link_class(a: RankPlace, b: RankPlace) -> str | None:
    """The class of the link between two ranks' places; None where their places do not tell."""
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
