"""Where each rank of a profile ran, and which link class carries each pair's messages.

The library reads each rank's placement back (native/ipm/placement.c): the CPUs it may run on
and the CPU its MPI_Init thread was seen on most. Mapped through the run's hwloc topology, that
CPU gives the rank's core group (the PUs that share its last-level cache: an AMD CCX, an Intel
package's L3), package and NUMA node; two ranks' places give the class of the link between them
(perfatlas.machine.link_class), the classes the comm atlas is measured per. The topology is the
machine perfatlas ran on; ranks on other hosts are placed with it too, as on a cluster of one
node type, and say so (`topology`)."""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.machine.link_class import cpu_place, pus_by_cpu


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


def rank_places(document: dict, topology: dict | None, here: str | None) -> list[RankPlace]:
    """Each rank of a profile document, placed with `topology` (pa-topology's document of the
    host `here`, where perfatlas ran)."""
    pus = pus_by_cpu(topology)
    places = []
    for row in document.get("ranks") or []:
        cpu, host = row.get("cpu"), row.get("host")
        place = cpu_place(pus, host, cpu)
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
                core_group=place.core_group,
                package=place.package,
                numa_node=place.numa_node,
                topology=source,
            )
        )
    return places
