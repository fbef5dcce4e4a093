"""Plans: every launch a run or a sweep would make, decided from the topology before anything runs.

`perfatlas run SUITE` and `perfatlas sweep` build a Plan and execute its launches; with --plan
they print it instead (or, with --json, its document) and measure and store nothing. A plan is
built from the suite's own expansion (perfatlas.plan.suite.expand, perfatlas.plan.sweep_grid) and each
benchmark's own resolution, so what is planned is what is measured. A step that does not fit the
machine (more threads than PUs, a NUMA node or a PU that does not exist, a size beyond memory)
refuses the whole plan, naming the step, before the database is opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list, format_size
from perfatlas.machine.placement import pus_in_order
from perfatlas.machine.topology import Machine
from perfatlas.plan import suite as suites
from perfatlas.plan.planned import Planned
from perfatlas.plan.sweep_grid import Slot, planned_launches
from perfatlas.plan.time_estimate import launch_seconds


@dataclass(frozen=True)
class PlannedLaunch:
    """One launch of a plan: where it comes from, what it runs, what it is estimated to take."""

    step: str  # "step 3" of a suite, or "sweep"
    planned: Planned
    seconds: float


@dataclass(frozen=True)
class Plan:
    title: str
    launches: tuple[PlannedLaunch, ...]
    repeat: int  # --repeat: every launch made this many times
    machine: Machine

    @property
    def planned(self) -> list[Planned]:
        return [launch.planned for launch in self.launches]

    @property
    def seconds(self) -> float:
        return self.repeat * sum(launch.seconds for launch in self.launches)

    def rows(self) -> list[dict[str, Any]]:
        return [describe(launch, self.machine) for launch in self.launches]

    def document(self) -> dict[str, Any]:
        """The plan for machines (--plan --json)."""
        return {
            "schema": "perfatlas.plan.measurement_plan/1",
            "title": self.title,
            "machine": {
                "cpu_model": self.machine.topology.get("cpu_model"),
                "pus": len(self.machine.pus),
                "numa_nodes": self.machine.numa_nodes,
                "this_system": self.machine.this_system,
            },
            "repeat": self.repeat,
            "launches": self.rows(),
            "estimated_seconds": round(self.seconds, 1),
        }


def with_np(benchmark: Benchmark, raw: dict, np_: str | None) -> dict:
    """--np N replaces the rank count of every communication step (comm.*: e.g. a hostfile's
    slots); the application proxies keep theirs (a square grid, a weak-scaling series)."""
    if np_ is None or not benchmark.name.startswith("comm."):
        return raw
    return {**raw, "np": np_}


def suite_plan(
    name: str,
    definition: dict,
    machine: Machine,
    threads: list[int] | None = None,
    np_: str | None = None,
    repeat: int = 1,
) -> Plan:
    """Every launch of a suite, step by step; a step that does not fit refuses the plan."""
    launches: list[PlannedLaunch] = []
    for number, step in enumerate(definition["step"], start=1):
        where = f"step {number} ({step.get('benchmark', '?')})"
        try:
            for m in suites.expand({**definition, "step": [step]}, machine, threads):
                raw = with_np(m.benchmark, m.raw, np_)
                if m.slots:  # a sweep step
                    check_points(list(m.slots), machine)
                    planned = planned_launches(m.benchmark, raw, list(m.slots), machine)
                else:
                    planned = [Planned(m.benchmark, m.benchmark.resolved(raw, machine))]
                for item in planned:
                    check_fits(item, machine)
                    launches.append(_launch(f"step {number}", item, machine))
        except UserError as error:
            raise UserError(f"suite {name}, {where}: {error}") from None
    return Plan(f"suite {name}", tuple(launches), repeat, machine)


def sweep_plan(
    benchmark: Benchmark, raw: dict[str, Any], slots: list[Slot], machine: Machine
) -> Plan:
    """Every launch of `perfatlas sweep`, in its interleaved order."""
    launches = []
    check_points(slots, machine)
    for item in planned_launches(benchmark, raw, slots, machine):
        check_fits(item, machine)
        launches.append(_launch("sweep", item, machine))
    return Plan(f"sweep {benchmark.name}", tuple(launches), 1, machine)


def check_fits(item: Planned, machine: Machine) -> None:
    """What resolution does not already refuse: more threads than the machine has PUs."""
    _check_threads(item.params.get("threads"), machine)


def check_points(slots: list[Slot], machine: Machine) -> None:
    """A sweep's thread counts, before a placement gives a benchmark that pins its threads
    only as many PUs as there are (which would quietly measure fewer threads)."""
    for slot in slots:
        _check_threads(slot.point.threads, machine)


def _check_threads(threads: Any, machine: Machine) -> None:
    if isinstance(threads, int) and threads > len(machine.pus):
        raise UserError(
            f"threads={threads} exceeds the {len(machine.pus)} PUs of this machine "
            f"({format_cpu_list(machine.pus)})"
        )


def _launch(step: str, item: Planned, machine: Machine) -> PlannedLaunch:
    return PlannedLaunch(
        step,
        item,
        launch_seconds(item.benchmark.name, item.params, machine, _launcher(item) != "local"),
    )


def _launcher(item: Planned) -> str:
    """How the benchmark itself launches (local or mpirun); --launcher then says where."""
    return item.benchmark.launcher_for(item.params)


def describe(launch: PlannedLaunch, machine: Machine) -> dict[str, Any]:
    """One launch as the plan shows it: benchmark, parameters, size, PUs, memory, launcher."""
    item = launch.planned
    params = item.params
    launcher = _launcher(item)
    ranks = params.get("np") if launcher != "local" or "np" in params else None
    return {
        "step": launch.step,
        "benchmark": item.benchmark.name,
        "parameters": item.benchmark.label(params),
        "placement": item.placement.label if item.placement else None,
        "note": item.note.strip(" ()") or None,
        "bytes": params.get("bytes"),
        "cpus": _cpus(item, machine),  # as the plan shows it
        "cpu_list": _cpu_list(item, machine),  # the PUs threads are pinned to, where known
        "memory": _memory(item, machine),
        "launcher": launcher,
        "ranks": ranks if launcher != "local" else None,
        "not_measurable": item.benchmark.unmeasurable(params, machine),
        "estimated_seconds": round(launch.seconds, 2),
    }


def _cpus(item: Planned, machine: Machine) -> str:
    params = item.params
    pinned = _cpu_list(item, machine)
    if isinstance(params.get("cpus"), list):
        return format_cpu_list(pinned)
    threads = params.get("threads")
    if item.placement is not None:
        if pinned is None:  # --bind none
            return f"{threads or 1} thread(s), unbound (the OS decides)"
        return f"{format_cpu_list(pinned)} (OpenMP {item.placement.bind} binding)"
    if "np" in params and _launcher(item) != "local":
        per_rank = f" x {threads} thread(s)" if threads else ""
        return f"{params['np']} rank(s){per_rank}, placed by mpirun"
    if threads:
        return f"{threads} thread(s), unbound"
    return "-"


def _cpu_list(item: Planned, machine: Machine) -> list[int] | None:
    cpus = item.params.get("cpus")
    if isinstance(cpus, list):
        return cpus
    if item.placement is not None and item.placement.bind != "none":
        return pus_in_order(machine, item.placement.bind)[: int(item.params.get("threads") or 1)]
    return None


def _memory(item: Planned, machine: Machine) -> str:
    if item.placement is not None:
        return item.placement.mempolicy
    node = item.params.get("node")
    if node is None:
        return "-"
    if node == "remote":
        remote = item.benchmark.remote_node(item.params, machine)
        return "remote: not measurable here" if remote is None else f"node {remote} (remote)"
    if str(node).isdigit():
        return f"node {node}"
    return str(node)


def print_plan(plan: Plan) -> None:
    """The plan on standard output: each step with its launches, one line each, and the total."""
    machine = plan.machine
    source = "" if machine.this_system else "; topology from HWLOC_XMLFILE, not this system"
    print(
        f"plan of {plan.title}: {len(plan.launches)} launches on "
        f"{machine.topology.get('cpu_model', '?')} ({len(machine.pus)} PUs, "
        f"{len(machine.numa_nodes)} NUMA node(s){source})"
    )
    rows = plan.rows()
    columns = [
        [
            " ".join(p for p in (row["parameters"], row["placement"], row["note"]) if p)
            + (f" [{row['not_measurable']}]" if row["not_measurable"] else ""),
            _size(row["bytes"]),
            f"PUs {row['cpus']}",
            f"memory {row['memory']}",
            row["launcher"] + (f" -np {row['ranks']}" if row["ranks"] else ""),
            _duration(row["estimated_seconds"]),
        ]
        for row in rows
    ]
    widths = [max((len(c[i]) for c in columns), default=0) for i in range(6)]
    step = None
    for row, cells in zip(rows, columns):
        if row["step"] != step:
            step = row["step"]
            same = [r for r in rows if r["step"] == step]
            total = sum(r["estimated_seconds"] for r in same)
            print(f"{step}: {row['benchmark']}, {len(same)} launch(es), {_duration(total)}")
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip())
    repeat = f", each launch {plan.repeat} times" if plan.repeat > 1 else ""
    print(
        f"estimated wall time: {_duration(plan.seconds)}{repeat} (model: "
        "docs/plans-and-topologies.md); nothing was measured or stored"
    )


def _size(value: int | list[int] | None) -> str:
    """One working set, or a size series measured in one launch (docs/sizing.md)."""
    if not value:
        return ""
    if isinstance(value, list):
        return f"sizes {format_size(min(value))}..{format_size(max(value))} ({len(value)} points)"
    return f"size {format_size(value)}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
