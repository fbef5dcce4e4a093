"""`slurm`: every measurement a step of one Slurm job, submitted with sbatch, or started directly
inside an allocation (perfatlas.cluster.front_end). Before a run is opened the scheduler must
answer: sbatch is on PATH, sinfo reaches the controller, the partition has the nodes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from perfatlas.cluster import slurm
from perfatlas.cluster.command_job import run_command_job
from perfatlas.cluster.front_end import jobs_folder, measure_in_job, new_folder
from perfatlas.common.progress import console
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Destination, Planned
from perfatlas.run.elsewhere import Elsewhere, conclude, prepare
from perfatlas.run.executor import Executor, register_executor
from perfatlas.store.database import Store


@register_executor
class SlurmExecutor(Executor):
    name = "slurm"
    launcher = "slurm"
    summary = "steps of one Slurm job (sbatch), or of the allocation perfatlas runs in"

    def preflight(self, store_path: Path) -> None:
        if os.environ.get("SLURM_JOB_ID"):  # inside an allocation: its steps start with srun
            slurm.require("srun")
        else:
            slurm.preflight(self.options.slurm)

    def measure_all(
        self, into: Destination, measurements: list[Planned], repeat: int, progress: bool
    ) -> list[dict]:
        return measure_in_job(into, measurements, repeat, self.options)

    def run_elsewhere(
        self, args_for: Callable[[Path], list[str]], store: Store, name: str, machine: Machine
    ) -> Elsewhere:
        """The command as a job of its own, on the allocation's first node."""
        folder = new_folder(jobs_folder(store.path), name)
        command = prepare(store, folder, args_for(folder))
        console.print(
            f"{name}: perfatlas runs on a compute node; files in {folder}", soft_wrap=True
        )
        status, output = run_command_job(command.argv, self.options, folder, name)
        return conclude(store, command, status, output)
