"""The one place where a benchmark, its parameters and a placement become a launch.

Every executor (perfatlas.run.executor: local, hosts, slurm) and Benchmark.run go through
`prepare_launch`: the launcher's command (MPI arguments, hostfile, --oversubscribe ...), then the
placement's thread binding and memory policy (perfatlas.machine.placement.Placement.wrap). What differs
between executors is only which launcher prepares it and what starts the result (a process
here, mpirun on every host, a step of a Slurm job).
"""

from __future__ import annotations

from typing import Any

from perfatlas.launch.launchers import Launch, Launcher, LaunchOptions, get_launcher
from perfatlas.launch.native import executable
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine


def prepare_launch(
    benchmark: Any,
    params: dict[str, Any],
    machine: Machine,
    options: LaunchOptions,
    placement: Placement | None = None,
    launcher: str | None = None,
) -> tuple[Launch, Launcher]:
    """The launch of one measurement and the launcher that explains its failures. `launcher`
    overrides the benchmark's own (a Slurm step of an MPI benchmark: "slurm")."""
    chosen = get_launcher(launcher or benchmark.launcher_for(params))
    program = executable(benchmark.executable)
    launch = chosen.prepare(
        program, benchmark.native_args(params, machine), params, machine, options
    )
    if placement is not None:  # perfatlas sweep --bind --mempolicy
        placement.wrap(launch, program, benchmark, params, machine)
    return launch, chosen
