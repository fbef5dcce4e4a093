"""Node-level benchmarks on every host of a hostfile at once, through mpirun (no Slurm needed).

With `--launcher mpirun` and a hostfile (--hostfile, or one among --mpirun-args), a node-level
benchmark (memory, noise) is started once on every host by mpirun itself: Open MPI maps one
process per node (--map-by ppr:1:node), MPICH's hydra takes -ppn 1. The executable needs no MPI;
mpirun only starts it, under the wrapper of perfatlas.cluster.per_node, so every host writes its
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

from perfatlas.cluster.collect import label_host
from perfatlas.cluster.per_node import error_tail, hostfile_hosts, node_name, read_per_node
from perfatlas.errors import UserError
from perfatlas.launchers import Launch, LaunchOptions, get_launcher, launch_options
from perfatlas.machine import Machine
from perfatlas.native import executable
from perfatlas.placement import current_placement


def measure_once(benchmark, params: dict[str, Any], machine: Machine, store_path: Path) -> list:
    """One launch of a measurement: on every host when --launcher mpirun asks for a node-level
    benchmark, else as the benchmark launches itself."""
    options = launch_options()
    every_host = options.launcher == "mpirun" and benchmark.launcher_for(params) == "local"
    if not every_host or benchmark.unmeasurable(params, machine):
        return benchmark.run(params, machine)
    return on_every_host(benchmark, params, machine, options, store_path)


def on_every_host(
    benchmark, params: dict[str, Any], machine: Machine, options: LaunchOptions, store_path: Path
) -> list[dict]:
    from perfatlas.cluster.front_end import jobs_folder

    program = executable(benchmark.executable)
    inner = get_launcher("local").prepare(
        program, benchmark.native_args(params, machine), params, machine, options
    )
    placement = current_placement()
    if placement is not None:
        placement.wrap(inner, program, benchmark)
    root = jobs_folder(store_path)
    root.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="hosts-", dir=root))
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


def _run(launch: Launch) -> tuple[int, str]:
    timeout = float(os.environ.get("PERFATLAS_LAUNCH_TIMEOUT") or 0) or None
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
            f"mpirun did not finish within {timeout:g} s ($PERFATLAS_LAUNCH_TIMEOUT)"
        ) from None
    return done.returncode, done.stderr + done.stdout
