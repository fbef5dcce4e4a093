"""Launchers, registered by name (ReFrame style): how a native executable is started.

`local` runs the executable as a plain process. `mpirun` starts `np` ranks through the MPI
library's launcher (Open MPI by default, MPICH's hydra also), with a hostfile and extra arguments
passed through untouched (`--mpirun-args "..."` on the command line, or $PERFATLAS_MPIRUN_ARGS).
`slurm` runs the steps of one allocation (perfatlas.cluster): a node-level executable as one
srun task on every node, an MPI executable through mpirun inside the allocation. Every launch
records which launcher ran it, the exact command line, and what the launcher added on its own
initiative (oversubscription, running as root), so a result says how it was obtained.

Rank placement is never taken from what was asked here: the MPI executables read it back from
the ranks themselves (native/comm/comm.h).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from perfatlas.common.errors import UserError
from perfatlas.common.signal_names import signal_name
from perfatlas.common.text_file import regular_file_problem
from perfatlas.launch.isa import rebuild_hint

MPI_MISSING = "MPI is missing: install openmpi-bin libopenmpi-dev (or mpich)"
# Arguments with which a user names hosts: then np and slots are the user's business.
_HOST_ARGUMENTS = {
    "--hostfile",
    "-hostfile",
    "--machinefile",
    "-machinefile",
    "--default-hostfile",
    "--host",
    "-host",
    "-H",
    "-f",
    "-hosts",
}


@dataclass(frozen=True)
class SlurmOptions:
    """What sbatch is asked for (--nodes, --tasks-per-node, --partition, --account, --time,
    --sbatch-args); inside an existing allocation only `nodes` applies."""

    nodes: int | None = None
    tasks_per_node: int | None = None
    partition: str | None = None
    account: str | None = None
    time: str | None = None
    sbatch_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:  # before anything is written (docs/safety/launch.md)
        from perfatlas.launch.sbatch_values import check_slurm_values

        check_slurm_values(self.partition, self.account, self.time)


@dataclass(frozen=True)
class LaunchOptions:
    """What the user says about launching: extra mpirun arguments, a hostfile, and the launcher
    chosen for every step (--launcher; None: each benchmark's own) with its Slurm options."""

    mpirun_args: tuple[str, ...] = ()
    hostfile: str | None = None
    launcher: str | None = None
    slurm: SlurmOptions = SlurmOptions()

    @classmethod
    def from_environment(cls) -> LaunchOptions:
        return cls.parse(
            os.environ.get("PERFATLAS_MPIRUN_ARGS"), os.environ.get("PERFATLAS_HOSTFILE")
        )

    @classmethod
    def parse(cls, mpirun_args: str | None, hostfile: str | None) -> LaunchOptions:
        try:
            words = tuple(shlex.split(mpirun_args or ""))
        except ValueError as error:
            raise UserError(f"--mpirun-args '{mpirun_args}' cannot be split: {error}") from None
        problem = regular_file_problem(hostfile) if hostfile else None
        if problem:  # mpirun would wait forever on a FIFO
            raise UserError(f"hostfile {hostfile} {problem}: give a text file of host names")
        return cls(words, hostfile or None)


@dataclass
class Launch:
    """One prepared launch: the exact argv, environment additions, and why they were added."""

    launcher: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    mpi: str | None = None
    # mpirun words the launcher chose for the threads of a rank (_cores_per_rank), with their
    # note: a placement's own binding replaces them (drop_default_binding)
    default_binding: tuple[list[str], str] | None = None

    def drop_default_binding(self) -> None:
        if self.default_binding is not None:
            words, note = self.default_binding
            at = next(i for i in range(len(self.argv)) if self.argv[i : i + len(words)] == words)
            del self.argv[at : at + len(words)]
            self.notes.remove(note)
            self.default_binding = None

    def record(self) -> dict[str, Any]:
        """What every result document carries as "launch" (docs/contract.md)."""
        record: dict[str, Any] = {
            "launcher": self.launcher,
            "command": shlex.join(self.argv),
            "env": dict(self.env),
            "notes": list(self.notes),
        }
        if self.mpi:
            record["mpi"] = self.mpi
        return record


class Launcher:
    """Prepares the command that runs an executable, and explains its failures in a sentence."""

    name: ClassVar[str]

    def prepare(
        self,
        executable: Path,
        args: list[str],
        params: dict[str, Any],
        machine: Any,
        options: LaunchOptions,
    ) -> Launch:
        raise NotImplementedError

    def failure(self, launch: Launch, program: str, returncode: int, output: str) -> str:
        """One sentence: what went wrong (the program's own message when it left one).

        `output` is the launch's stderr followed by its stdout (MPICH's hydra reports a crashed
        rank on stdout)."""
        own = _own_message(program, output)
        if own:
            return own
        lines = [line for line in output.strip().splitlines() if line.strip()]
        return lines[-1] if lines else f"{program} exited with status {returncode}"

    def on_every_node(self, inner: Launch, folder: str, options: LaunchOptions) -> Launch:
        """`inner` (a node-level launch) started once on every node at the same time, each
        copy writing its document to folder/HOST.json (perfatlas.launch.per_node)."""
        raise UserError(f"the {self.name} launcher cannot start one process on every node")


_LAUNCHERS: dict[str, Launcher] = {}


def register_launcher(cls: type[Launcher]) -> type[Launcher]:
    _LAUNCHERS[cls.name] = cls()
    return cls


def launcher_names() -> list[str]:
    return sorted(_LAUNCHERS)


def get_launcher(name: str) -> Launcher:
    if name not in _LAUNCHERS:
        raise UserError(f"unknown launcher '{name}'; known: {', '.join(sorted(_LAUNCHERS))}")
    return _LAUNCHERS[name]


def _own_message(program: str, stderr: str) -> str | None:
    """The last line the native program wrote itself ('pa-comm-x: ...'), if any."""
    own = [line.strip() for line in stderr.splitlines() if line.strip().startswith(f"{program}:")]
    return own[-1] if own else None


@register_launcher
class LocalLauncher(Launcher):
    name = "local"

    def prepare(self, executable, args, params, machine, options) -> Launch:
        return Launch(self.name, [str(executable), *args])


# -- mpirun -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MpiFlavour:
    family: str  # "openmpi", "mpich" or "unknown"
    version: str  # the first line of `mpirun --version`


@lru_cache(maxsize=8)
def detect_flavour(mpirun: str) -> MpiFlavour:
    """Open MPI or MPICH (hydra), from `mpirun --version`."""
    try:
        done = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UserError(f"{mpirun} --version failed ({error}); {MPI_MISSING}") from None
    text = (done.stdout + done.stderr).strip()
    first = text.splitlines()[0] if text else mpirun
    return MpiFlavour(mpi_family(text), first)


def mpi_family(text: str) -> str:
    """ "openmpi", "mpich" (hydra, Intel MPI) or "unknown", from a launcher's `--version` or an
    MPI library's version string (MPI_Get_library_version)."""
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text or "Intel(R) MPI" in text:
        return "mpich"
    return "unknown"


_SIGNAL = re.compile(
    r"process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+) \(([^)]*)\)"
)
# MPICH's hydra: "PID 123 RUNNING AT host" ... "EXIT STRING: Segmentation fault (signal 11)"
_HYDRA_SIGNAL = re.compile(r"RUNNING AT (\S+).*?EXIT STRING: [^\n]*\(signal (\d+)\)", re.DOTALL)
_NONZERO = re.compile(r"process rank (\d+) with PID \d+ on node (\S+) exited with.*status (\d+)")


# mpirun arguments that say how ranks are mapped or bound: the user's choice, left alone.
_BINDING_ARGUMENTS = {"--bind-to", "-bind-to", "--map-by", "-map-by", "--cpus-per-proc",
                      "--cpus-per-rank", "--rank-by", "--cpu-set", "--rankfile", "-rf"}  # fmt: skip


def _cores_per_rank(launch: Launch, np_: int, threads: int, extra: list[str], machine) -> None:
    """A rank of `threads` OpenMP threads gets `threads` cores: Open MPI binds each rank to one
    core by default (np <= 2), where its threads would time-share that core. --map-by
    slot:PE=threads binds each rank to its own `threads` cores; where np x threads exceeds the
    cores, --bind-to none leaves the threads to the OS (said in a note)."""
    if threads <= 1 or any(word.split("=")[0] in _BINDING_ARGUMENTS for word in extra):
        return
    if "--oversubscribe" in launch.argv:  # Open MPI binds no rank then
        return
    cores = int((machine.topology or {}).get("cores") or len(machine.pus))
    if np_ * threads <= cores:
        words = ["--map-by", f"slot:PE={threads}"]
        note = f"each rank of threads={threads} bound to {threads} cores of its own"
    else:
        words = ["--bind-to", "none"]
        note = (
            f"np={np_} ranks of threads={threads} exceed the {cores} cores of this host: added "
            "--bind-to none, so the threads time-share cores"
        )
    launch.argv += words
    launch.notes.append(note)
    launch.default_binding = (words, note)


@register_launcher
class MpirunLauncher(Launcher):
    name = "mpirun"

    def prepare(self, executable, args, params, machine, options) -> Launch:
        mpirun = mpirun_path()
        flavour = detect_flavour(mpirun)
        np_ = int(params["np"])
        extra = list(options.mpirun_args)
        argv = [mpirun, "-n" if flavour.family == "mpich" else "-np", str(np_)]
        launch = Launch(self.name, argv, mpi=flavour.version)
        if options.hostfile:
            argv += ["-f" if flavour.family == "mpich" else "--hostfile", options.hostfile]
        if flavour.family == "openmpi":
            self._openmpi(launch, np_, extra, options, machine)
            _cores_per_rank(launch, np_, int(params.get("threads") or 1), extra, machine)
        argv += [*extra, str(executable), *args]
        return launch

    def on_every_node(self, inner: Launch, folder: str, options: LaunchOptions) -> Launch:
        """One process on every host of the hostfile: Open MPI maps one per node
        (--map-by ppr:1:node, no -np: as many as there are hosts); hydra takes -ppn 1 and -n the
        hosts of the hostfile. The executable needs no MPI: the launcher only starts it."""
        from perfatlas.launch.per_node import hostfile_hosts, write_per_node

        mpirun = mpirun_path()
        flavour = detect_flavour(mpirun)
        extra = list(options.mpirun_args)
        launch = Launch(self.name, [mpirun], dict(inner.env), list(inner.notes), flavour.version)
        if flavour.family == "mpich":
            hosts = hostfile_hosts(options.hostfile, extra)
            launch.argv += ["-ppn", "1", "-n", str(max(1, len(hosts)))]
            if options.hostfile:
                launch.argv += ["-f", options.hostfile]
        else:
            launch.argv += ["--map-by", "ppr:1:node"]
            if options.hostfile:
                launch.argv += ["--hostfile", options.hostfile]
            _allow_root(launch, extra)
        launch.argv += [*extra, *write_per_node(folder, inner.argv)]
        return launch

    @staticmethod
    def _openmpi(launch: Launch, np_: int, extra: list[str], options, machine) -> None:
        _allow_root(launch, extra)
        names_hosts = options.hostfile or any(
            word.split("=")[0] in _HOST_ARGUMENTS for word in extra
        )
        already = "--oversubscribe" in extra or any("OVERSUBSCRIBE" in word for word in extra)
        cores = int((machine.topology or {}).get("cores") or len(machine.pus))
        if np_ > cores and not names_hosts and not already:
            launch.argv.append("--oversubscribe")
            launch.notes.append(
                f"np={np_} exceeds the {cores} cores of this host (Open MPI's default slots): "
                "added --oversubscribe, so Open MPI binds no rank and ranks time-share cores"
            )

    def failure(self, launch: Launch, program: str, returncode: int, output: str) -> str:
        own = _own_message(program, output)
        if own:
            return own
        hydra = _HYDRA_SIGNAL.search(output)
        if hydra:
            node, number = hydra.groups()
            return (
                f"a rank of {program} crashed on host {node} (signal {number}, "
                f"{signal_name(int(number))}){_hint(int(number))}; mpiexec stopped the job: "
                f"{launch.record()['command']}"
            )
        crash = _SIGNAL.search(output)
        if crash:
            rank, node, number, name = crash.groups()
            return (
                f"rank {rank} of {program} crashed on host {node} (signal {number}, {name})"
                f"{_hint(int(number))}; "
                f"mpirun stopped the job: {launch.record()['command']}"
            )
        if returncode > 128 and "non-zero exit code" in output:  # mpirun relays a rank's signal
            number = returncode - 128
            return (
                f"a rank of {program} crashed (signal {number}, {signal_name(number)})"
                f"{_hint(number)}; "
                "mpirun stopped the job "
                f"(exit status {returncode}): {launch.record()['command']}"
            )
        died = _NONZERO.search(output)
        if died:
            rank, node, status = died.groups()
            return f"rank {rank} of {program} exited with status {status} on host {node}"
        return f"mpirun failed (exit status {returncode}): {_useful_tail(output)}"


def mpirun_path() -> str:
    """The MPI launcher: mpirun, or the one $PERFATLAS_MPIRUN names (e.g. mpiexec.mpich)."""
    wanted = os.environ.get("PERFATLAS_MPIRUN") or "mpirun"
    mpirun = shutil.which(wanted)
    if mpirun is None:
        raise UserError(f"{MPI_MISSING}: no {wanted} on PATH")
    # Open MPI derives its prefix from the directory it was started from: /bin/mpirun (a
    # merged-/usr symlink) would point it at / ; the real directory keeps it right.
    return os.path.join(os.path.realpath(os.path.dirname(mpirun)), os.path.basename(mpirun))


def _allow_root(launch: Launch, extra: list[str]) -> None:
    if os.geteuid() == 0 and "--allow-run-as-root" not in extra:
        launch.argv.append("--allow-run-as-root")
        launch.notes.append("running as root: added --allow-run-as-root (Open MPI)")


# -- slurm --------------------------------------------------------------------------------------
@register_launcher
class SlurmLauncher(Launcher):
    """Steps of one Slurm allocation (perfatlas.cluster.job writes them into its batch script).

    An MPI executable runs under mpirun inside the allocation: Open MPI and MPICH's hydra take
    the hosts and slots from Slurm and start their daemons with srun, so nothing here names
    hosts or adds --oversubscribe (the allocation's slots are the limit). A node-level
    executable runs as one srun task on each of `nodes` nodes (--whole: the task gets every CPU
    of its node, so threads= and cpus= mean the same as on a workstation)."""

    name = "slurm"

    def prepare(self, executable, args, params, machine, options) -> Launch:
        mpirun = mpirun_path()
        flavour = detect_flavour(mpirun)
        extra = list(options.mpirun_args)
        np_flag = "-n" if flavour.family == "mpich" else "-np"
        launch = Launch(self.name, [mpirun, np_flag, str(int(params["np"]))], mpi=flavour.version)
        launch.notes.append("mpirun inside the Slurm allocation: hosts and slots come from Slurm")
        if flavour.family == "openmpi":
            _allow_root(launch, extra)
        launch.argv += [*extra, str(executable), *args]
        return launch

    def on_every_node(self, inner: Launch, folder: str, options: LaunchOptions) -> Launch:
        from perfatlas.launch.per_node import write_per_node

        nodes = str(options.slurm.nodes or 1)
        srun = ["srun", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1", "--whole"]
        notes = [*inner.notes, f"one srun task on each of {nodes} node(s), all at once"]
        return Launch(
            self.name, [*srun, *write_per_node(folder, inner.argv)], dict(inner.env), notes
        )

    def failure(self, launch: Launch, program: str, returncode: int, output: str) -> str:
        if launch.argv and launch.argv[0] != "srun":  # mpirun inside the allocation
            return get_launcher("mpirun").failure(launch, program, returncode, output)
        return super().failure(launch, program, returncode, output)


def _hint(number: int) -> str:
    """What a rank's SIGILL means (perfatlas.launch.isa.rebuild_hint), on the host it ran on."""
    return rebuild_hint(number, local=False)


def _useful_tail(stderr: str, limit: int = 400) -> str:
    """mpirun's explanation without its banners: the meaningful lines, joined into one."""
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and not set(line.strip()) <= set("-*=")
    ]
    lines = [line for line in lines if "plm:rsh: Warning: setpgid" not in line]
    text = " ".join(lines[:4]) or "it printed nothing"
    return text if len(text) <= limit else text[: limit - 3] + "..."
