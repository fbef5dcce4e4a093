#!/usr/bin/env python3
"""MADbench's W phase against the DGEMM it is made of: app.madbench's W rate (2 nbin npix^3 flops
by pdgemm, with its reads of dS/dC_b and writes of W_b) over np x rank 0's cblas_dgemm rate on a
matrix of a rank's local size, measured alone before each repetition (native/app/madbench/
dgemm_rate.c) -- MADbench's figure of merit with the attainable rate, not the peak, as reference.

Per np and overlap value (overlap=1: the W phase's reads and writes behind its pdgemms; 0:
MADbench's order, each transfer waited for), ROUNDS launches alternated between the overlap
values, each with REPEAT repetitions of the whole pipeline (one W and one DGEMM sample each);
printed: the medians and their ratio with a 95 % bootstrap interval (goal: >= 0.85), the share of
W the slowest rank spent waiting on its file I/O (W_io_wait_s), and W's rate over its time less
that wait against DGEMM: what the pdgemms reach.

    .venv/bin/python bench/madbench_dgemm.py [--np 1] [--overlap 0,1] [--rounds 3] [--repeat 5]
"""

from __future__ import annotations

import argparse

import numpy as np
from peer_rows import record_ratio

from perfatlas.benchmarks import get
from perfatlas.common.stats import ratio
from perfatlas.machine.topology import Machine

GOAL = 0.85


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--np", default="1", help="comma-separated square process counts")
    parser.add_argument("--overlap", default="1", help="comma-separated: 1, 0 or 0,1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--npix", type=int, default=1024)
    parser.add_argument("--nbin", type=int, default=16)
    parser.add_argument("--io", default="files", help="files or shared (MPI-IO)")
    args = parser.parse_args()
    machine = Machine.detect()
    benchmark = get("app.madbench")
    print(f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs")
    print(f"{'np':>3s} {'io':6s} {'overlap':>7s} {'W Gflop/s':>10s} {'np x DGEMM':>11s}  "
          "W / DGEMM [95% CI]  goal   I/O wait  W less wait / DGEMM")  # fmt: skip
    for np_ in (int(n) for n in args.np.split(",")):
        overlaps = args.overlap.split(",")
        w: dict[str, list[float]] = {o: [] for o in overlaps}
        computing: dict[str, list[float]] = {o: [] for o in overlaps}
        waited: dict[str, list[float]] = {o: [] for o in overlaps}
        dgemm: dict[str, list[float]] = {o: [] for o in overlaps}
        for round_ in range(args.rounds):
            for overlap in overlaps[round_ % 2 :] + overlaps[: round_ % 2]:  # alternate the first
                raw = {"np": str(np_), "npix": str(args.npix), "nbin": str(args.nbin),
                       "io": args.io, "repeat": str(args.repeat), "overlap": overlap}  # fmt: skip
                (document,) = benchmark.run(benchmark.resolve(raw, machine), machine)
                s = document["samples"]
                for rate, seconds, wait, reference in zip(
                    s["W_flops_per_s"], s["W_s"], s["W_io_wait_s"], s["dgemm_flops_per_s"]
                ):
                    w[overlap].append(rate / 1e9)
                    computing[overlap].append(rate * seconds / (seconds - wait) / 1e9)
                    waited[overlap].append(wait / seconds)
                    dgemm[overlap].append(np_ * reference / 1e9)
        for overlap in overlaps:
            alone = ratio(computing[overlap], dgemm[overlap])
            wait = float(np.median(waited[overlap]))
            r = record_ratio(
                "madbench_dgemm",
                f"MADbench W phase, np={np_}, npix={args.npix}, io={args.io}, overlap={overlap}",
                "cblas_dgemm, same local size", w[overlap], dgemm[overlap], f">= {GOAL}", 1,
                "Gflop/s",
                f"the slowest rank waits on its file I/O for {wait:.0%} of W; W's time less that "
                f"wait runs at {alone.median:.3f} of DGEMM",
            )  # fmt: skip
            print(
                f"{np_:3d} {args.io:6s} {overlap:>7s} {np.median(w[overlap]):10.2f} "
                f"{np.median(dgemm[overlap]):11.2f}  {r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]"
                f"   >= {GOAL}  {wait:7.1%}  {alone.median:.3f} [{alone.ci_lo:.3f}, "
                f"{alone.ci_hi:.3f}]",
                flush=True,
            )


if __name__ == "__main__":
    main()
