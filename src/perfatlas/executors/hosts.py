"""`hosts`: mpirun with a hostfile, no scheduler (perfatlas.cluster.hosts).

A node-level benchmark (memory, noise) starts once on every host at once, each host writing its
own document; an MPI benchmark launches through mpirun over the hosts. Before a run is opened,
mpirun starts a trivial command on every host: hosts that do not answer are named then, not
after the first measurement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfatlas.cluster.hosts import on_every_host, probe_hosts
from perfatlas.executors.base import OneLaunchAtATime, register_executor
from perfatlas.launchers import mpirun_path
from perfatlas.placement import Placement
from perfatlas.planned import Destination


@register_executor
class HostsExecutor(OneLaunchAtATime):
    name = "hosts"
    launcher = "mpirun"
    summary = "mpirun over the hosts of a hostfile; node-level benchmarks on every host at once"

    def preflight(self, store_path: Path) -> None:
        mpirun_path()  # one sentence when there is no mpirun
        probe_hosts(self.options, store_path)

    def launch(
        self,
        benchmark: Any,
        params: dict[str, Any],
        placement: Placement | None,
        into: Destination,
    ) -> list[dict]:
        every_host = benchmark.launcher_for(params) == "local"
        if not every_host or benchmark.unmeasurable(params, into.machine):
            return benchmark.run(params, into.machine, self.options, placement)
        return on_every_host(
            benchmark, params, into.machine, self.options, into.store.path, placement
        )
