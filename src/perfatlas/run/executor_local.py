"""`local`: every measurement a process of this machine, started by the benchmark's own launcher
(a plain process, or mpirun with the hostfile and arguments of the launch options)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perfatlas.machine.placement import Placement
from perfatlas.plan.planned import Destination
from perfatlas.run.executor import OneLaunchAtATime, register_executor


@register_executor
class LocalExecutor(OneLaunchAtATime):
    name = "local"
    launcher = "local"
    here = True
    summary = "processes of this machine; MPI benchmarks through mpirun (the default)"

    def launch(
        self,
        benchmark: Any,
        params: dict[str, Any],
        placement: Placement | None,
        into: Destination,
        on_document: Callable[[dict], None],
    ) -> list[dict]:
        return benchmark.run(params, into.machine, self.options, placement, on_document)
