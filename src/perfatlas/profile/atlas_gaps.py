"""What a profile's join needs of the comm atlas that the store lacks, measured right after the
program (`perfatlas profile --atlas auto`, the default) within `--atlas-budget` seconds.

A gap is what the join names as missing (atlas_join): a ping-pong curve on a link class, a
one-sided operation's curve on one (comm.rma, case "one"), a collective at the program's
process count. Each is measured as `perfatlas measure` would, in a
run of its own stored in the same database (suite "profile atlas"), so that the next profile of
this machine finds it: a ping-pong or one-sided access between two CPUs of the program's ranks
whose places give that link class (the launcher binds the pair to them), an allreduce or barrier at the program's
process count. A program on several hosts is measured on its hosts, with its launcher's words
(its hostfile, agent and transport options, less those that place ranks: host_launch): the
ping-pong across hosts between its first two, a collective with as many ranks on each host as
it had, and on three hosts or more the links of each (comm.distance from the first host: which
host's link is slow, perfatlas.comm.host_links). The measured ranks' places are read back like
every comm result's, so a pair that landed elsewhere is classed where it ran, and the join says
what is still missing. What perfatlas cannot measure is said with the reason: hosts a program
reached without mpirun or mpiexec, a link whose places are unknown, what exceeds the budget."""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perfatlas.benchmarks.benchmark import get
from perfatlas.comm.comm_atlas import RMA_CASE, UNKNOWN_LINK, CommAtlas
from perfatlas.common.units import format_size
from perfatlas.launch.launchers import LaunchOptions, detect_flavour, mpirun_path
from perfatlas.machine.link_class import ACROSS_HOSTS, cpu_place, link_class, pus_by_cpu
from perfatlas.machine.topology import Machine
from perfatlas.profile.atlas_join import LACKING_CURVE, LACKING_RMA, atlas_join
from perfatlas.profile.command import FAMILY_NAMES, LAUNCHER, launcher_options
from perfatlas.profile.rank_placement import RankPlace
from perfatlas.run.executor import get_executor
from perfatlas.run.runner import Runner
from perfatlas.store.database import Store

SUITE = "profile atlas"
COLLECTIVE_BENCHMARKS = {"MPI_Allreduce": "comm.allreduce", "MPI_Barrier": "comm.barrier"}
SAMPLES = 7  # per point: enough for a median's 95 % interval, few enough to stay quick


@dataclass(frozen=True)
class Gap:
    what: str  # as the join names it: "ping-pong curve on same package"
    benchmark: str | None = None  # what measures it; None: perfatlas does not, here
    params: dict[str, Any] = field(default_factory=dict)
    mpirun_args: tuple[str, ...] = ()  # the pair's binding
    why_not: str | None = None


def _pair(places: list[RankPlace], link: str, topology: dict | None) -> tuple[int, int] | None:
    """Two CPUs of this host whose places give `link`: those of two ranks placed so, or, where
    two such ranks shared a CPU (unbound, they were seen on one most), that of the first and
    another CPU of the topology that gives the link with it."""
    here = [p for p in places if p.topology == "this host" and p.cpu is not None]
    pus = pus_by_cpu(topology)
    for i, a in enumerate(here):
        for b in here[i + 1 :]:
            if link_class(a, b) != link:
                continue
            if a.cpu != b.cpu:
                return a.cpu, b.cpu  # type: ignore[return-value]
            for cpu in sorted(pus):
                if cpu != a.cpu and link_class(a, cpu_place(pus, a.host, cpu)) == link:
                    return a.cpu, cpu  # type: ignore[return-value]
    return None


def _binding(cpus: tuple[int, int]) -> tuple[str, ...]:
    """mpirun words that put ranks 0 and 1 on `cpus` (Open MPI or MPICH's hydra)."""
    listed = f"{cpus[0]},{cpus[1]}"
    if detect_flavour(mpirun_path()).family == "mpich":
        return ("-bind-to", f"user:{listed}")
    return ("--cpu-list", listed, "--bind-to", "cpu-list:ordered")


# A launcher's options that say how many ranks go where: dropped from the program's launch
# words where a gap is measured on hosts of its own choosing (each takes a value).
PLACING_OPTIONS = {
    "openmpi": {"-np", "-n", "--np", "-c", "--n", "--map-by", "-map-by", "--rankfile", "-rf",
                "--host", "-host", "-H", "--npernode", "-npernode", "-N", "--ppr", "-ppr",
                "--rank-by", "-rank-by"},
    "mpich": {"-n", "-np", "-hosts", "-host", "-ppn", "-f", "-machinefile", "-hostfile"},
}  # fmt: skip


def host_launch(command: list[str], hosts: list[str]) -> tuple[str, ...] | None:
    """The program's launcher words (its hostfile, transport and agent options), less those
    that place ranks, plus those that put a rank on each of `hosts` (a host listed twice: two
    ranks there); None where the program was not started by a launcher of Open MPI or
    MPICH."""
    if not command or not LAUNCHER.match(Path(command[0]).name):
        return None
    family = detect_flavour(command[0]).family
    if family not in PLACING_OPTIONS:
        return None
    rest, words = command[1:], []
    for start, count in launcher_options(rest):
        if rest[start].split("=", 1)[0] not in PLACING_OPTIONS[family]:
            words += rest[start : start + count]
    listed = ",".join(f"{host}:{count}" for host, count in Counter(hosts).items())
    if family == "mpich":
        return (*words, "-hosts", listed)
    return (*words, "--host", listed, "--map-by", "node")


def _hosts(places: list[RankPlace]) -> list[str]:
    """The program's hosts, in the order of their first rank."""
    return list(dict.fromkeys(p.host for p in places if p.host))


def _pair_gap(
    what: str, link: str, params: dict[str, Any], places: list[RankPlace],
    topology: dict | None, command: list[str], benchmark: str = "comm.pingpong",
) -> Gap:  # fmt: skip
    """A two-rank `benchmark` on `link`: on the program's first two hosts, or on two CPUs of
    this host whose places give the link."""
    if link == ACROSS_HOSTS:
        words = host_launch(command, _hosts(places)[:2])
        if words is None:
            return Gap(what, why_not="across hosts needs the program's hosts, and its launcher "
                       "is not mpirun or mpiexec: measure it with 'perfatlas run comm "
                       "--hostfile H'")  # fmt: skip
        return Gap(what, benchmark, params, words)
    if link == UNKNOWN_LINK:
        return Gap(what, why_not="the ranks' places are not known")
    cpus = _pair(places, link, topology)
    if cpus is None:
        return Gap(what, why_not="no two ranks of this host are placed so")
    return Gap(what, benchmark, params, _binding(cpus))


def _collective_gap(
    what: str, tasks: int, largest: float, places: list[RankPlace], command: list[str]
) -> Gap:
    """A collective at the program's process count: on this host, or on the program's hosts
    as many ranks on each as it had where it ran on several."""
    call = what.split(" on ")[0]
    benchmark = COLLECTIVE_BENCHMARKS.get(call)
    if benchmark is None:
        return Gap(what, why_not=f"the atlas does not measure {call}")
    params: dict[str, Any] = {"np": tasks, "samples": SAMPLES}
    if benchmark == "comm.allreduce":
        params.update(min_bytes=8, max_bytes=max(8, 8 * int(-(-largest // 8))))
    if len(_hosts(places)) < 2:
        return Gap(what, benchmark, params)
    words = host_launch(command, [p.host for p in places if p.host])
    if words is None:
        return Gap(what, why_not="the program ran on several hosts, and its launcher is not "
                   "mpirun or mpiexec")  # fmt: skip
    return Gap(what, benchmark, params, words)


def _rma_gaps(
    document: dict, atlas: CommAtlas, places: list[RankPlace], topology: dict | None,
    command: list[str],
) -> list[Gap]:  # fmt: skip
    """comm.rma (case "one") on each link whose one-sided transfers the atlas has no curve of
    their operation for, or one that ends below their largest mean size (beyond it the join
    takes the ping-pong's bandwidth): one run per link, get and put, to that size in doubles."""
    needed: dict[str, tuple[set[str], float]] = {}
    for row in document.get("one_sided") or []:
        for transfer in row["transfers"]:
            link = transfer["link"] or UNKNOWN_LINK
            ops, largest = needed.get(link, (set(), 0.0))
            size = transfer["bytes"] / transfer["messages"] if transfer["messages"] else 0.0
            needed[link] = (ops | {transfer["op"]}, max(largest, size))
    most = int(next(p.maximum for p in get("comm.rma").params if p.name == "max_count") or 1)
    gaps = []
    for link, (ops, largest) in sorted(needed.items()):
        largest = min(largest, 8.0 * most)  # beyond what comm.rma reaches: the ping-pong's
        curves = [atlas.rma.get(op, {}).get(link) for op in sorted(ops)]
        if all(curve and curve[-1][0] >= largest for curve in curves):
            continue
        count = min(most, max(64, 1 << math.ceil(math.log2(max(largest / 8, 1)))))
        what = f"one-sided curves on {link} to {format_size(count * 8)}"
        params = {"np": 2, "samples": SAMPLES, "cases": RMA_CASE, "max_count": count}
        gaps.append(_pair_gap(what, link, params, places, topology, command, "comm.rma"))
    return gaps


def _host_links_gap(atlas: CommAtlas, places: list[RankPlace], command: list[str]) -> list[Gap]:
    """The links of the program's hosts (comm.distance from its first host to each other),
    where it runs on three or more (two hosts' one pair cannot tell which end is slow) and the
    atlas lacks a link of one of them."""
    hosts = _hosts(places)
    measured = {host for link in atlas.host_links for host in link.hosts}
    lacking = [host for host in hosts if host not in measured]
    if len(hosts) < 3 or not lacking:
        return []
    what = f"links of hosts {', '.join(lacking)}"
    words = host_launch(command, hosts)
    if words is None:
        return [Gap(what, why_not="the program's launcher is not mpirun or mpiexec")]
    params = {"np": len(hosts), "samples": SAMPLES, "bandwidth_bytes": 65536, "window": 8}
    return [Gap(what, "comm.distance", params, words)]


def atlas_gaps(
    document: dict,
    atlas: CommAtlas,
    places: list[RankPlace],
    topology: dict | None,
    command: list[str] | None = None,
) -> list[Gap]:
    """What the join of `document` with `atlas` lacks, each with how to measure it (`places`:
    its ranks' in `topology`, this host's; `command`: the program's, whose launcher words
    reach its hosts)."""
    command = command or []
    join = atlas_join({**document, "atlas": atlas.document})
    sizes = {
        call["call"]: call["bytes"] / call["count"]
        for call in document["calls"]
        if call.get("collective") and call["count"]
    }
    gaps = []
    pair = {"np": 2, "samples": SAMPLES}
    for what in join.missing:
        if what.startswith(LACKING_CURVE):
            link = what.removeprefix(LACKING_CURVE)
            gaps.append(_pair_gap(what, link, pair, places, topology, command))
        elif not what.startswith(LACKING_RMA):  # those: _rma_gaps, one run per link
            call = what.split(" on ")[0]
            largest = sizes.get(call, 8.0)
            gaps.append(_collective_gap(what, document["tasks"], largest, places, command))
    gaps += _rma_gaps(document, atlas, places, topology, command)
    return gaps + _host_links_gap(atlas, places, command)


def measure_gaps(
    gaps: list[Gap],
    store: Store,
    machine: Machine,
    budget_s: float,
    argv: list[str],
    atlas_mpi: str | None = None,
) -> list[str]:
    """Measure what can be of `gaps`, each in a run of its own, the estimated time of all of it
    within `budget_s`, with perfatlas's launcher where its MPI is `atlas_mpi` (the program's;
    None: any); returns a sentence per gap: measured (run N, seconds) or why not."""
    said, spent = [], 0.0
    ours = detect_flavour(mpirun_path()).family
    if atlas_mpi is not None and ours != atlas_mpi:
        return [
            f"{gap.what}: not measured, perfatlas's launcher runs {FAMILY_NAMES.get(ours, ours)}, "
            f"the program {FAMILY_NAMES.get(atlas_mpi, atlas_mpi)} (measure with "
            "PERFATLAS_MPIRUN and PERFATLAS_BIN_DIR of that MPI)"
            for gap in gaps
        ]
    for gap in gaps:
        if gap.benchmark is None:
            said.append(f"{gap.what}: not measured, {gap.why_not}")
            continue
        benchmark = get(gap.benchmark)
        params = benchmark.resolve({k: str(v) for k, v in gap.params.items()}, machine)
        estimate = benchmark.estimate(params, machine)
        if spent + estimate > budget_s:
            said.append(
                f"{gap.what}: not measured, {estimate:.0f} s estimated would exceed the "
                f"--atlas-budget of {budget_s:g} s"
            )
            continue
        options = replace(LaunchOptions.from_environment(), mpirun_args=gap.mpirun_args)
        runner = Runner(store, machine, get_executor("local", options), remeasure=False)
        started = time.monotonic()
        with runner.run(SUITE, argv):
            runner.measure(benchmark, params)
        took = time.monotonic() - started
        spent += max(took, estimate)
        said.append(f"{gap.what}: measured in {took:.1f} s, run {runner.run_id}")
    return said
