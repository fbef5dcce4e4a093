"""perfatlas sweep: one benchmark over thread counts x thread binding x memory policy, repeated.

Every point of the cross product is launched `repeat` times, and the launches are interleaved:
round r runs every point once, in the plan's order rotated by r, so that slow drifts of the machine
(thermal state, a background job, page-cache state) spread over all points instead of biasing the
ones measured last (Hoefler & Belli, SC15, on interleaving compared configurations). Each launch is
its own stored result, committed as it completes; its document carries the point, the repetition,
and the placement it obtained (perfatlas.machine.placement.obtained), so run-to-run variability and
speedup are computed later from what is stored (perfatlas.experiments.analysis_param_sweep).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark
from perfatlas.common.errors import UserError
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.launch.contract import MEMORY_FIX
from perfatlas.machine.placement import Placement, obtained
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Planned

SWEEP_KEYS = ("threads", "bind", "mempolicy")  # the axes; a point's other parameters are fixed


@dataclass(frozen=True)
class Point:
    threads: int
    placement: Placement

    @property
    def label(self) -> str:
        return f"threads={self.threads} {self.placement.label}"


def plan(threads: list[int], binds: list[str], mempolicies: list[str]) -> list[Point]:
    """The cross product, thread counts varying fastest within each policy."""
    unique = [list(dict.fromkeys(axis)) for axis in (binds, mempolicies, threads)]
    return [
        Point(t, Placement(bind, mempolicy)) for bind, mempolicy, t in itertools.product(*unique)
    ]


@dataclass(frozen=True)
class Slot:
    """One launch of a sweep: its point, its round, its place in the whole schedule."""

    point: Point
    repetition: int
    position: int
    repeat: int

    def annotate(self, machine: Machine) -> Callable[[dict], list[WarningRecord]]:
        return lambda document: _annotate(document, self, machine)


def schedule(points: list[Point], repeat: int) -> list[Slot]:
    """The launches in order: round r is the plan rotated by r places."""
    order = []
    for repetition in range(repeat):
        shift = repetition % len(points)
        for point in points[shift:] + points[:shift]:
            order.append(Slot(point, repetition, len(order), repeat))
    return order


def check_sweepable(benchmark: Benchmark, raw: dict[str, Any]) -> None:
    if not any(p.name == "threads" for p in benchmark.params):
        raise UserError(f"{benchmark.name} takes no threads parameter: it cannot be swept")
    fixed = sorted(set(raw) & {"threads", "cpus"})
    if fixed:
        raise UserError(
            f"give {fixed[0]} through the sweep's axes (--threads, --bind), not as {fixed[0]}="
        )


def planned_launches(
    benchmark: Benchmark, raw: dict[str, Any], slots: list[Slot], machine: Machine
) -> list[Planned]:
    """Every launch of the schedule with its parameters, all resolved before anything runs."""
    check_sweepable(benchmark, raw)
    resolved = {
        point: benchmark.resolved(
            point.placement.params_for(benchmark, raw, point.threads, machine), machine
        )
        for point in dict.fromkeys(slot.point for slot in slots)
    }
    return [
        Planned(
            benchmark,
            resolved[slot.point],
            slot.point.placement,
            slot.annotate(machine),
            f" (repetition {slot.repetition + 1}/{slot.repeat})",
        )
        for slot in slots
    ]


def _annotate(document: dict, slot: Slot, machine: Machine) -> list[WarningRecord]:
    """The point's axes become parameters (so that launches of one point group, and runs
    compare); the launch's place in the schedule and what its placement obtained go beside."""
    placement = slot.point.placement
    document["params"].update(
        threads=slot.point.threads, bind=placement.bind, mempolicy=placement.mempolicy
    )
    got = obtained(document, placement, machine) if not document.get("not_measurable") else {}
    document["sweep"] = {
        "repetition": slot.repetition,
        "repeat": slot.repeat,
        "position": slot.position,
        "obtained": got,
    }
    return placement_warnings(placement, got)


def placement_warnings(placement: Placement, got: dict[str, Any]) -> list[WarningRecord]:
    """What the launch obtained that differs from what the sweep asked."""
    found = []
    if got.get("binding_applied") is False:
        found.append(
            WarningRecord(
                Kind.BINDING_NOT_APPLIED,
                f"binding not applied: {placement.bind} was asked but no thread was pinned",
                "check OMP_PROC_BIND support of the OpenMP runtime and cgroup limits",
            )
        )
    node = placement.node_param()
    shares = got.get("pages_on_node") or {}
    if node.isdigit() and shares and shares.get(int(node), 0.0) < 0.99:
        landed = ", ".join(f"node {k}: {v:.0%}" for k, v in sorted(shares.items()))
        found.append(
            WarningRecord(
                Kind.MEMORY_MISPLACED,
                f"memory not where asked: {placement.mempolicy} but pages landed {landed}",
                MEMORY_FIX,
            )
        )
    return found
