"""Every value that reaches a file name, a script or a command line, fed the same hostile strings
(docs/safety/launch.md). Each is either refused in one sentence naming what it is (a UserError),
or arrives exactly as given: the generated batch script is really run with bash (the Slurm and
MPI commands it starts are recorders on PATH), no file named `pwned` appears, every word the
recorders receive is the word that was given, and no file is made outside its folder."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from perfatlas.benchmarks import get
from perfatlas.cluster import slurm
from perfatlas.cluster.command_job import command_script
from perfatlas.cluster.front_end import jobs_folder, new_folder
from perfatlas.cluster.job import batch_script, make_steps
from perfatlas.common.errors import UserError
from perfatlas.launch.launchers import LaunchOptions, SlurmOptions
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Planned
from perfatlas.scenario.scenario import parse
from perfatlas.scenario.side_by_side import Instance, run_together

HOSTILE = [
    "30:00\ntouch pwned",
    "x\r\ntouch pwned",
    "x; touch pwned",
    "$(touch pwned)",
    "`touch pwned`",
    "a'b\"c",
    "x\x00touch pwned",
    "../../pwned",
    "-pwned",
    "--wrap=touch pwned",
    "a b #c",
    "\\",
    "%j%",
    "\u00e9t\u00e9",
    "A" * 5000,
    "",
    ".",
    "..",
]
# A recorder: every Slurm or MPI command the script starts writes its words, each ended by NUL,
# and a line of its own after the last one.
RECORDER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "mpirun (Open MPI) 4.1.4"; exit 0; fi
{ printf '%s\\0' "$(basename "$0")" "$@"; printf '%s\\0' "--end--"; } >>"$RECORD"
"""


@dataclass
class Sandbox:
    root: Path  # nothing may appear outside `inside` but what the test made
    cwd: Path
    bin: Path
    record: Path

    def run_script(self, text: str) -> list[list[str]]:
        """`bash SCRIPT` as sbatch would start it; the commands it started, word by word."""
        script = self.cwd / "job.sh"
        script.write_text(text)
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "RECORD": str(self.record), "HOME": "/"}
        subprocess.run(
            ["bash", str(script)], cwd=self.cwd, env=env, capture_output=True, timeout=30
        )
        assert self.pwned() == [], "a hostile value ran as a command"
        return self.calls()

    def calls(self) -> list[list[str]]:
        if not self.record.exists():
            return []
        words = self.record.read_bytes().decode(errors="surrogateescape").split("\0")[:-1]
        calls, current = [], []
        for word in words:
            if word == "--end--":
                calls.append(current)
                current = []
            else:
                current.append(word)
        return calls

    def pwned(self) -> list[Path]:
        """Files a `touch pwned` made (a folder of that name may be a path the test gave)."""
        return [p for p in self.root.rglob("pwned") if p.is_file()]


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    cwd = tmp_path / "a" / "b" / "cwd"
    fake = tmp_path / "bin"
    for folder in (cwd, fake):
        folder.mkdir(parents=True)
    for name in ("srun", "scontrol", "sbatch", "mpirun"):
        (fake / name).write_text(RECORDER)
        (fake / name).chmod(0o755)
    record = fake / "record"
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("RECORD", str(record))
    monkeypatch.setenv("PERFATLAS_MPIRUN", str(fake / "mpirun"))
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    (fake / "slurm.conf").write_text("")
    monkeypatch.setenv("SLURM_CONF", str(fake / "slurm.conf"))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    return Sandbox(tmp_path, cwd, fake, record)


MACHINE = Machine.detect()


def _latency_steps(options: LaunchOptions, folder: Path):
    benchmark = get("mem.latency")
    params = benchmark.resolve({"bytes": "16KiB", "samples": "3"}, MACHINE)
    return make_steps([Planned(benchmark, params)], 1, MACHINE, options, folder)


def _slurm_script(sandbox: Sandbox, slurm_options: SlurmOptions, name: str = "perfatlas-run-1"):
    folder = sandbox.cwd / "job"
    options = LaunchOptions(launcher="slurm", slurm=slurm_options)
    steps = _latency_steps(options, folder)
    calls = sandbox.run_script(batch_script(steps, options.slurm, folder, name))
    srun = [c for c in calls if c[0] == "srun"]
    assert len(srun) == 1, f"the one step did not run as one srun: {calls}"
    assert str(steps[0].folders[0]) in srun[0]


# -- the sinks: each takes a hostile value and refuses it or checks that it arrived intact --------
def time_option(sandbox: Sandbox, value: str) -> None:
    _slurm_script(sandbox, SlurmOptions(time=value))
    raise AssertionError("--time took a value that is not a Slurm time")


def account_option(sandbox: Sandbox, value: str) -> None:
    _slurm_script(sandbox, SlurmOptions(account=value))
    raise AssertionError("--account took a value that is not a Slurm name")


def partition_option(sandbox: Sandbox, value: str) -> None:
    _slurm_script(sandbox, SlurmOptions(partition=value))
    raise AssertionError("--partition took a value that is not a Slurm name")


def job_name(sandbox: Sandbox, value: str) -> None:
    _slurm_script(sandbox, SlurmOptions(), name=value)
    raise AssertionError("the job name took a value that is not a name")


def job_folder(sandbox: Sandbox, value: str) -> None:
    """The job folder (a path under PERFATLAS_JOB_DIR or beside --db) in every script line."""
    folder = sandbox.cwd / value / "job"
    options = LaunchOptions(launcher="slurm")
    steps = _latency_steps(options, folder)
    text = batch_script(steps, options.slurm, folder, "perfatlas-run-1")
    for line in text.splitlines():  # a path sbatch reads back whole: on its line, quoted
        if line.startswith(("#SBATCH --output", "#SBATCH --error")):
            value = line.split("=", 1)[1]
            assert value.rstrip('"').endswith((".out", ".err")), line
            assert value.startswith('"') or not set(value) & set(" \t'\"#\\"), line
    calls = sandbox.run_script(text)
    srun = [c for c in calls if c[0] == "srun"]
    assert len(srun) == 1 and str(steps[0].folders[0]) in srun[0], calls


def mpirun_argument(sandbox: Sandbox, value: str) -> None:
    """A word of --mpirun-args, on the step line of an MPI benchmark."""
    folder = sandbox.cwd / "job"
    options = LaunchOptions(mpirun_args=(value,), launcher="slurm")
    benchmark = get("comm.pingpong")
    params = benchmark.resolve({"np": "2", "max_bytes": "64"}, MACHINE)
    steps = make_steps([Planned(benchmark, params)], 1, MACHINE, options, folder)
    calls = sandbox.run_script(batch_script(steps, options.slurm, folder, "perfatlas-run-1"))
    mpirun = [c for c in calls if c[0] == "mpirun"]
    assert len(mpirun) == 1 and value in mpirun[0], calls
    assert mpirun[0].index(value) + 1 == mpirun[0].index(str(executable("pa-comm-pingpong")))


def command_word(sandbox: Sandbox, value: str) -> None:
    """A word of the perfatlas command a node runs (a path, a scenario's file) in its script."""
    folder = sandbox.cwd / "job"
    folder.mkdir(exist_ok=True)
    argv = [str(sandbox.bin / "srun"), "scenario", "run", value]
    text = command_script(argv, LaunchOptions(launcher="slurm"), folder, "scenario-run")
    calls = sandbox.run_script(text)
    assert calls == [["srun", "scenario", "run", value]], calls


def sbatch_argument(sandbox: Sandbox, value: str) -> None:
    """A word of --sbatch-args: a word of sbatch's command line, never read by a shell."""
    script = sandbox.cwd / "job.sh"
    script.write_text("#!/bin/bash\n")
    try:
        slurm.submit(str(script), (value,))
    except UserError as error:
        if "instead of a job id" not in str(error):  # the recorder answers none; else refused
            raise
    assert sandbox.calls() == [["sbatch", "--parsable", value, str(script)]]


def job_folder_root(sandbox: Sandbox, value: str) -> None:
    """PERFATLAS_JOB_DIR: the folder every job folder is made in, then sbatch's last word."""
    if "\0" in value:
        return  # no environment variable can hold NUL
    os.environ["PERFATLAS_JOB_DIR"] = value
    try:
        root = jobs_folder(sandbox.cwd / "perfatlas.db")
        folder = new_folder(root, "run-1")
    finally:
        del os.environ["PERFATLAS_JOB_DIR"]
    script = folder / "job.sh"
    script.write_text("#!/bin/bash\n")
    try:
        slurm.submit(str(script), ())
    except UserError as error:
        if "instead of a job id" not in str(error):  # the recorder answers none; else refused
            raise
    (call,) = sandbox.calls()
    assert call[-1] == str(script) and not call[-1].startswith("-"), call


def toml_string(text: str) -> str:
    """A TOML basic string holding `text` exactly (every awkward character as \\UXXXXXXXX)."""
    plain = "".join(c if c.isprintable() and c not in '"\\' else f"\\U{ord(c):08x}" for c in text)
    return f'"{plain}"'


def _scenario(name: str | None = None, job: str = "a") -> str:
    head = f"name = {toml_string(name)}\n" if name is not None else ""
    return (
        f"{head}[[job]]\nname = {toml_string(job)}\n"
        'runtime = "1s"\n'
        'mix = [{ kernel = "triad", bytes = "240kB" }]\n'
    )


def scenario_name(sandbox: Sandbox, value: str) -> None:
    """The scenario's name: the folder `--out/scenario-NAME` of its programs."""
    scenario = parse(_scenario(name=value), "s.toml", MACHINE)
    out = sandbox.cwd / "out"
    folder = out / f"scenario-{scenario.name}"
    folder.mkdir(parents=True)
    assert folder.resolve() == out.resolve() / f"scenario-{scenario.name}", folder.resolve()


PROGRAM = "kernel=triad bytes=240000 stride=1 threads=1 repeat=1\n"


def scenario_job_name(sandbox: Sandbox, value: str) -> None:
    """A job's name: its program and the output files of every copy, in the scenario's folder."""
    scenario = parse(_scenario(job=value), "s.toml", MACHINE)
    folder = sandbox.cwd / "out" / "scenario-s"
    folder.mkdir(parents=True)
    program = folder / f"{scenario.jobs[0].name}.prog"
    program.write_text(PROGRAM)
    instance = Instance(scenario.jobs[0].name, program, 1, 0.0)
    run_together([instance], (MACHINE.pus[0],), folder)
    made = {p for p in sandbox.root.rglob("*") if p.is_file()}
    outside = [p for p in made if not p.is_relative_to(folder) and p.parent != sandbox.bin]
    assert outside == [], outside


SINKS: dict[str, tuple[Callable, str]] = {
    # name: (the sink, what its one sentence names)
    "--time": (time_option, "--time"),
    "--account": (account_option, "--account"),
    "--partition": (partition_option, "--partition"),
    "job name": (job_name, "job"),
    "job folder": (job_folder, "#SBATCH"),
    "--mpirun-args word": (mpirun_argument, "NUL"),
    "node command word": (command_word, "NUL"),
    "--sbatch-args word": (sbatch_argument, "NUL"),
    "PERFATLAS_JOB_DIR": (job_folder_root, "PERFATLAS_JOB_DIR"),
    "scenario name": (scenario_name, "name"),
    "scenario job name": (scenario_job_name, "name"),
}


@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v)[:24] for v in HOSTILE])
@pytest.mark.parametrize("sink", list(SINKS))
def test_a_hostile_value_is_refused_in_one_sentence_or_arrives_intact(sandbox, sink, value):
    check, named = SINKS[sink]
    try:
        check(sandbox, value)
    except UserError as error:
        message = str(error)
        assert "\n" not in message and "\0" not in message and len(message) < 400, message
        assert named in message, message
    assert sandbox.pwned() == [], "a hostile value ran as a command"


@pytest.mark.parametrize(
    "option, value, says",
    [
        ("--time", "30:00\ntouch pwned", "--time '30:00\\ntouch pwned' is not a Slurm time limit"),
        ("--account", "x; touch pwned", "--account 'x; touch pwned' is not a safe name"),
        ("--partition", "$(touch pwned)", "--partition '$(touch pwned)' is not a safe name"),
    ],
)
def test_a_hostile_slurm_option_is_one_sentence_before_slurm_is_asked(
    cli, sandbox, option, value, says
):
    result = cli("measure", "mem.latency", "bytes=16KiB", "--launcher", "slurm", option, value)
    assert result.code == 2 and result.err.startswith(f"perfatlas: {says}")
    assert result.err.count("\n") == 1
    assert sandbox.calls() == [] and not cli.db.exists()  # neither sbatch nor the store
