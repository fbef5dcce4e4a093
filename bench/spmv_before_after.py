#!/usr/bin/env python3
"""app.spmv's remote variants from two builds of pa-spmv, alternating, in one run: a change's
cost or gain (issue 18: the variants rewritten on libpa-smi against the hand-coded MPI calls of
ce7d2ea^, "same or better speed").

Each round launches each build's pa-spmv once on each matrix (`mpirun -np NP --bind-to core`,
$PERFATLAS_MPIRUN or mpirun; the first build alternating from round to round), directly rather
than through perfatlas, whose parameters follow the installed build: drift of the machine falls on
both alike (Hoefler & Belli, SC15). One figure per launch and
variant: the median of its samples (seconds per product). Printed per matrix and variant: the
medians of the rounds and after / before with a 95 % bootstrap interval (< 1: the second build
is faster).

Build both the same way, e.g. for issue 18:

    git worktree add /tmp/before ce7d2ea^
    cmake -S /tmp/before -B /tmp/before/build -G Ninja && cmake --build /tmp/before/build
    cmake -S . -B /tmp/after -G Ninja && cmake --build /tmp/after
    .venv/bin/python bench/spmv_before_after.py /tmp/before/build/bin /tmp/after/bin --rounds 11

--hosts runs the two ranks on two network-namespace hosts instead (bench/netns_bed.py, root;
rank 0 on CPU 0, rank 1 on CPU 1), where a remote element crosses TCP (Open MPI's osc pt2pt,
osc sm for a host's own part): a remote access then costs microseconds, as on a cluster's
network, rather than the tens of nanoseconds of shared memory. read_shared needs one host and is
left out there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import numpy as np
from netns_bed import test_bed

from perfatlas.common.stats import ratio
from perfatlas.machine.topology import Machine

ROOT = Path(__file__).resolve().parent.parent
MATRICES = Path(os.environ.get("PERFATLAS_MATRICES", ROOT.parent / "shared" / "data" / "matrices"))
VARIANTS = ["read_element", "read_replicate", "read_shared", "write_element", "write_combine"]


def launch(
    bin_dir: Path, matrix: Path, np_: int, mpirun_args: list[str], variants: list[str]
) -> dict[str, float]:
    """One launch of `bin_dir`'s pa-spmv: each measured variant's median seconds per product."""
    mpirun = os.environ.get("PERFATLAS_MPIRUN", "mpirun")
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    words = [f"matrix={matrix}", f"variants={','.join(variants)}"]
    done = subprocess.run(
        [mpirun, *mpirun_args, "-np", str(np_), str(bin_dir / "pa-spmv"), *words],
        capture_output=True, text=True, env=env, check=True, timeout=600,
    )  # fmt: skip
    samples = json.loads(done.stdout)["samples"]
    return {v: float(np.median(samples[f"{v}_s"])) for v in variants if samples.get(f"{v}_s")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="bin/ folder of the first build")
    parser.add_argument("after", type=Path, help="bin/ folder of the second build")
    parser.add_argument("--matrices", default="jagmesh7,494_bus,west0479")
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--hosts", action="store_true", help="two netns hosts (root; np = 2)")
    args = parser.parse_args()
    for folder in (args.before, args.after):
        if not (folder / "pa-spmv").is_file():
            parser.error(f"{folder} holds no pa-spmv: name a build's bin/ folder")
    if args.hosts:
        if args.np != 2:
            parser.error("--hosts runs np = 2 (one rank on each of two hosts)")
        with test_bed() as (_, mpirun_args):
            compare(args, [*mpirun_args, "--mca", "osc", "sm,pt2pt"], "two netns hosts")
    else:
        compare(args, ["--bind-to", "core"], "one node")


def compare(args: argparse.Namespace, mpirun_args: list[str], where: str) -> None:
    """Both builds alternated on every matrix; the table."""
    machine = Machine.detect()
    print(f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs, np={args.np}, "
          f"{where}")  # fmt: skip
    print(f"{'matrix':10s} {'variant':15s} {'before us':>10s} {'after us':>9s}  after / before")
    variants = args.variants.split(",")
    for name in args.matrices.split(","):
        matrix = MATRICES / f"{name}.mtx"
        builds = [args.before, args.after]
        times: dict[Path, list[dict[str, float]]] = {b: [] for b in builds}
        for round_ in range(args.rounds):
            for build in builds[round_ % 2 :] + builds[: round_ % 2]:
                times[build].append(launch(build, matrix, args.np, mpirun_args, variants))
        for variant in variants:
            before = [t[variant] for t in times[args.before] if variant in t]
            after = [t[variant] for t in times[args.after] if variant in t]
            if not before or not after:
                continue
            r = ratio(after, before)
            print(
                f"{name:10s} {variant:15s} {np.median(before) * 1e6:10.2f} "
                f"{np.median(after) * 1e6:9.2f}  {r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]",
                flush=True,
            )


if __name__ == "__main__":
    main()
