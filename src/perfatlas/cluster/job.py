"""The steps of a run in one allocation, and the batch script that runs them.

Every planned measurement is one step; each of its repetitions one launch with a folder of its own
in the job folder, which must be readable by the front end and writable by the compute nodes:

    JOB/job.sh             the batch script (it can be resubmitted as it is: sbatch JOB/job.sh)
    JOB/nodes              the allocation's nodes, one per line, written when the job starts
    JOB/step-001/rep-1/    stdout, stderr and status (written last) of one launch; a node-level
                           launch adds HOST.json, HOST.err, HOST.status for every node
    JOB/finished           written when the script reaches its end

A node-level benchmark (one whose own launcher is `local`: memory, noise) runs on every node at
once as one srun step with one task per node; an MPI benchmark runs under mpirun inside the
allocation, which takes hosts and slots from Slurm. Steps run one after another; a step that fails
does not stop those after it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from perfatlas.benchmarks.prepare_launch import prepare_launch
from perfatlas.common.safe_names import check_name
from perfatlas.launch.launchers import Launch, LaunchOptions, SlurmOptions, get_launcher
from perfatlas.launch.sbatch_values import command_line, directive
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Planned

# step FOLDER COMMAND...: runs COMMAND with its output in FOLDER, then writes its exit status
# (atomically, by rename): the front end imports a launch once its status file is there.
_STEP_FUNCTION = """\
step() {
  local folder=$1; shift
  mkdir -p "$folder"
  "$@" >"$folder/stdout" 2>"$folder/stderr" </dev/null
  local status=$?
  echo "$status" >"$folder/status.tmp" && mv "$folder/status.tmp" "$folder/status"
  [ "$status" -eq 0 ] || failed=1
}
"""


@dataclass
class Step:
    index: int
    planned: Planned
    per_node: bool  # one document per node (node-level), else one launch of np ranks
    launches: list[Launch]  # one per repetition
    folders: list[Path]

    @property
    def title(self) -> str:
        return f"step {self.index} ({self.planned.description})"

    @property
    def finished(self) -> bool:
        return all((folder / "status").exists() for folder in self.folders)

    @property
    def started(self) -> bool:
        return self.folders[0].exists()


def make_steps(
    measurements: list[Planned],
    repeat: int,
    machine: Machine,
    options: LaunchOptions,
    job_folder: Path,
) -> list[Step]:
    """Every measurement's launches, prepared on the front end (parameters are resolved against
    the machine perfatlas runs on: give them explicitly where compute nodes differ from it)."""
    slurm = get_launcher("slurm")
    steps = []
    for index, planned in enumerate(measurements, 1):
        benchmark, params = planned.benchmark, planned.params
        per_node = benchmark.launcher_for(params) == "local"
        launches, folders = [], []
        for repetition in range(1, repeat + 1):
            folder = job_folder / f"step-{index:03d}" / f"rep-{repetition}"
            inner, _ = prepare_launch(
                benchmark,
                params,
                machine,
                options,
                planned.placement,
                launcher=None if per_node else "slurm",
            )
            launch = slurm.on_every_node(inner, str(folder), options) if per_node else inner
            launches.append(launch)
            folders.append(folder)
        steps.append(Step(index, planned, per_node, launches, folders))
    return steps


def sbatch_lines(options: SlurmOptions, job_folder: Path, name: str) -> list[str]:
    """The #SBATCH lines; their values checked or quoted (perfatlas.launch.sbatch_values)."""
    wanted = {
        "job-name": check_name(name, "the Slurm job name"),
        "nodes": options.nodes or 1,
        "ntasks-per-node": options.tasks_per_node or 1,
        "partition": options.partition,
        "account": options.account,
        "time": options.time,
    }
    lines = [directive(key, value) for key, value in wanted.items() if value is not None]
    for key, file in (("output", "job.out"), ("error", "job.err")):
        lines.append(directive(key, job_folder / file, pattern=True))
    return lines


def _command(launch: Launch) -> str:
    env = [f"{key}={value}" for key, value in launch.env.items()]
    return command_line(["env", *env, *launch.argv] if env else launch.argv)


def batch_script(steps: list[Step], options: SlurmOptions, job_folder: Path, name: str) -> str:
    """The whole run as one bash script: sbatch submits it, or it runs inside an allocation."""
    folder = shlex.quote(str(job_folder))
    lines = [
        "#!/bin/bash",
        *sbatch_lines(options, job_folder, name),
        f"# {name}: {len(steps)} step(s) written by perfatlas; each writes its documents under",
        f"# {job_folder} and the front end imports them.",
        f"job={folder}",
        'scontrol show hostnames "$SLURM_JOB_NODELIST" >"$job/nodes.tmp" && '
        'mv "$job/nodes.tmp" "$job/nodes"',
        "failed=0",
        _STEP_FUNCTION,
    ]
    for step in steps:
        lines.append(f"# {step.title}")
        for launch, launch_folder in zip(step.launches, step.folders, strict=True):
            lines.append(f"step {shlex.quote(str(launch_folder))} {_command(launch)}")
    lines += ['echo "$failed" >"$job/finished"', 'exit "$failed"', ""]
    return "\n".join(lines)
