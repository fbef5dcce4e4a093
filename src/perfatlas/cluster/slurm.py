"""The scheduler's side: whether Slurm is there, its partitions, submitting, watching, cancelling.

Only the user commands are used (sinfo, sbatch --parsable, squeue, scontrol, sacct, scancel), so
any Slurm a user can submit to works, with or without job accounting.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.common.text_file import regular_file_problem
from perfatlas.launch.launchers import SlurmOptions
from perfatlas.launch.sbatch_values import check_words

NO_SLURM = "install the Slurm client tools, or use --launcher mpirun with a hostfile"
TIMEOUT_S = 30.0
# Job states after which nothing more will run (squeue/scontrol/sacct spell them the same).
TERMINAL = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
}
# The run did not fail by itself: the user, the time limit or the scheduler stopped it.
INTERRUPTING = {"CANCELLED", "TIMEOUT", "PREEMPTED", "DEADLINE"}
# Reasons a pending job never leaves: waiting would be forever.
HOPELESS = {
    "PartitionNodeLimit",
    "PartitionTimeLimit",
    "BadConstraints",
    "InvalidAccount",
    "InvalidQOS",
    "AccountNotAllowed",
    "QOSMaxNodePerJobLimit",
}


def require(command: str) -> str:
    path = shutil.which(command)
    if path is None:
        raise UserError(f"Slurm is not available here: no {command} on PATH; {NO_SLURM}")
    return path


# Where the Slurm commands look for their configuration when SLURM_CONF is not set (Debian's,
# older packages', and the cache of a configless slurmd).
CONFIG_FILES = ("/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf", "/run/slurm/conf/slurm.conf")
CONFIGLESS_WAIT_S = 5.0  # without a file, sinfo retries for a minute before it gives up


def _config_problem() -> tuple[str | None, float]:
    """Why the Slurm commands will find no configuration (or None), and how long to wait."""
    named = os.environ.get("SLURM_CONF")
    if named:
        problem = regular_file_problem(named)
        if problem:  # the Slurm commands would wait forever on a FIFO
            return f"SLURM_CONF names {named}, which {problem}", 0.0
        return None, TIMEOUT_S
    if any(Path(path).is_file() for path in CONFIG_FILES):
        return None, TIMEOUT_S
    return (
        f"no Slurm configuration here (SLURM_CONF is not set and {CONFIG_FILES[0]} does not "
        "exist) and no configless controller answered",
        CONFIGLESS_WAIT_S,
    )


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    problem, wait = _config_problem()
    if problem and not wait:
        raise UserError(f"Slurm is not reachable: {problem}")
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=wait)
    except subprocess.TimeoutExpired:
        raise UserError(
            f"Slurm is not reachable: {problem}"
            if problem
            else f"{argv[0]} did not answer within {wait:g} s: the Slurm controller is not "
            "reachable (check SLURM_CONF and that slurmctld runs)"
        ) from None


def slurm_message(stderr: str) -> str:
    """Slurm's own complaint, without the 'sbatch: error: ' prefixes, in one line."""
    lines = [re.sub(r"^\w+: (error|fatal): ", "", line.strip()) for line in stderr.splitlines()]
    lines = [line for line in lines if line]
    return "; ".join(dict.fromkeys(lines)) or "no message"


@dataclass(frozen=True)
class Partition:
    name: str
    nodes: int
    available: str  # up, down, drain, inact
    default: bool


def partitions() -> list[Partition]:
    """Every partition with its node count (sinfo prints one line per node state: summed)."""
    require("sinfo")
    done = _run(["sinfo", "-h", "-o", "%P|%D|%a"])
    if done.returncode != 0:
        problem, _ = _config_problem()
        said = slurm_message(done.stderr)
        if problem:  # say what is missing, with Slurm's last word
            raise UserError(f"Slurm is not reachable: {problem} (sinfo: {said.split('; ')[-1]})")
        raise UserError(f"Slurm is not reachable: sinfo failed: {said}")
    found: dict[str, Partition] = {}
    for line in done.stdout.splitlines():
        name, nodes, available = (line.split("|") + ["", "", ""])[:3]
        if not name:
            continue
        default = name.endswith("*")
        name = name.rstrip("*")
        before = found.get(name)
        count = int(nodes or 0) + (before.nodes if before else 0)
        found[name] = Partition(name, count, available, default or bool(before and before.default))
    return list(found.values())


def preflight(options: SlurmOptions) -> None:
    """Before anything is opened: sbatch is there, the partition exists and has the nodes."""
    require("sbatch")
    known = partitions()
    if options.partition:
        chosen = next((p for p in known if p.name == options.partition), None)
        if chosen is None:
            names = ", ".join(p.name for p in known) or "none"
            raise UserError(
                f"Slurm has no partition '{options.partition}'; its partitions: {names} (sinfo)"
            )
    else:
        chosen = next((p for p in known if p.default), None)
    if chosen and options.nodes and options.nodes > chosen.nodes:
        raise UserError(
            f"--nodes {options.nodes} asks for more nodes than partition '{chosen.name}' has "
            f"({chosen.nodes}); ask for at most {chosen.nodes}"
        )


def submit(script: str, sbatch_args: tuple[str, ...]) -> str:
    """sbatch the script (its #SBATCH lines carry the options); returns the job id."""
    require("sbatch")
    check_words([*sbatch_args, script])
    done = _run(["sbatch", "--parsable", *sbatch_args, script])
    if done.returncode != 0:
        raise UserError(f"sbatch rejected the job: {slurm_message(done.stderr)}")
    job_id = done.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise UserError(f"sbatch answered '{done.stdout.strip()}' instead of a job id")
    return job_id


@dataclass(frozen=True)
class JobState:
    state: str  # PENDING, RUNNING, COMPLETED, CANCELLED ... or UNKNOWN
    reason: str = ""

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL or self.state == "UNKNOWN"


def job_state(job_id: str) -> JobState:
    """squeue while the controller remembers the job, then scontrol, then accounting (sacct)."""
    done = _run(["squeue", "-h", "-j", job_id, "-t", "all", "-o", "%T|%r"])
    if done.returncode == 0 and done.stdout.strip():
        state, _, reason = done.stdout.strip().splitlines()[0].partition("|")
        return JobState(state, "" if reason in ("None", "(null)") else reason)
    done = _run(["scontrol", "show", "job", "-o", job_id])
    found = re.search(r"JobState=(\S+)", done.stdout)
    if done.returncode == 0 and found:
        return JobState(found.group(1))
    if shutil.which("sacct"):
        done = _run(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"])
        words = done.stdout.split()
        if done.returncode == 0 and words:
            return JobState(words[0])
    return JobState("UNKNOWN", f"the scheduler no longer knows job {job_id}")


def cancel(job_id: str) -> None:
    _run(["scancel", job_id])
