"""Executors, registered by name (ReFrame style): where a run's measurements are started.

  base.py   the abstract Executor, the registry, and the one-launch-at-a-time loop
  local.py  `local`: every launch a process of this machine (each benchmark's own launcher)
  hosts.py  `hosts`: mpirun with a hostfile; node-level benchmarks on every host at once
  slurm.py  `slurm`: every measurement a step of one Slurm job (perfatlas.cluster)

The command line chooses one (--launcher) and hands it to the runner; every executor turns a
measurement into a launch through perfatlas.launch_plan.prepare_launch.
"""

from perfatlas.executors import hosts, local, slurm  # noqa: F401  (fill the registry)
from perfatlas.executors.base import Executor, executor_for, executor_names, get_executor

__all__ = ["Executor", "executor_for", "executor_names", "get_executor"]
