"""Planted slow link, repeated: detections and false alarms of the anomaly rule (issue 16).

Four test hosts on this machine (../shared/tools/netns-cluster, network namespaces, needs root);
in each trial one of pa2..pa4, drawn at random (seeded; each round of three trials a shuffle of
the three, so that every host is the slow one as often), has its link throttled to 200 Mbit/s
(tc tbf), and `perfatlas measure comm.distance np=4` runs with rank r on host pa(r+1) (rank 0
on pa1, which every pair involves, so pa1 cannot be singled out by this scan), rank 0 bound to
cpu 0 and the others to cpu 1, so that every measured pair spans two cores
(tests/netns_hosts.py, pair_spanning_args; --unbound: --bind-to none, the scheduler's choice).
A trial detects when the slow host is named suspect; it raises a false alarm when another host is
named suspect or an anomaly reported worse does not involve the slow host.

    sudo .venv/bin/python bench/slow_link_trials.py --trials 6
    sudo /path/to/other/checkout/.venv/bin/python bench/slow_link_trials.py --trials 6

measures with the perfatlas the interpreter imports (so the second line counts another checkout,
e.g. main before a change). Prints one line per trial and the counts as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from netns_bed import TOOL, test_bed

CANDIDATES = ("pa2", "pa3", "pa4")
# the distance scan's parameters (slow_link_states.py's too)
SCAN = ["bandwidth_bytes=64KiB", "window=8", "samples=9", "min_sample_time=1ms", "time_limit=1s",
        "warmup=20"]  # fmt: skip


def lift(slow: str) -> None:
    """Remove the planted fault completely: the throttle, and what the hosts' TCP stacks
    remember of it (per-destination metrics: a small congestion window and a long round trip,
    which would slow the next connections to that host, a slow link that outlives its cause)."""
    subprocess.run([str(TOOL), "unthrottle", slow], timeout=60)
    for host in ("pa1", *CANDIDATES):
        subprocess.run(["ip", "-n", host, "tcp_metrics", "flush", "all"], capture_output=True)


def trial(slow: str, mpirun_args: list[str], folder: Path, number: int) -> dict:
    from perfatlas.comm.analysis_comm import find_anomalies
    from perfatlas.store.database import Store

    subprocess.run([str(TOOL), "throttle", slow, "200mbit"], check=True, timeout=60)
    db = folder / f"trial-{number}.db"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "perfatlas", "--db", str(db), "measure", "comm.distance",
             "np=4", *SCAN,
             "--mpirun-args", shlex.join(mpirun_args)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        lift(slow)
    if done.returncode != 0:
        raise SystemExit(f"trial {number}: perfatlas failed: {done.stderr.strip()[-400:]}")
    store = Store(db)
    report = find_anomalies(store.results(store.resolve_run("last")))
    suspects = sorted({s.host for s in report.suspects})
    stray = [a for a in report.anomalies if a.worse and slow not in a.hosts]
    return {
        "slow": slow,
        "suspects": suspects,
        "detected": slow in suspects,
        "false_alarm": any(h != slow for h in suspects) or bool(stray),
        "stray": [f"{a.subject} {a.metric} {a.relative:+.0%}" for a in stray],
        "withdrawn": [
            f"{a.subject} {a.metric} {a.relative:+.0%}" for a in getattr(report, "withdrawn", [])
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--keep", help="copy each trial's database into this folder")
    parser.add_argument(
        "--unbound", action="store_true", help="leave the ranks unbound (--bind-to none)"
    )
    args = parser.parse_args()
    draw = random.Random(args.seed)
    slow_hosts = []
    while len(slow_hosts) < args.trials:
        slow_hosts += draw.sample(CANDIDATES, len(CANDIDATES))
    slow_hosts = slow_hosts[: args.trials]
    os.environ["PERFATLAS_LAUNCH_TIMEOUT"] = "120"
    with test_bed(args.unbound) as (folder, mpirun_args):
        rows = []
        for number, slow in enumerate(slow_hosts, 1):
            rows.append(trial(slow, mpirun_args, folder, number))
            print(json.dumps(rows[-1]), flush=True)
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(folder / f"trial-{number}.db", Path(args.keep))
    import perfatlas

    print(
        json.dumps(
            {
                "perfatlas": str(Path(perfatlas.__file__).parent),
                "placement": "unbound" if args.unbound else "pairs span two cores",
                "trials": len(rows),
                "detected": sum(r["detected"] for r in rows),
                "false_alarms": sum(r["false_alarm"] for r in rows),
            }
        )
    )


if __name__ == "__main__":
    main()
