"""The bias of the noise slowdown against a planted load (issue 16), for FWQ baselines.

A loader process pinned to the measured CPU burns 1 ms of CPU time every 10 ms (absolute
schedule): a thread sharing that CPU loses 1 ms in every 10, a slowdown of 1/9 = 11.1 % by
construction (the loader's own CPU time over the run gives the fraction it really took). Each
trial measures, in turn, `noise cpu=C` idle and with the load (FWQ), and the same with the fixed
time quantum mode (FTQ) as the independent probe; the planted slowdown read by a method is its
loaded slowdown minus its idle one. For FWQ the undisturbed quantum is taken as the fastest of
the quanta (t_min, the FWQ convention) and as low percentiles of them; the bias of each is its
reading minus the loader's true fraction, given as the mean over trials with a 95 % bootstrap
interval and the standard deviation.

    .venv/bin/python bench/noise_bias.py --trials 6 --cpu 1 --duration 5 [--nice -20]

Prints one line per trial and the summary as JSON; docs/guide/noise.md quotes it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from perfatlas.launch.native import executable
from perfatlas.noise.analysis_noise import ftq_series, fwq_series, slowdown
from perfatlas.noise.bench_noise import DEFAULT_QUANTUM

PERCENTILES = (0.0, 1.0, 5.0)  # FWQ baselines: t_min, then low percentiles
PERIOD_S, BUSY_S = 0.010, 0.001
LOADER = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.nice(int(sys.argv[4]))
period, busy = float(sys.argv[2]), float(sys.argv[3])
start_wall, start_cpu = time.monotonic(), time.process_time()
tick = start_wall
try:
    while True:
        spent = time.process_time()
        while time.process_time() - spent < busy:
            pass
        tick += period
        time.sleep(max(0.0, tick - time.monotonic()))
except KeyboardInterrupt:
    wall, cpu = time.monotonic() - start_wall, time.process_time() - start_cpu
    print(cpu / (wall - cpu), flush=True)
"""


def measure(cpu: int, duration: float, method: str, nice: int) -> dict:
    """pa-noise itself (perfatlas would start it in a session of its own, where this session's
    autogroup niceness does not reach), with its default quantum."""
    quantum = DEFAULT_QUANTUM[method]
    done = subprocess.run(
        ["nice", "-n", str(nice), str(executable("pa-noise")), f"method={method}", f"cpus={cpu}",
         f"duration={duration!r}", f"quantum={quantum!r}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"pa-noise {method} failed: {done.stderr.strip()[-400:]}")
    document = json.loads(done.stdout)
    return document[0] if isinstance(document, list) else document


def readings(document: dict) -> dict[str, float]:
    samples = document["samples"]
    if "quantum_ns" in samples:
        quanta = samples["quantum_ns"]
        return {f"fwq p{p:g}": slowdown(fwq_series(quanta, p)) for p in PERCENTILES}
    interval = (document.get("derived") or {}).get("interval_ns")
    interval = interval or document["params"]["quantum"] * 1e9
    return {"ftq c_max": slowdown(ftq_series(samples["work_per_interval"], interval))}


def loaded(cpu: int, duration: float, method: str, nice: int) -> tuple[dict, float]:
    """The measurement with the loader running on `cpu`, and the slowdown the loader planted."""
    loader = subprocess.Popen(
        [sys.executable, "-c", LOADER, str(cpu), str(PERIOD_S), str(BUSY_S), str(nice)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(0.2)
        document = measure(cpu, duration, method, nice)
    finally:
        loader.send_signal(2)
        planted = float(loader.communicate(timeout=30)[0].strip())
    return document, planted


def interval(values: list[float], seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    x = np.asarray(values)
    means = rng.choice(x, size=(4000, len(x))).mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness of the measurement and of the loader alike, and of this session's "
        "autogroup (-20 on a machine shared with other work: with autogroup scheduling a "
        "process's nice value counts only within its session, so the session's own is set too)",
    )
    args = parser.parse_args()
    if args.nice:
        Path("/proc/self/autogroup").write_text(str(args.nice))
    bias: dict[str, list[float]] = {}
    for trial in range(1, args.trials + 1):
        row: dict[str, float] = {}
        for method in ("fwq", "ftq"):
            idle = readings(measure(args.cpu, args.duration, method, args.nice))
            document, planted = loaded(args.cpu, args.duration, method, args.nice)
            row[f"planted ({method} run)"] = planted
            for name, value in readings(document).items():
                row[f"{name} idle"] = idle[name]
                row[f"{name} bias"] = value - idle[name] - planted
                bias.setdefault(name, []).append(row[f"{name} bias"])
        print(json.dumps({"trial": trial, **{k: round(v, 5) for k, v in row.items()}}))
    summary = {
        name: {
            "mean_bias_points": 100 * float(np.mean(values)),
            "ci95_points": [100 * v for v in interval(values)],
            "sd_points": 100 * float(np.std(values, ddof=1)),
        }
        for name, values in bias.items()
    }
    head = {"trials": args.trials, "cpu": args.cpu, "duration_s": args.duration, "nice": args.nice}
    print(json.dumps({**head, "bias": summary}, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
