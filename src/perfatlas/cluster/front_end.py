"""The front end of a Slurm run: one allocation for all the measurements of a run (or a sweep).

perfatlas writes the batch script (perfatlas.cluster.job), submits it with sbatch, or, inside an
allocation already (SLURM_JOB_ID set), runs it directly so that its srun and mpirun start steps
of that allocation. While the job runs it polls the scheduler (squeue, then scontrol or sacct)
and the job folder, and imports every launch whose status file has appeared: documents go into
SQLite on the front end only, committed as they arrive. When the job ends, launches that did
not finish are reported with the tail of their error output and the run is marked: complete,
interrupted (cancelled, out of time, preempted, or Ctrl-C here: then the job is cancelled) or
failed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from perfatlas.benchmarks.benchmark import series_points
from perfatlas.cluster import slurm
from perfatlas.cluster.collect import collect
from perfatlas.cluster.job import Step, batch_script, make_steps
from perfatlas.common.errors import UserError
from perfatlas.common.progress import console
from perfatlas.common.safe_names import check_name, check_path_text
from perfatlas.launch.contract import validate
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.plan.planned import Destination, Planned


def poll_s() -> float:
    """Seconds between two looks at the scheduler and the job folder ($PERFATLAS_POLL_INTERVAL)."""
    return float(os.environ.get("PERFATLAS_POLL_INTERVAL") or 1.0)


UNKNOWN_POLLS = 5  # a job no command knows for this many polls in a row has ended


class RunEnded(UserError):
    """The job ended without every step imported; `run_status` is how the run is marked."""

    def __init__(self, message: str, run_status: str):
        super().__init__(message)
        self.run_status = run_status


def cancel_if_hopeless(job, state) -> None:
    """A job pending for a reason that never clears (slurm.HOPELESS: more nodes or time than the
    partition allows ...) is cancelled, and the run ends with the reason."""
    if state.state == "PENDING" and state.reason in slurm.HOPELESS:
        job.cancel()
        raise RunEnded(
            f"job {job.job_id} can never start ({state.reason}): it was cancelled; "
            "ask for fewer nodes or less time, or another partition",
            "failed",
        )


def jobs_folder(store_path: Path) -> Path:
    """Where job folders go: $PERFATLAS_JOB_DIR, else perfatlas-jobs/ beside the database (a
    shared filesystem on a cluster: compute nodes write there). Always absolute: scripts and
    command lines name it, and a relative path could begin with '-' (an option to sbatch)."""
    root = os.environ.get("PERFATLAS_JOB_DIR")
    where = "PERFATLAS_JOB_DIR" if root else "the job folder beside the database (--db)"
    check_path_text(root or store_path, where)
    folder = Path(root).resolve() if root else Path(store_path).resolve().parent / "perfatlas-jobs"
    return Path(check_path_text(folder, where))


def new_folder(root: Path, name: str) -> Path:
    check_name(name, "the job folder's name")
    for n in range(1, 1000):
        folder = root / (name if n == 1 else f"{name}.{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
        except OSError as error:
            raise UserError(f"cannot make the job folder {folder}: {error.strerror}") from None
    raise UserError(f"{root} holds too many folders named {name}; remove old ones")


@dataclass
class Job:
    """A submitted job (sbatch) or the script run inside the current allocation."""

    job_id: str
    process: subprocess.Popen | None = None  # inside an allocation

    def state(self) -> slurm.JobState:
        if self.process is None:
            return slurm.job_state(self.job_id)
        code = self.process.poll()
        if code is None:
            return slurm.JobState("RUNNING")
        return slurm.JobState("COMPLETED" if code == 0 else "FAILED")

    def cancel(self) -> None:
        if self.process is None:
            slurm.cancel(self.job_id)
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # srun passes it on to its tasks
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start_job(script: Path, folder: Path, sbatch_args: tuple[str, ...]) -> Job:
    inside = os.environ.get("SLURM_JOB_ID")
    if inside:
        slurm.require("srun")
        console.print(
            f"inside Slurm allocation {inside}: the steps start directly (srun, mpirun)",
            soft_wrap=True,
        )
        with open(folder / "job.out", "w") as out, open(folder / "job.err", "w") as err:
            process = subprocess.Popen(
                ["bash", str(script)], stdout=out, stderr=err, start_new_session=True
            )
        return Job(inside, process)
    job_id = slurm.submit(str(script), sbatch_args)
    (folder / "job-id").write_text(job_id + "\n")
    console.print(f"submitted Slurm job {job_id} (script {script})", soft_wrap=True)
    return Job(job_id)


def _nodes(folder: Path) -> list[str]:
    path = folder / "nodes"
    return path.read_text().split() if path.exists() else []


def _in_allocation(options: LaunchOptions) -> LaunchOptions:
    """Inside an allocation node-level steps use all its nodes, or the --nodes first of them."""
    if not os.environ.get("SLURM_JOB_ID"):
        return options
    allocated = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
    nodes = options.slurm.nodes or allocated
    if nodes > allocated:
        raise UserError(
            f"--nodes {nodes} exceeds the {allocated} node(s) of allocation "
            f"{os.environ['SLURM_JOB_ID']}"
        )
    return replace(options, slurm=replace(options.slurm, nodes=nodes))


def measure_in_job(
    runner: Destination, measurements: list[Planned], repeat: int, options: LaunchOptions
) -> list[dict]:
    """Run `measurements` as the steps of one job; returns the documents stored."""
    options = _in_allocation(options)
    measured, stored = [], []
    for planned in measurements:
        params = planned.benchmark.with_stored(planned.params, runner.store, runner.machine)
        planned = Planned(
            planned.benchmark, params, planned.placement, planned.annotate, planned.note
        )
        why = planned.benchmark.unmeasurable(params, runner.machine)
        if why:  # stored as it is, as a local run would: no step for it
            stored += _store_unmeasurable(runner, planned, why)
        else:
            measured.append(planned)
    if not measured:
        return stored
    folder = new_folder(jobs_folder(runner.store.path), f"run-{runner.run_id}")
    steps = make_steps(measured, repeat, runner.machine, options, folder)
    name = f"perfatlas-run-{runner.run_id}"
    script = folder / "job.sh"
    script.write_text(batch_script(steps, options.slurm, folder, name))
    script.chmod(0o755)
    launches = sum(len(s.launches) for s in steps)
    console.print(
        f"{name}: {len(steps)} step(s), {launches} launch(es), results in {folder}", soft_wrap=True
    )
    job = start_job(script, folder, options.slurm.sbatch_args)
    return stored + _watch(runner, job, steps, folder)


def _store_unmeasurable(runner: Destination, planned: Planned, why: str) -> list[dict]:
    benchmark = planned.benchmark
    documents = []
    for params in series_points(planned.params, benchmark):  # one per size of a series
        document = {
            "schema": "perfatlas.result/1",
            "benchmark": benchmark.name,
            "params": params,
            "not_measurable": why,
            "units": dict(benchmark.metrics),
        }
        validate(document, benchmark.name)
        runner.store.add_document(runner.run_id, document, [])
        documents.append(document)
    return documents


def _watch(runner: Destination, job: Job, steps: list[Step], folder: Path) -> list[dict]:
    """Poll until the job ends, importing finished steps; then account for the others."""
    waiting = list(steps)
    stored: list[dict] = []
    failures: list[str] = []
    complete: list[Step] = []
    record = {"scheduler": "slurm", "job_id": job.job_id, "folder": str(folder)}

    def import_finished(final: bool = False) -> None:
        for step in [s for s in waiting if s.finished or (final and s.started)]:
            waiting.remove(step)
            collected = collect(step, _nodes(folder), record)
            for document, warnings in collected.stored:
                runner.store.add_document(runner.run_id, document, warnings)
                stored.append(document)
            failures.extend(collected.failures)
            if not collected.failures and step.finished:
                complete.append(step)

    try:
        unknown = 0  # polls in a row at which no command knew the job (a busy controller?)
        with _progress(len(steps)) as show:
            while True:
                state = job.state()
                unknown = unknown + 1 if state.state == "UNKNOWN" else 0
                import_finished()
                show(len(steps) - len(waiting), _state_text(job, state, waiting))
                if state.finished and (
                    unknown == 0 or unknown >= UNKNOWN_POLLS or _script_ended(folder)
                ):
                    break
                cancel_if_hopeless(job, state)
                time.sleep(poll_s())
            _wait_for_files(folder, waiting)
            import_finished(final=True)
            show(len(steps) - len(waiting), f"job {job.job_id} {state.state}")
    except BaseException:  # Ctrl-C, SIGTERM: stop the job, keep what finished
        job.cancel()
        import_finished(final=True)
        raise
    return _conclude(job, state, len(steps), len(complete), waiting, stored, failures)


def _script_ended(folder: Path) -> bool:
    return (folder / "finished").exists()


def _wait_for_files(folder: Path, waiting: list[Step]) -> None:
    """A shared filesystem may show files late: wait (at most $PERFATLAS_JOB_GRACE s, default
    10) for the script's end marker while launches are missing."""
    grace = float(os.environ.get("PERFATLAS_JOB_GRACE") or 10.0)
    deadline = time.monotonic() + grace
    while waiting and not _script_ended(folder) and time.monotonic() < deadline:
        time.sleep(min(poll_s(), 0.5))
        if all(s.finished for s in waiting):
            return


def _state_text(job: Job, state: slurm.JobState, waiting: list[Step]) -> str:
    text = f"job {job.job_id} {state.state}"
    if state.reason:
        text += f" ({state.reason})"
    running = [s for s in waiting if s.started and not s.finished]
    if state.state == "RUNNING" and running:
        text += f": {running[0].title}"
    return text


def _conclude(
    job: Job,
    state: slurm.JobState,
    total: int,
    complete: int,
    waiting: list[Step],
    stored: list[dict],
    failures: list[str],
) -> list[dict]:
    for step in waiting:  # never started: the job ended before them
        failures.append(f"{step.title}: not started (job {job.job_id} ended {state.state})")
    for sentence in failures:
        console.print(f"[red]{escape(sentence)}[/]", soft_wrap=True)
    if not failures and state.state == "COMPLETED":
        return stored
    status = "interrupted" if state.state in slurm.INTERRUPTING else "failed"
    summary = (
        f"job {job.job_id} ended {state.state}"
        + (f" ({state.reason})" if state.reason else "")
        + f": {complete} of {total} step(s) complete, {len(failures)} problem(s) "
        "listed above; the run keeps what was imported"
    )
    raise RunEnded(summary, status)


class _progress:
    """A progress bar of steps with the job's state beside it."""

    def __init__(self, total: int):
        self.bar = Progress(
            TextColumn("[bold]steps"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[state]}"),
            console=console,
        )
        self.task = self.bar.add_task("steps", total=total, state="")

    def __enter__(self):
        self.bar.__enter__()
        return lambda done, text: self.bar.update(self.task, completed=done, state=text)

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)
