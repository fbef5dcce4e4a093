#!/usr/bin/env python3
"""What perfatlas adds to a sparse solve: app.spsolve through `perfatlas measure` against the same
CHOLMOD calls made directly by a small C program (bench/spsolve_direct.c), launches alternated in
one run (Hoefler & Belli, SC15), one thread each.

Both solve the same Matrix Market file (a 3-D 7-point Laplacian written here) with AMD ordering and
the supernodal factorization, `--repeat` times per launch after one untimed solve.
1. Per solve: perfatlas's reorder + symbolic + numeric + solve against the direct program's
   analyze + factorize + solve; the ratio of medians with a 95 % bootstrap interval. This is the
   harness overhead of what is measured (goal: under 1 %).
2. Per launch: the wall time of the whole `perfatlas measure` command against the direct program's,
   in seconds -- the fixed cost of the tool (Python start, topology, store, residual check).

    .venv/bin/python bench/spsolve_overhead.py [--n 30] [--rounds 7] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peer_rows import record_ratio

HERE = Path(__file__).resolve().parent
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def write_laplace3d(path: Path, n: int) -> None:
    """The 7-point Laplacian of an n^3 grid, lower triangle, Matrix Market symmetric."""
    index = np.arange(n**3).reshape(n, n, n)
    rows, cols = [index.ravel()], [index.ravel()]
    values = [np.full(n**3, 6.0)]
    for axis in range(3):
        lower = np.take(index, range(1, n), axis=axis).ravel()
        upper = np.take(index, range(n - 1), axis=axis).ravel()
        rows.append(lower), cols.append(upper), values.append(np.full(lower.size, -1.0))
    r, c, v = (np.concatenate(x) for x in (rows, cols, values))
    with path.open("w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write(f"{n**3} {n**3} {r.size}\n")
        np.savetxt(f, np.column_stack([r + 1, c + 1, v]), fmt="%d %d %.1f")


def build_direct(folder: Path) -> Path:
    program = folder / "spsolve-direct"
    subprocess.run(
        ["cc", "-O2", "-I/usr/include/suitesparse", str(HERE / "spsolve_direct.c"), "-o",
         str(program), "-lcholmod"],
        check=True,
    )  # fmt: skip
    return program


def timed(argv: list[str]) -> tuple[str, float]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **ONE_THREAD})
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.strip()[-600:]}")
    return done.stdout, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="grid points per edge (default 30)")
    parser.add_argument("--rounds", type=int, default=7, help="alternated launch pairs")
    parser.add_argument("--repeat", type=int, default=5, help="timed solves per launch")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        matrix = folder / "laplace3d.mtx"
        write_laplace3d(matrix, args.n)
        direct = build_direct(folder)
        tool = [sys.executable, "-m", "perfatlas", "--db", str(folder / "bench.db"), "measure"]
        tool += ["app.spsolve", f"matrix={matrix}", "solver=cholmod", "ordering=amd", "threads=1"]
        tool += [f"repeat={args.repeat}", "warmup=1", "--json", str(folder / "out.json")]
        via_tool, via_direct, wall_tool, wall_direct = [], [], [], []
        for _ in range(args.rounds):
            _, wall = timed(tool)
            samples = json.loads((folder / "out.json").read_text())["samples"]
            phases = ("reorder_s", "symbolic_s", "numeric_s", "solve_s")
            via_tool += list(np.sum([samples[p] for p in phases], axis=0))
            wall_tool.append(wall)
            out, wall = timed([str(direct), str(matrix), str(args.repeat + 1)])
            lines = out.splitlines()[1:]  # the first solve is the warm-up
            via_direct += [sum(map(float, line.split())) for line in lines]
            wall_direct.append(wall)
    r = record_ratio(
        "spsolve_overhead", f"app.spsolve per solve, Laplacian n={args.n}, via perfatlas",
        "the same CHOLMOD calls in C", via_tool, via_direct, "<= 1.01", 1, "s",
    )  # fmt: skip
    print(f"3-D Laplacian n={args.n} ({args.n**3} unknowns), CHOLMOD supernodal, AMD, 1 thread")
    print(f"per solve: perfatlas {np.median(via_tool) * 1e3:.1f} ms, direct "
          f"{np.median(via_direct) * 1e3:.1f} ms ({len(via_tool)} solves each)")  # fmt: skip
    print(f"harness overhead per solve: {100 * (r.median - 1):+.2f} % "
          f"[{100 * (r.ci_lo - 1):+.2f}, {100 * (r.ci_hi - 1):+.2f}] (goal: under 1 %)")  # fmt: skip
    print(f"per launch: perfatlas measure {np.median(wall_tool):.2f} s, direct "
          f"{np.median(wall_direct):.2f} s wall ({args.repeat + 1} solves each): fixed cost "
          f"{np.median(wall_tool) - np.median(wall_direct):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
