"""One command as a Slurm job of its own: a perfatlas command run on a compute node
(perfatlas.run.elsewhere). sbatch runs the batch script on the allocation's first node, so
the command runs there directly; inside an allocation already, the script runs here and starts
the command on a node with srun. The job asks for its nodes exclusively: a scenario measures
interference, and another job on the node would be part of it."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from perfatlas.cluster.front_end import cancel_if_hopeless, poll_s, start_job
from perfatlas.cluster.job import sbatch_lines
from perfatlas.common.progress import console
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.launch.sbatch_values import command_line


def command_script(argv: list[str], options: LaunchOptions, folder: Path, name: str) -> str:
    inside = bool(os.environ.get("SLURM_JOB_ID"))
    srun = ["srun", "--nodes=1", "--ntasks=1", "--whole"] if inside else []
    quoted = shlex.quote(str(folder))
    return "\n".join(
        [
            "#!/bin/bash",
            *sbatch_lines(options.slurm, folder, name),
            "#SBATCH --exclusive",
            f"# {name}: one perfatlas command on a compute node, written by perfatlas",
            f"job={quoted}",
            f'{command_line([*srun, *argv])} >"$job/stdout" 2>"$job/stderr" </dev/null',
            'status=$?; echo "$status" >"$job/status.tmp" && mv "$job/status.tmp" "$job/status"',
            'exit "$status"',
            "",
        ]
    )


def run_command_job(
    argv: list[str], options: LaunchOptions, folder: Path, name: str
) -> tuple[int | None, str]:
    """Submit (or start inside the allocation), wait for the end; the command's exit status
    (None: it never finished) and its output (stderr, then stdout)."""
    script = folder / "job.sh"
    script.write_text(command_script(argv, options, folder, name))
    script.chmod(0o755)
    job = start_job(script, folder, options.slurm.sbatch_args)
    try:
        with console.status(f"{name}: job {job.job_id}") as shown:
            while True:
                state = job.state()
                shown.update(f"{name}: job {job.job_id} {state.state}")
                if state.finished:
                    break
                cancel_if_hopeless(job, state)
                time.sleep(poll_s())
    except BaseException:  # Ctrl-C, SIGTERM: stop the job
        job.cancel()
        raise
    _wait_for(folder / "status")
    status_file = folder / "status"
    status = int(status_file.read_text()) if status_file.exists() else None
    output = _read(folder / "stderr") + _read(folder / "stdout")
    if status is None:
        output += f"\njob {job.job_id} ended {state.state}" + _read(folder / "job.err")
    return status, output


def _wait_for(path: Path) -> None:
    """A shared filesystem may show files late ($PERFATLAS_JOB_GRACE s, default 10)."""
    deadline = time.monotonic() + float(os.environ.get("PERFATLAS_JOB_GRACE") or 10.0)
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(min(poll_s(), 0.5))


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
