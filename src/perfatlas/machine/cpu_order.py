"""The order in which threads take PUs, computed from the topology document alone.

- close (compact): neighbouring cores in hwloc order, one PU per core, and only then the cores'
  further PUs (SMT siblings), so that T <= cores threads never share a core; this is OpenMP's
  OMP_PROC_BIND=close over OMP_PLACES=cores (OpenMP 5.2, 10.1.3) and KMP_AFFINITY=compact,1.
- spread (scatter): the outermost level varies fastest: one PU on each NUMA node (or package)
  in turn, then the next package within each node, then the next core, SMT siblings last; so
  T threads cover as many nodes, packages and cores as T allows (Intel's KMP_AFFINITY=scatter).
Memory-only NUMA nodes (CXL, HBM, GPU memory) hold no PU and are never given a thread. A PU
without a core (a synthetic topology) is its own core; one without a package, its own package.
"""

from __future__ import annotations


def _core_key(pu: dict) -> tuple:
    return (pu["package"], pu["core"]) if pu.get("core", -1) >= 0 else ("pu", pu["os_index"])


def cores(topology: dict) -> list[list[dict]]:
    """The PUs grouped by core, cores in hwloc order, PUs of a core in hwloc order."""
    by_core: dict[tuple, list[dict]] = {}
    for pu in topology["pus"]:
        by_core.setdefault(_core_key(pu), []).append(pu)
    return list(by_core.values())


def close_order(topology: dict) -> list[int]:
    groups = cores(topology)
    rounds = max((len(group) for group in groups), default=0)
    return [group[i]["os_index"] for i in range(rounds) for group in groups if i < len(group)]


def spread_order(topology: dict) -> list[int]:
    """Sort every PU by (SMT rank, core rank in its package, package rank in its outer group,
    outer group): the reverse of the hierarchy, so the outermost level varies fastest."""
    groups = cores(topology)
    packages = {pu.get("package", -1) for pu in topology["pus"]}
    nodes = {pu.get("numa_node", -1) for pu in topology["pus"]}
    # NUMA nodes inside packages (AMD NPS4, Intel SNC) or packages inside nodes (a group of
    # sockets per node): the level with fewer objects is the outer one.
    nodes_outer = len(nodes) <= len(packages)

    def outer(pu: dict) -> int:
        return pu.get("numa_node", -1) if nodes_outer else pu.get("package", -1)

    def inner(pu: dict) -> int:
        return pu.get("package", -1) if nodes_outer else pu.get("numa_node", -1)

    outer_rank: dict[int, int] = {}
    inner_rank: dict[tuple[int, int], int] = {}
    cores_seen: dict[tuple[int, int], int] = {}
    keyed = []
    for group in groups:
        o, i = outer(group[0]), inner(group[0])
        o_rank = outer_rank.setdefault(o, len(outer_rank))
        i_rank = inner_rank.setdefault((o, i), sum(1 for key in inner_rank if key[0] == o))
        c_rank = cores_seen[(o, i)] = cores_seen.get((o, i), -1) + 1
        for smt, pu in enumerate(group):
            keyed.append(((smt, c_rank, i_rank, o_rank), pu["os_index"]))
    return [cpu for _, cpu in sorted(keyed)]
