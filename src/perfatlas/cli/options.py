"""What several commands share: the store they open, the files they will write, key=value words,
the findings they print, and the launch, plan and remeasure options."""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from perfatlas.common.errors import UserError

if TYPE_CHECKING:  # imported where used: the command line starts without the analyses
    from perfatlas.store.run_data import RunData

# What a group's add_commands receives (perfatlas.cli.entry): command(name, handler, help) adds
# the command and returns its parser, for the group to add the command's own options.
AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

DEFAULT_DB = "perfatlas.db"
MAX_REPEAT = 1000  # launches of one measurement (--repeat)


def open_store(args: argparse.Namespace, read_only: bool = False):
    """The results database; show, report, export and compare open it read-only."""
    from perfatlas.store.database import Store

    return Store(args.db, read_only=read_only)


def check_output_file(path: str | None, what: str) -> None:
    """A file perfatlas will write (--json, -o, --report), checked before anything runs: its
    folder exists (a missing one is refused, not made: a typo should not grow a tree), and it
    is not a folder or a FIFO (whose writer waits for a reader). An empty name is refused, not
    taken as 'no file'."""
    if path is None:
        return
    if not path:
        raise UserError(f"cannot write {what} to '': the file name is empty; give one")
    target = Path(path)
    if not target.parent.is_dir():
        raise UserError(
            f"cannot write {what} to {path}: folder {target.parent} does not exist; create it first"
        )
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise UserError(f"cannot write {what} to {path}: it is not a regular file")


def key_values(words: list[str]) -> dict[str, str]:
    pairs = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise UserError(f"'{word}' is not a key=value parameter (e.g. bytes=1GiB)")
        if key in pairs:
            raise UserError(f"parameter '{key}' is given twice")
        pairs[key] = value
    return pairs


def print_findings(data: RunData) -> None:
    """The findings of a run as a table (perfatlas.findings), when it has any."""
    from perfatlas.findings.compute import run_findings
    from perfatlas.terminal.findings_table import findings_table
    from perfatlas.terminal.run_views import console

    found = run_findings(data)
    if found.findings:
        console.print(findings_table(found))


def add_launch_arguments(p: argparse.ArgumentParser) -> None:
    """How MPI benchmarks are launched (perfatlas.launch.launchers); the environment gives defaults."""
    from perfatlas.launch.launchers import launcher_names

    p.add_argument(
        "--mpirun-args",
        help='extra mpirun arguments, passed through untouched (e.g. "--bind-to none"); '
        "default $PERFATLAS_MPIRUN_ARGS",
    )
    p.add_argument("--hostfile", help="mpirun hostfile (default $PERFATLAS_HOSTFILE)")
    p.add_argument(
        "--launcher",
        choices=launcher_names(),
        help="slurm: every measurement a step of one Slurm job; mpirun: node-level benchmarks "
        "on every host of the hostfile at once (default: each benchmark's own)",
    )
    slurm = p.add_argument_group("Slurm (--launcher slurm)")
    slurm.add_argument("--nodes", type=int, help="nodes to allocate (default 1)")
    slurm.add_argument("--tasks-per-node", type=int, help="MPI slots per node (default 1)")
    slurm.add_argument("--partition", help="partition (default: Slurm's default partition)")
    slurm.add_argument("--account", help="account to charge")
    slurm.add_argument("--time", help="time limit, in sbatch's form (e.g. 30:00)")
    slurm.add_argument("--sbatch-args", help='extra sbatch arguments, e.g. "--exclusive"')


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plan",
        action="store_true",
        help="print every launch it would make and the estimated wall time; measure and store "
        "nothing",
    )
    p.add_argument("--json", action="store_true", help="with --plan: the plan as JSON")


_SLURM_ONLY = ("nodes", "tasks_per_node", "partition", "account", "time", "sbatch_args")


def slurm_options(args: argparse.Namespace):
    import shlex

    from perfatlas.launch.launchers import SlurmOptions

    given = [name for name in _SLURM_ONLY if getattr(args, name, None) is not None]
    if given and getattr(args, "launcher", None) != "slurm":
        raise UserError(f"--{given[0].replace('_', '-')} applies with --launcher slurm only")
    for name in ("nodes", "tasks_per_node"):
        if getattr(args, name, None) is not None and getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1")
    try:
        extra = tuple(shlex.split(getattr(args, "sbatch_args", None) or ""))
    except ValueError as error:
        raise UserError(f"--sbatch-args cannot be split: {error}") from None
    return SlurmOptions(
        *(getattr(args, name, None) for name in _SLURM_ONLY[:-1]), sbatch_args=extra
    )


def launch_options(args: argparse.Namespace):
    from perfatlas.launch.launchers import LaunchOptions

    environment = LaunchOptions.from_environment()
    given = LaunchOptions.parse(getattr(args, "mpirun_args", None), getattr(args, "hostfile", None))
    launcher = getattr(args, "launcher", None)
    if launcher == "slurm" and given.hostfile:
        raise UserError("--hostfile does not apply with --launcher slurm: Slurm gives the hosts")
    return LaunchOptions(
        given.mpirun_args
        if getattr(args, "mpirun_args", None) is not None
        else environment.mpirun_args,
        None if launcher == "slurm" else given.hostfile or environment.hostfile,
        launcher,
        slurm_options(args),
    )


def chosen_executor(args: argparse.Namespace):
    """The executor --launcher chooses (perfatlas.run.executor), checked before a run is opened:
    its scheduler or hosts must answer."""
    from perfatlas.run.executor import executor_for

    executor = executor_for(launch_options(args))
    if getattr(args, "launcher", None) is not None:
        executor.preflight(Path(args.db))
    return executor


def add_remeasure_argument(parser: argparse.ArgumentParser) -> None:
    """--no-remeasure, on the commands that measure through the runner (perfatlas.run.remeasure_anomalies)."""
    parser.add_argument(
        "--no-remeasure",
        dest="remeasure",
        action="store_false",
        help="do not measure again the groups whose figures pass the anomaly rule (MPI patterns, "
        "multi-host runs): anomalies are then reported from one measurement",
    )
