#!/usr/bin/env python3
"""Per-pair states of the slow-link test bed (issue 16): unthrottled distance scans launched back
to back, and how often the anomaly rule would confirm a pair that nothing slowed.

The test bed of bench/slow_link_trials.py (netns_bed.py: four hosts, every measured pair spanning
the two CPUs), without a throttle: every pair is alike by construction. Each launch runs
pa-comm-distance directly (np = 4, the trials' parameters). Printed: per launch the peers whose
8-byte latency is over 1.2x the launch's lowest; how often that recurs for the same peer one
launch later against how often any peer is over; and, judged by perfatlas.common.anomaly (the rule and
its re-measurement, each / confirmed) with the launch `lag` later as the re-measurement, the
groups in which some pair would be reported.

    sudo .venv/bin/python bench/slow_link_states.py --launches 60 [--lags 1,2,5,10] [--keep F]
    .venv/bin/python bench/slow_link_states.py --from F     # judge kept launches again

--remeasurements K judges each group with the K launches after it as its re-measurements (every
one of them must confirm the pair): how often a rule that re-measures K times would report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import numpy as np
from netns_bed import test_bed
from slow_link_trials import SCAN

from perfatlas.common import anomaly
from perfatlas.launch.native import executable

PEERS = (1, 2, 3)
OVER = 1.2


def scan(mpirun_args: list[str]) -> dict[int, list[float]]:
    """One launch: each peer's 8-byte latency samples (ns)."""
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    done = subprocess.run(
        ["mpirun", *mpirun_args, "-np", "4", str(executable("pa-comm-distance")), *SCAN],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"pa-comm-distance failed: {done.stderr.strip()[-400:]}")
    return {d["params"]["peer"]: d["samples"]["latency_ns"] for d in json.loads(done.stdout)}


def slow_peers(launch: dict[int, list[float]]) -> set[int]:
    medians = {p: float(np.median(launch[p])) for p in PEERS}
    lowest = min(medians.values())
    return {p for p in PEERS if medians[p] > OVER * lowest}


def reported(*launches: dict[int, list[float]]) -> bool:
    """Whether the rule, with the launches after the first as its re-measurements, reports some
    pair of the first."""
    measured = [tuple(anomaly.estimate(launch[p]) for launch in launches) for p in PEERS]
    return any(
        anomaly.confirmed(anomaly.each(measured, i, higher_is_worse=True))
        for i in range(len(PEERS))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=60)
    parser.add_argument("--lags", default="1,2,5,10", help="re-measurement distances, launches")
    parser.add_argument("--remeasurements", default="1,2", help="re-measurements per group")
    parser.add_argument("--keep", type=Path, help="store the launches' samples in this file")
    parser.add_argument("--from", dest="kept", type=Path, help="judge launches kept before")
    args = parser.parse_args()
    if args.kept:
        launches = [{int(p): v for p, v in launch.items()} for launch in json.loads(
            args.kept.read_text())]  # fmt: skip
    else:
        with test_bed() as (_, mpirun_args):
            launches = [scan(mpirun_args) for _ in range(args.launches)]
    if args.keep:
        args.keep.write_text(json.dumps(launches))
    slow = [slow_peers(launch) for launch in launches]
    print("peers over 1.2x the launch's lowest:", " ".join(
        "".join(str(p) if p in s else "." for p in PEERS) for s in slow))  # fmt: skip
    over = sum(map(len, slow))
    again = sum(p in slow[k + 1] for k in range(len(slow) - 1) for p in slow[k])
    followed = sum(len(s) for s in slow[:-1])
    print(f"a peer over in {over} of {len(PEERS) * len(slow)} figures "
          f"({over / (len(PEERS) * len(slow)):.0%}); over again one launch later in "
          f"{again} of {followed}")  # fmt: skip
    for lag in map(int, args.lags.split(",")):
        groups = len(launches) - lag
        hits = sum(reported(launches[k], launches[k + lag]) for k in range(groups))
        print(
            f"re-measured {lag} launch(es) later: some pair reported in {hits} of {groups} groups"
        )
    for k in map(int, args.remeasurements.split(",")):
        groups = len(launches) - k
        hits = sum(reported(*launches[g : g + k + 1]) for g in range(groups))
        print(f"re-measured {k} time(s), the next launches: some pair reported in {hits} of "
              f"{groups} groups")  # fmt: skip


if __name__ == "__main__":
    main()
