"""`slurm`: every measurement a step of one Slurm job, submitted with sbatch, or started directly
inside an allocation (perfatlas.cluster.front_end). Before a run is opened the scheduler must
answer: sbatch is on PATH, sinfo reaches the controller, the partition has the nodes."""

from __future__ import annotations

import os
from pathlib import Path

from perfatlas.cluster import slurm
from perfatlas.cluster.front_end import measure_in_job
from perfatlas.executors.base import Executor, register_executor
from perfatlas.planned import Destination, Planned


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
