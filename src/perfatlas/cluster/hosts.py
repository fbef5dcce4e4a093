"""Node-level benchmarks on every host of a hostfile at once, through mpirun (no Slurm needed).

With `--launcher mpirun` and a hostfile (--hostfile, or one among --mpirun-args), a node-level
benchmark (memory, noise) is started once on every host by mpirun itself: Open MPI maps one
process per node (--map-by ppr:1:node), MPICH's hydra takes -ppn 1. The executable needs no MPI;
mpirun only starts it, under the wrapper of perfatlas.launch.per_node, so every host writes its
own document into a folder shared with the hosts (perfatlas-jobs/ beside the database, or
$PERFATLAS_JOB_DIR) and each document is labelled with the host that wrote it. MPI benchmarks
launch as with the mpirun launcher.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from perfatlas.benchmarks.prepare_launch import prepare_launch
from perfatlas.cluster.collect import label_host
from perfatlas.common.errors import UserError
from perfatlas.launch.launchers import Launch, LaunchOptions, get_launcher
from perfatlas.launch.per_node import error_tail, hostfile_hosts, node_name, read_per_node
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine


def on_every_host(
    benchmark,
    params: dict[str, Any],
    machine: Machine,
    options: LaunchOptions,
    store_path: Path,
    placement: Placement | None = None,
) -> list[dict]:
    """One launch of a node-level benchmark on every host at once; a document per host."""
    inner, _ = prepare_launch(benchmark, params, machine, options, placement, launcher="local")
    folder = _new_folder(store_path)
    launch = get_launcher("mpirun").on_every_node(inner, str(folder), options)
    returncode, output = _run(launch)
    found = _read(folder, benchmark.executable, options)
    what = f"{benchmark.name} {benchmark.label(params)}"
    if found.failures or not found.documents:
        problems = [f"{node_name(host)}: {why}" for host, why in found.failures.items()]
        if not found.documents and not found.failures:
            tail = error_tail(output) or "no output"
            problems = [f"mpirun exited with status {returncode} and no host wrote: {tail}"]
        raise UserError(f"{what}: {'; '.join(problems)} (files kept in {folder})")
    documents = []
    for host, written in sorted(found.documents.items()):
        for document in written:
            document.setdefault("launch", launch.record())
            documents.append(label_host(document, host))
    shutil.rmtree(folder, ignore_errors=True)
    return documents


PROBE_TIMEOUT_S = 60.0


def probe_hosts(options: LaunchOptions, store_path: Path) -> list[str]:
    """Before anything is measured: start a trivial command on every host the way measurements
    will be started (mpirun, one process per host, the same arguments); the hosts that answered,
    or one sentence naming those that did not."""
    folder = _new_folder(store_path)
    probe = Launch("local", ["echo", "{}"])
    launch = get_launcher("mpirun").on_every_node(probe, str(folder), options)
    try:
        returncode, output = _run(launch, PROBE_TIMEOUT_S)
        found = _read(folder, "echo", options)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    answered = sorted(found.documents)
    if returncode == 0 and answered and not found.failures:
        return answered
    named = hostfile_hosts(options.hostfile, list(options.mpirun_args)) or ["localhost"]
    failed = [host for host in found.failures if host in named] or list(found.failures)
    silent = failed if answered else named
    said = first_lines(output) or f"mpirun exited with status {returncode}"
    raise UserError(
        f"mpirun cannot start a process on every host ({', '.join(silent)} did not answer): "
        f"{said}; check the hostfile and that the hosts are up"
    )


def first_lines(output: str, count: int = 2) -> str:
    """The first meaningful lines of mpirun's complaint (the cause comes before its advice)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    lines = [line for line in lines if not set(line) <= set("-*=")]
    return " | ".join(lines[:count])


def _new_folder(store_path: Path) -> Path:
    """A folder of its own under the job folders, shared with the hosts."""
    from perfatlas.cluster.front_end import jobs_folder

    root = jobs_folder(store_path)
    try:
        root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="hosts-", dir=root))
    except OSError as error:
        raise UserError(f"cannot make a folder in {root}: {error.strerror}") from None


def _read(folder: Path, program: str, options: LaunchOptions):
    """The hosts' documents; hosts of the hostfile that wrote nothing are named when the names
    the hosts report are those of the hostfile (else only their number is known)."""
    named = hostfile_hosts(options.hostfile, list(options.mpirun_args))
    found = read_per_node(folder, program, [], None)
    seen = set(found.documents) | set(found.failures)
    if seen <= set(named):
        for host in named:
            if host not in seen:
                found.failures[host] = "wrote no result: its process never started or died early"
    elif len(seen) < len(named):
        found.failures[f"{len(named) - len(seen)} of {len(named)} hosts"] = "wrote no result"
    return found


def _run(launch: Launch, probe_s: float | None = None) -> tuple[int, str]:
    """Run to the end; `probe_s`: the time limit of a probe (else $PERFATLAS_LAUNCH_TIMEOUT)."""
    timeout = probe_s or float(os.environ.get("PERFATLAS_LAUNCH_TIMEOUT") or 0) or None
    try:
        done = subprocess.run(
            launch.argv,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **launch.env},
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"mpirun did not reach every host within {timeout:g} s: a host does not answer"
            if probe_s
            else f"mpirun did not finish within {timeout:g} s ($PERFATLAS_LAUNCH_TIMEOUT)"
        ) from None
    return done.returncode, done.stderr + done.stdout


def run_on_first_host(argv: list[str], options: LaunchOptions, machine: Machine) -> tuple[int, str]:
    """`argv` once, on the first host of the hostfile (mpirun -np 1, the launch options' hosts
    and arguments); its exit status and output (stderr, then stdout)."""
    launch = get_launcher("mpirun").prepare(Path(argv[0]), argv[1:], {"np": 1}, machine, options)
    return _run(launch)
