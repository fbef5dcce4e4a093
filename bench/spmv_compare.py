#!/usr/bin/env python3
"""app.spmv's node-level kernels against scipy, Intel MKL and librsb, alternating, in one run.

On every Matrix Market file of ../shared/data/matrices (or $PERFATLAS_MATRICES) and on app.spsolve's
Q1 elasticity stiffness matrices (problem=elasticity3d: n=4 and n=6, 51 and 59 nonzeros per row,
in cache; n=--big, beyond the LLC), at 1 thread and at all PUs, ROUNDS rounds each launch in turn:
- perfatlas: `pa-spmv` through app.spmv (np=1, variants=none, kernels=--kernels): every node-level
  kernel's seconds per product, its result checked by pa-spmv (exit 3 when wrong);
- MKL: the inspector-executor mkl_sparse_d_mv (set_mv_hint + optimize; MKL's sequential layer at
  1 thread, its GNU OpenMP layer at more: its best at each count) and librsb's rsb_spmv
  (after rsb_tune_spmm), timed in C by bench/spmv_peers.c on the same matrix (written by it
  with pa-spmv's reader and generator), each result checked against a plain CSR product;
- scipy: `A @ x` of a scipy.sparse CSR matrix (one thread, whatever the count: scipy has no
  threaded product), timed here in batches of at least 10 ms.
Every tool runs on the same PUs: those Open MPI binds perfatlas's rank to (its first core; with
threads, --map-by slot:PE=threads), by taskset for the peers and sched_setaffinity for scipy.
Drift of the machine falls on all alike (Hoefler & Belli, SC15). Each launch gives its median
seconds per product (--per-launch min: its fastest sample); ratios are peer time / perfatlas
time (> 1: perfatlas is faster), medians of the rounds with 95 % bootstrap intervals. Where the matrix exceeds twice the LLC, the roofline
bound is bytes moved (pa-spmv's bytes_min: 12 B per nonzero, 12 B per row, 8 B per distinct
column) / the triad bandwidth perfatlas measures at the same thread count (mem.bandwidth, 1 GiB),
and `roofline` is that bound's time over the kernel's. Goals (issue 21): best variant >= 1.0x
MKL, >= 1.3x scipy, >= 70 % of the roofline bound.

MKL comes from PyPI (`pip install mkl` into this venv: `make bench` does it), librsb from Debian
(librsb-dev). Both are peers of the benchmark only, never dependencies of perfatlas.

    .venv/bin/python bench/spmv_compare.py [--rounds 5] [--big 36] [--kernels all]
                                           [--per-launch median|min] [--matrices LABELS]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peer_rows import record_ratio

from perfatlas.benchmarks import get
from perfatlas.common.stats import ratio
from perfatlas.machine.topology import Machine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MATRICES = Path(os.environ.get("PERFATLAS_MATRICES", ROOT.parent / "shared" / "data" / "matrices"))
PEER_SOURCES = [
    "bench/spmv_peers.c",
    "native/app/spsolve/matrix_market.c",
    "native/app/spsolve/sparse.c",
    "native/app/spsolve/problems.c",
    "native/common/alloc.c",
    "native/common/args.c",
    "native/common/json.c",
]
MIN_BATCH_S = 0.01
# One figure per launch from its samples (seconds per product): the median (the default), or
# the fastest sample (--per-launch min: on a machine others load, the least disturbed one).
PER_LAUNCH = {"median": np.median, "min": np.min}
per_launch = PER_LAUNCH["median"]
PEER_NAMES = {"mkl": "MKL", "scipy": "scipy", "rsb": "librsb"}


def build_peers(folder: Path) -> Path:
    if not Path("/usr/include/rsb.h").is_file():
        sys.exit("spmv_compare: librsb is missing: apt-get install librsb-dev")
    program = folder / "spmv-peers"
    subprocess.run(
        ["cc", "-O3", "-march=native", "-Inative/common", "-Inative/app/spsolve",
         *PEER_SOURCES, "-o", str(program), "-lrsb", "-ldl", "-lm"],
        check=True, cwd=ROOT,
    )  # fmt: skip
    return program


def libmkl_rt() -> str | None:
    found = sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")))
    return found[-1] if found else None


def read_csr(path: Path):  # -> scipy.sparse.csr_matrix
    from scipy.sparse import csr_matrix

    with path.open("rb") as f:
        n, nnz = np.fromfile(f, dtype=np.int64, count=2)
        rowptr = np.fromfile(f, dtype=np.int32, count=n + 1)
        colind = np.fromfile(f, dtype=np.int32, count=nnz)
        values = np.fromfile(f, dtype=np.float64, count=nnz)
    return csr_matrix((values, colind, rowptr), shape=(n, n))


def x_values(n: int) -> np.ndarray:
    """pa-spmv's x (pa_x_value): 1 + (37 j mod 101) / 128."""
    return 1.0 + ((37 * np.arange(n, dtype=np.int64)) % 101) / 128.0


def scipy_seconds(a, samples: int, cpus: list[int]) -> float:
    """Seconds per `a @ x` over `samples` batches of at least MIN_BATCH_S, on the first of
    `cpus` (scipy's product has one thread)."""
    x = x_values(a.shape[0])
    os.sched_setaffinity(0, cpus[:1])
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            a @ x
        if time.perf_counter() - start >= MIN_BATCH_S:
            break
        count *= 2
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(count):
            a @ x
        times.append((time.perf_counter() - start) / count)
    return float(per_launch(times))


def peer_seconds(program: Path, csr: Path, peer: str, cpus: list[int], mkl: str | None) -> float:
    """One launch of a peer on `cpus` (one thread on each), the PUs perfatlas's rank is bound
    to (Open MPI binds a rank to its first core, --map-by slot:PE=threads to as many)."""
    threads = len(cpus)
    # MKL's threading layer: bench/spmv_peers.c sets it, by the thread count
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "close",
           "OMP_PLACES": "cores"}  # fmt: skip
    argv = ["taskset", "-c", ",".join(map(str, cpus)), str(program), "time", str(csr), peer,
            str(threads), "9"]  # fmt: skip
    done = subprocess.run(argv + ([mkl] if peer == "mkl" else []), capture_output=True, text=True,
                          env=env)  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"spmv_compare: {peer} failed: {done.stderr.strip()}")
    return float(per_launch(json.loads(done.stdout)["seconds_per_product"]))


def perfatlas_seconds(source: dict, threads: int, kernels: str, machine: Machine) -> dict:
    """Median seconds per product of every node-level kernel, and the roofline's bytes_min."""
    benchmark = get("app.spmv")
    raw = {**source, "np": "1", "threads": str(threads), "variants": "none", "bandwidth": "0"}
    if kernels != "none":  # the default (csr alone: the only kernel before issue 21)
        raw["kernels"] = kernels
    (document,) = benchmark.run(benchmark.resolve(raw, machine), machine)
    samples = document["samples"]
    nnz = document["derived"]["csr"]["flops_per_product"] / 2
    seconds = {"csr": float(per_launch([2 * nnz / r for r in samples["csr_flops_per_s"]]))}
    for key, values in samples.items():
        name = key.removesuffix("_s")
        if key.endswith("_s") and name not in ("local", "local_transposed", "csr_flops_per"):
            seconds[name] = float(per_launch(values))
    seconds["bytes_min"] = document["derived"]["roofline"]["bytes_min"]
    return seconds


def triad_bandwidth(threads: int, machine: Machine) -> float:
    benchmark = get("mem.bandwidth")
    raw = {"op": "triad", "bytes": "1GiB", "threads": str(threads), "samples": "9"}
    (document,) = benchmark.run(benchmark.resolve(raw, machine), machine)
    return float(np.median(document["samples"]["bandwidth_Bps"]))


def cell(peer: list[float] | None, ours: list[float]) -> str:
    """peer / ours, ratio of medians with its 95 % interval ('n/a': the peer is not here)."""
    if not peer:
        return "n/a"
    r = ratio(peer, ours)
    return f"{r.median:5.2f} [{r.ci_lo:.2f},{r.ci_hi:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--big", type=int, default=36, help="elasticity3d n beyond the LLC")
    parser.add_argument("--kernels", default="all", help="app.spmv kernels= (none: before)")
    parser.add_argument("--per-launch", choices=PER_LAUNCH, default="median")
    parser.add_argument(
        "--matrices", default="",
        help="comma-separated substrings: only the matrices whose label contains one "
        "(e.g. 'bcsstk01,elasticity3d n=4'); default every one",
    )  # fmt: skip
    args = parser.parse_args()
    global per_launch
    per_launch = PER_LAUNCH[args.per_launch]
    try:
        import scipy  # noqa: F401
    except ImportError:
        sys.exit("spmv_compare: scipy is missing: pip install scipy (make bench does)")
    mkl = libmkl_rt()
    if mkl is None:  # PyPI has x86-64 wheels of MKL only
        print("MKL: not measurable here: no libmkl_rt in this venv (pip install mkl, x86-64)")
    machine = Machine.detect()
    llc = machine.last_level_cache_bytes
    sources = [(p.name, {"matrix": str(p)}, ["matrix=" + str(p)])
               for p in sorted(MATRICES.glob("*.mtx"))]  # fmt: skip
    for n in (4, 6, args.big):
        words = ["problem=elasticity3d", f"n={n}"]
        sources.append((f"elasticity3d n={n}", {"problem": "elasticity3d", "n": str(n)}, words))
    wanted = [w.strip() for w in args.matrices.split(",") if w.strip()]
    sources = [s for s in sources if not wanted or any(w in s[0] for w in wanted)]
    if not sources:
        sys.exit(f"spmv_compare: --matrices '{args.matrices}' matches no matrix")
    thread_counts = sorted({1, len(machine.pus)})
    everywhere = os.sched_getaffinity(0)
    bandwidth = {t: triad_bandwidth(t, machine) for t in thread_counts}
    print("triad bandwidth (perfatlas mem.bandwidth, 1 GiB): "
          + ", ".join(f"{t} thread(s) {b / 1e9:.2f} GB/s" for t, b in bandwidth.items()))  # fmt: skip
    print(f"{'matrix':20s} {'nnz/row':>7s} {'thr':>3s} {'kernel':12s} {'us':>9s}  "
          f"{'vs MKL':18s} {'vs scipy':18s} {'vs librsb':18s} roofline")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        program = build_peers(Path(tmp))
        for label, source, words in sources:
            csr = Path(tmp) / "matrix.csr"
            subprocess.run([str(program), "write", str(csr), *words], check=True)
            a = read_csr(csr)
            for threads in thread_counts:
                cpus = machine.cpus_for_threads(threads)
                ours: dict[str, list[float]] = {}
                peers: dict[str, list[float]] = {"mkl": [], "scipy": [], "rsb": []}
                if mkl is None:
                    del peers["mkl"]
                for _ in range(args.rounds):
                    for name, value in perfatlas_seconds(source, threads, args.kernels,
                                                         machine).items():  # fmt: skip
                        ours.setdefault(name, []).append(value)
                    if mkl is not None:
                        peers["mkl"].append(peer_seconds(program, csr, "mkl", cpus, mkl))
                    peers["rsb"].append(peer_seconds(program, csr, "rsb", cpus, mkl))
                    peers["scipy"].append(scipy_seconds(a, 9, cpus))
                    os.sched_setaffinity(0, everywhere)
                bytes_min = ours.pop("bytes_min")[0]
                best = min(ours, key=lambda k: np.median(ours[k]))
                for peer, times in peers.items():  # the one peers table (bench/peers.py)
                    record_ratio(
                        "spmv_compare", f"SpMV {label}, kernel {best}", PEER_NAMES[peer],
                        [1 / x for x in ours[best]], [1 / x for x in times],
                        ">= 1.3" if peer == "scipy" else ">= 1", threads, "products/s",
                    )  # fmt: skip
                for name, times in ours.items():
                    t = float(np.median(times))
                    roof = ""
                    if bytes_min > 2 * llc:
                        roof = f"{bytes_min / bandwidth[threads] / t * 100:5.1f} %"
                    mark = "*" if name == best else " "
                    print(f"{label:20s} {a.nnz / a.shape[0]:7.1f} {threads:3d} {mark}{name:11s} "
                          f"{t * 1e6:9.2f}  {cell(peers.get('mkl'), times):18s} "
                          f"{cell(peers['scipy'], times):18s} "
                          f"{cell(peers['rsb'], times):18s} {roof}", flush=True)  # fmt: skip
                medians = ", ".join(f"{PEER_NAMES[k]} {np.median(v) * 1e6:.2f}"
                                    for k, v in peers.items())  # fmt: skip
                print(f"{'':20s} {'':7s} {threads:3d}  peers (us): {medians}", flush=True)


if __name__ == "__main__":
    main()
