#!/usr/bin/env python3
"""perfatlas mem.bandwidth against likwid-bench on the same machine, alternating, in one run.

Every kernel of mem.bandwidth (kernels.def) with the likwid-bench kernel that moves the same
bytes per element over the same number of arrays (KERNELS: where likwid has no kernel of the
same operation, the one of the same traffic, named so in the table), at 1 thread and at all PUs,
with normal stores and, where both tools have one, non-temporal stores. The two tools are
launched in turn, ROUNDS times, on the same 1 GB working set and the same PUs, so that drift of
the machine falls on both alike (Hoefler & Belli, SC15). One figure per launch: likwid-bench's
MByte/s (its whole timed run), perfatlas's median sample. Both count the bytes the kernel names,
without write-allocate traffic. Prints the median of each tool and the ratio perfatlas /
likwid-bench with a 95 % bootstrap interval; the goal is a ratio >= 1. Where perfatlas trails
(a median ratio below 1), the row says what likwid's kernel does differently (DIFFERENCES).

    .venv/bin/python bench/likwid_compare.py [--rounds 7] [--bytes 1GB] [--ops triad,copy]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys

import numpy as np
from peer_rows import record_ratio

from perfatlas.benchmarks import get
from perfatlas.common.units import parse_size
from perfatlas.machine.topology import Machine

# (perfatlas op, store kind) -> likwid-bench kernel without the ISA suffix. likwid has no scale,
# add or non-temporal update: scale is held to copy (1 load + 1 store, 2 arrays), add to stream
# (2 loads + 1 store, 3 arrays); rmw with non-temporal stores has no peer.
KERNELS = {
    ("read", "normal"): "sum",
    ("read_unrolled", "normal"): "sum",
    ("write", "normal"): "store",
    ("write_unrolled", "normal"): "store",
    ("memset", "normal"): "store",
    ("rmw", "normal"): "update",
    ("rmw_unrolled", "normal"): "update",
    ("memcpy", "normal"): "copy",
    ("copy", "normal"): "copy",
    ("scale", "normal"): "copy",
    ("add", "normal"): "stream",
    ("triad", "normal"): "stream",
    ("write", "nt"): "store_mem",
    ("copy", "nt"): "copy_mem",
    ("scale", "nt"): "copy_mem",
    ("add", "nt"): "stream_mem",
    ("triad", "nt"): "stream_mem",
}
NO_PEER = {("rmw", "nt"): "likwid-bench has no non-temporal update kernel"}

# What likwid-bench's kernels do (its hand-written assembly, bench/x86-64/*.ptt; `likwid-bench -l
# KERNEL` prints stride and instruction counts) that perfatlas's compiled loops do not; printed
# where perfatlas trails.
DIFFERENCES = {
    "sum": "likwid sum: 8 zmm accumulators, vaddpd from memory, 64 doubles per loop trip",
    "store": "likwid store: 4 aligned vmovapd of 4 registers per trip (32 doubles)",
    "update": "likwid update: load and store back, no arithmetic (rmw adds s: 1 flop per "
    "element), 4 zmm per trip",
    "copy": "likwid copy: 4 aligned zmm loads then 4 aligned stores per trip (32 doubles)",
    "stream": "likwid stream: per trip 4 x (load, vmulpd, vaddpd from memory, store), no FMA",
    "store_mem": "likwid store_mem: 4 vmovntpd of 4 registers per trip",
    "copy_mem": "likwid copy_mem: 4 zmm loads then 4 vmovntps per trip",
    "stream_mem": "likwid stream_mem: per trip 4 x (load, vmulpd, vaddpd, vmovntpd)",
}


def isa_suffix() -> str:
    flags = open("/proc/cpuinfo").read()
    return "_avx512" if "avx512f" in flags else "_avx" if " avx " in flags else "_sse"


def likwid_bandwidth(kernel: str, n_bytes: int, threads: int) -> float:
    """One likwid-bench launch; -W: each thread first-touches its own chunk, as perfatlas does.

    likwid pins its threads to the domain's hardware threads in order, as perfatlas's
    cpus_for_threads does on a machine with one PU per core.
    """
    out = subprocess.run(
        [
            "likwid-bench",
            "-t",
            kernel,
            "-W",
            f"N:{n_bytes // 1000}kB:{threads}",
            "-i",
            str(max(10, int(1e10 // n_bytes))),
        ],  # about a second at DRAM speed
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"^MByte/s:\s+([0-9.]+)", out, re.MULTILINE)
    if not match:
        sys.exit(f"likwid-bench printed no MByte/s line:\n{out}")
    return float(match.group(1)) * 1e6


def perfatlas_bandwidth(op: str, store: str, n_bytes: int, threads: int, machine: Machine) -> float:
    benchmark = get("mem.bandwidth")
    params = benchmark.resolve(
        {"op": op, "store": store, "bytes": str(n_bytes), "threads": str(threads), "samples": "9"},
        machine,
    )
    (document,) = benchmark.run(params, machine)
    samples = sorted(document["samples"]["bandwidth_Bps"])
    return samples[len(samples) // 2]


def measure(op: str, store: str, threads: int, args, machine: Machine, suffix: str) -> None:
    """ROUNDS alternated launches of both tools; one printed (and recorded) row."""
    likwid = KERNELS[(op, store)]
    n_bytes = parse_size(args.bytes)
    ours, theirs = [], []
    for round_ in range(args.rounds):
        first_ours = round_ % 2 == 0  # alternate which tool goes first
        for ours_now in (first_ours, not first_ours):
            if ours_now:
                ours.append(perfatlas_bandwidth(op, store, n_bytes, threads, machine))
            else:
                theirs.append(likwid_bandwidth(likwid + suffix, n_bytes, threads))
    label = f"{op} ({store})"
    peer = f"likwid-bench {likwid}{suffix}"
    r = record_ratio(
        "likwid_compare", f"bandwidth {label}", peer, [x / 1e9 for x in ours],
        [x / 1e9 for x in theirs], ">= 1", threads, "GB/s", DIFFERENCES[likwid],
    )  # fmt: skip
    note = DIFFERENCES[likwid] if r.median < 1 else ""
    print(
        f"{label:22s} {likwid + suffix:20s} {threads:7d} {np.median(ours) / 1e9:15.2f} "
        f"{np.median(theirs) / 1e9:12.2f}  {r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]"
        + (f"   trails: {note}" if note else ""),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bytes", default="1GB")
    parser.add_argument("--ops", default="", help="only these kernels (comma-separated)")
    parser.add_argument("--stores", default="normal,nt", help="normal, nt or both")
    args = parser.parse_args()
    if not shutil.which("likwid-bench"):
        sys.exit("likwid-bench is missing: apt-get install likwid")
    machine = Machine.detect()
    suffix = isa_suffix()
    ops = [op for op in args.ops.split(",") if op]
    stores = args.stores.split(",")
    print(f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs, {args.bytes}")
    print(
        f"{'kernel':22s} {'likwid-bench':20s} {'threads':>7s} {'perfatlas GB/s':>15s} "
        f"{'likwid GB/s':>12s}  ratio [95% CI]"
    )
    for store in ("normal", "nt"):
        for (op, kind), _ in KERNELS.items():
            if kind != store or store not in stores or (ops and op not in ops):
                continue
            for threads in sorted({1, len(machine.pus)}):
                measure(op, store, threads, args, machine, suffix)
    for (op, store), why in NO_PEER.items():
        if store in stores and (not ops or op in ops):
            print(f"{op} ({store}): not measurable against likwid-bench: {why}")


if __name__ == "__main__":
    main()
