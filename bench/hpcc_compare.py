#!/usr/bin/env python3
"""perfatlas comm.pingpong against hpcc's PingPong (Debian's hpcc) on the same machine, alternating
launches in one run, np = 2 with the same mpirun and the same default binding.

hpcc measures ping-pong latency with 8-byte messages and ping-pong bandwidth with 2,000,000-byte
messages (message size over half the round trip), each the best of several repetitions per pair
(b_eff method); it prints min/avg/max over the pairs (with np = 2, the two directions). perfatlas
gives, per launch, the median of its samples at the same sizes (and, beside hpcc's best
figures, its fastest sample): the one-way latency of 8 bytes,
the ping-pong bandwidth 2,000,000 / latency(2,000,000) — the same definition as hpcc's — and,
for information, its windowed (streaming) bandwidth at that size, which hpcc does not measure.
One figure per launch and tool; ROUNDS launches each, alternated so that drift falls on both
(Hoefler & Belli, SC15). Printed: medians, and perfatlas / hpcc with a 95 % bootstrap interval.
Goal: latency ratio <= 1, bandwidth ratio >= 1.

    .venv/bin/python bench/hpcc_compare.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from peer_rows import record_ratio

from perfatlas.benchmarks import get
from perfatlas.common.stats import ratio
from perfatlas.launch.launchers import LaunchOptions, get_launcher
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine

HPCC_MESSAGE = 2_000_000  # bytes of hpcc's ping-pong bandwidth test (8 for its latency test)

# HPL.dat-style input: a tiny HPL (N = 200 on a 1 x 2 grid) so the run is dominated by nothing;
# hpcc runs all its tests, we read only the PingPong figures.
HPCCINF = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
200          Ns
1            # of NBs
32           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""


def hpcc_command(folder: Path) -> list[str]:
    """The same mpirun perfatlas uses for np = 2 (root permission included), running hpcc."""
    launch = get_launcher("mpirun").prepare(
        Path(shutil.which("hpcc")), [], {"np": 2}, Machine.detect(), LaunchOptions()
    )
    return launch.argv


def run_hpcc(command: list[str], folder: Path) -> dict[str, float]:
    out = folder / "hpccoutf.txt"
    out.unlink(missing_ok=True)
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        sys.exit(f"hpcc failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    text = out.read_text()
    figures = dict(re.findall(r"^(\w*PingPong\w*)=([0-9.eE+-]+)$", text, re.MULTILINE))
    return {key: float(value) for key, value in figures.items()}


def run_perfatlas(machine: Machine, n_bytes: int, samples: int) -> dict:
    benchmark = get("comm.pingpong")
    params = benchmark.resolve(
        {"np": "2", "min_bytes": str(n_bytes), "max_bytes": str(n_bytes), "samples": str(samples)},
        machine,
    )
    (document,) = benchmark.run(params, machine)
    return document


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--samples", type=int, default=11, help="perfatlas samples per launch")
    args = parser.parse_args()
    if not shutil.which("hpcc"):
        sys.exit("hpcc is missing: apt-get install hpcc")
    executable("pa-comm-pingpong")  # built with MPI?
    machine = Machine.detect()
    ours = {"latency": [], "pingpong_bw": [], "window_bw": [], "best_latency": [], "best_bw": []}
    theirs = {"latency": [], "pingpong_bw": [], "best_latency": [], "best_bw": []}
    with tempfile.TemporaryDirectory(prefix="perfatlas-hpcc-") as tmp:
        folder = Path(tmp)
        (folder / "hpccinf.txt").write_text(HPCCINF)
        command = hpcc_command(folder)
        example = None
        for round_ in range(args.rounds):
            small = run_perfatlas(machine, 8, args.samples)
            large = run_perfatlas(machine, HPCC_MESSAGE, args.samples)
            example = example or (small["launch"]["command"], large["launch"]["command"])
            ours["latency"].append(median(small["samples"]["latency_ns"]) / 1e3)  # us
            ours["pingpong_bw"].append(
                HPCC_MESSAGE / (median(large["samples"]["latency_ns"]) * 1e-9) / 1e9
            )  # GB/s
            ours["window_bw"].append(median(large["samples"]["bandwidth_Bps"]) / 1e9)
            ours["best_latency"].append(min(small["samples"]["latency_ns"]) / 1e3)
            ours["best_bw"].append(
                HPCC_MESSAGE / (min(large["samples"]["latency_ns"]) * 1e-9) / 1e9
            )
            figures = run_hpcc(command, folder)
            theirs["latency"].append(figures["AvgPingPongLatency_usec"])
            theirs["pingpong_bw"].append(figures["AvgPingPongBandwidth_GBytes"])
            theirs["best_latency"].append(figures["MinPingPongLatency_usec"])
            theirs["best_bw"].append(figures["MaxPingPongBandwidth_GBytes"])
            print(
                f"round {round_ + 1}/{args.rounds}: perfatlas {ours['latency'][-1]:.3f} us, "
                f"{ours['pingpong_bw'][-1]:.2f} GB/s; hpcc {theirs['latency'][-1]:.3f} us, "
                f"{theirs['pingpong_bw'][-1]:.2f} GB/s",
                file=sys.stderr,
                flush=True,
            )
    print(f"perfatlas: {example[0]}\n           {example[1]}")
    print(f"hpcc:      (cd DIR with hpccinf.txt) {shlex.join(command)}")
    print(
        f"machine: {machine.topology.get('cpu_model')}, {len(machine.pus)} PUs; {os.uname().nodename}"
    )
    print(f"\n{'figure':44s} {'perfatlas':>10s} {'hpcc':>10s}  ratio [95% CI]   goal")
    rows = [
        ("latency, 8 B, half round trip (us)", "latency", "<= 1"),
        ("ping-pong bandwidth, 2e6 B (GB/s)", "pingpong_bw", ">= 1"),
        ("best: fastest sample / hpcc min latency", "best_latency", "<= 1"),
        ("best: fastest sample / hpcc max bandwidth", "best_bw", ">= 1"),
    ]
    for label, key, goal in rows:
        r = record_ratio(
            "hpcc_compare", f"MPI {label}", "hpcc PingPong", ours[key], theirs[key], goal, 1
        )
        print(
            f"{label:44s} {median(ours[key]):10.3f} {median(theirs[key]):10.3f}  "
            f"{r.median:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]  {goal}"
        )
    r = ratio(ours["window_bw"], theirs["pingpong_bw"])
    print(
        f"{'windowed bandwidth, 2e6 B (GB/s; hpcc: none)':44s} {median(ours['window_bw']):10.3f} "
        f"{'-':>10s}  {r.median:.3f} vs hpcc's ping-pong bandwidth"
    )


if __name__ == "__main__":
    main()
