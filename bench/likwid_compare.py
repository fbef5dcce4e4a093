#!/usr/bin/env python3
"""perfatlas mem.bandwidth against likwid-bench on the same machine, alternating, in one run.

For each kernel (triad, copy; normal and non-temporal stores) and each thread count (1 and all
PUs) the two tools are launched in turn, ROUNDS times, on the same 1 GB working set and the same
PUs, so that drift of the machine falls on both alike (Hoefler & Belli, SC15). One figure per
launch: likwid-bench's MByte/s (its whole timed run), perfatlas's median sample. Both count the
bytes the kernel names, without write-allocate traffic. Prints the median of each tool and the
ratio perfatlas / likwid-bench with a 95 % bootstrap interval; the goal is a ratio >= 1.

    .venv/bin/python bench/likwid_compare.py [--rounds 7] [--bytes 1GB]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys

from perfatlas.benchmarks import get
from perfatlas.machine import Machine
from perfatlas.stats import ratio
from perfatlas.units import parse_size

# perfatlas op and store kind -> likwid-bench kernel (without the ISA suffix).
KERNELS = {
    ("triad", "normal"): "stream",
    ("copy", "normal"): "copy",
    ("triad", "nt"): "stream_mem",
    ("copy", "nt"): "copy_mem",
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
            str(max(10, int(2e10 // n_bytes))),
        ],  # about half a second at DRAM speed
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bytes", default="1GB")
    args = parser.parse_args()
    if not shutil.which("likwid-bench"):
        sys.exit("likwid-bench is missing: apt-get install likwid")
    n_bytes = parse_size(args.bytes)
    machine = Machine.detect()
    suffix = isa_suffix()
    print(
        f"{'kernel':22s} {'threads':>7s} {'perfatlas GB/s':>15s} {'likwid GB/s':>12s}  "
        "ratio [95% CI]"
    )
    for (op, store), likwid_kernel in KERNELS.items():
        for threads in sorted({1, len(machine.pus)}):
            ours, theirs = [], []
            for _ in range(args.rounds):
                ours.append(perfatlas_bandwidth(op, store, n_bytes, threads, machine))
                theirs.append(likwid_bandwidth(likwid_kernel + suffix, n_bytes, threads))
            r = ratio(ours, theirs)
            label = f"{op} ({store}) / {likwid_kernel}{suffix}"
            print(
                f"{label:22s} {threads:7d} {sorted(ours)[len(ours) // 2] / 1e9:15.2f} "
                f"{sorted(theirs)[len(theirs) // 2] / 1e9:12.2f}  "
                f"{r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]",
                flush=True,
            )


if __name__ == "__main__":
    main()
