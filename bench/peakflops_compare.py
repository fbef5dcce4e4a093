#!/usr/bin/env python3
"""perfatlas cpu.peakflops against likwid-bench's peakflops kernels, alternating, in one run.

For each instruction set both tools offer on this CPU (scalar, SSE, AVX2 + FMA, AVX-512 + FMA),
each precision and each thread count (1 and all PUs), the two tools are launched in turn, ROUNDS
times, on the same PUs, so that drift of the machine falls on both alike (Hoefler & Belli, SC15).
One figure per launch: likwid-bench's MFlops/s (its whole timed run, a 16 kB vector per thread:
in L1, as its peakflops kernels load one element per update), perfatlas's median sample. Prints
the median of each tool and the ratio perfatlas / likwid-bench with a 95 % bootstrap interval;
the goal is a ratio >= 1.

    .venv/bin/python bench/peakflops_compare.py [--rounds 7] [--precision double,single]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys

from peer_rows import record_ratio

from perfatlas.benchmarks import get
from perfatlas.cpu.bench_peakflops import kernel_of
from perfatlas.machine.topology import Machine

# perfatlas ISA -> likwid-bench kernel (double precision; single adds "_sp" after "peakflops").
LIKWID = {
    "scalar": "peakflops",
    "sse": "peakflops_sse",
    "avx2": "peakflops_avx_fma",
    "avx512": "peakflops_avx512_fma",
}
LIKWID_SECONDS = 0.3  # about as long as perfatlas's 9 samples of 20 ms plus calibration


def likwid_kernel(isa: str, precision: str) -> str:
    name = LIKWID[isa]
    return name.replace("peakflops", "peakflops_sp", 1) if precision == "single" else name


def likwid_rate(kernel: str, threads: int, iterations: int) -> tuple[float, float]:
    """One likwid-bench launch: (flop/s, seconds it ran). likwid pins its threads to the
    domain's hardware threads in order, as cpus_for_threads does with one PU per core."""
    out = subprocess.run(
        [
            "likwid-bench",
            "-t",
            kernel,
            "-W",
            f"N:{16 * threads}kB:{threads}",
            "-i",
            str(iterations),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rate = re.search(r"^MFlops/s:\s+([0-9.]+)", out, re.MULTILINE)
    time = re.search(r"^Time:\s+([0-9.e+-]+)", out, re.MULTILINE)
    if not rate or not time:
        sys.exit(f"likwid-bench printed no MFlops/s or Time line:\n{out}")
    return float(rate.group(1)) * 1e6, float(time.group(1))


def perfatlas_rate(isa: str, precision: str, threads: int, machine: Machine) -> float:
    benchmark = get("cpu.peakflops")
    params = benchmark.resolve(
        {"isa": isa, "precision": precision, "threads": str(threads), "samples": "9"}, machine
    )
    (document,) = benchmark.run(params, machine)
    samples = sorted(document["samples"]["flop_rate"])
    return samples[len(samples) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--precision", default="double,single")
    args = parser.parse_args()
    if not shutil.which("likwid-bench"):
        sys.exit("likwid-bench is missing: apt-get install likwid")
    machine = Machine.detect()
    print(
        f"{'perfatlas / likwid-bench':40s} {'threads':>7s} {'perfatlas Gflop/s':>18s} "
        f"{'likwid Gflop/s':>15s}  ratio [95% CI]"
    )
    for precision in args.precision.split(","):
        for isa in LIKWID:
            kernel = kernel_of(isa, precision)
            if kernel is None or kernel["not_measurable"]:
                why = kernel["not_measurable"] if kernel else "not built"
                print(f"{precision} {isa}: not measurable here: {why}")
                continue
            for threads in sorted({1, len(machine.pus)}):
                name = likwid_kernel(isa, precision)
                _, seconds = likwid_rate(name, threads, 1000)  # size the timed launches
                iterations = max(1000, int(1000 * LIKWID_SECONDS / max(seconds, 1e-6)))
                ours, theirs = [], []
                for _ in range(args.rounds):
                    ours.append(perfatlas_rate(isa, precision, threads, machine))
                    theirs.append(likwid_rate(name, threads, iterations)[0])
                r = record_ratio(
                    "peakflops_compare", f"peak flops, {precision} {isa}", f"likwid-bench {name}",
                    [x / 1e9 for x in ours], [x / 1e9 for x in theirs], ">= 1", threads, "Gflop/s",
                )  # fmt: skip
                label = f"{precision} {isa} / {name}"
                print(
                    f"{label:40s} {threads:7d} {sorted(ours)[len(ours) // 2] / 1e9:18.2f} "
                    f"{sorted(theirs)[len(theirs) // 2] / 1e9:15.2f}  "
                    f"{r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]",
                    flush=True,
                )


if __name__ == "__main__":
    main()
