"""`hosts`: mpirun with a hostfile, no scheduler (perfatlas.cluster.hosts).

A node-level benchmark (memory, noise) starts once on every host at once, each host writing its
own document; an MPI benchmark launches through mpirun over the hosts. Before a run is opened,
mpirun starts a trivial command on every host: hosts that do not answer are named then, not
after the first measurement."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfatlas.cluster.front_end import jobs_folder, new_folder
from perfatlas.cluster.hosts import on_every_host, probe_hosts, run_on_first_host
from perfatlas.common.progress import console
from perfatlas.launch.launchers import mpirun_path
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Destination
from perfatlas.run.elsewhere import Elsewhere, conclude, prepare
from perfatlas.run.executor import OneLaunchAtATime, register_executor
from perfatlas.store.database import Store


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
        on_document: Callable[[dict], None],
    ) -> list[dict]:
        every_host = benchmark.launcher_for(params) == "local"
        if not every_host or benchmark.unmeasurable(params, into.machine):
            return benchmark.run(params, into.machine, self.options, placement, on_document)
        # every host's documents are read from files once all have ended (stored then)
        return on_every_host(
            benchmark, params, into.machine, self.options, into.store.path, placement
        )

    def run_elsewhere(
        self, args_for: Callable[[Path], list[str]], store: Store, name: str, machine: Machine
    ) -> Elsewhere:
        """The command on the first host of the hostfile (mpirun -np 1)."""
        folder = new_folder(jobs_folder(store.path), name)
        command = prepare(store, folder, args_for(folder))
        console.print(
            f"{name}: perfatlas runs on the first host; files in {folder}", soft_wrap=True
        )
        with console.status(f"{name}: running on the first host"):
            status, output = run_on_first_host(command.argv, self.options, machine)
        return conclude(store, command, status, output)
