#!/usr/bin/env python3
"""The plan's time model (perfatlas.plan.time_estimate) against the wall time of real runs.

Each step of a suite is run on its own (a one-step suite in a temporary folder), after its plan;
printed per step: launches, estimated seconds, measured seconds, and measured / estimated. The
machine should be otherwise idle: the model knows nothing of other load.

    .venv/bin/python bench/plan_estimate.py [SUITE] [--steps 1,2,9]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import tomllib
from datetime import datetime
from importlib import resources
from pathlib import Path

PERFATLAS = [sys.executable, "-m", "perfatlas"]


def one_step_suite(step: dict) -> str:
    lines = ["[[step]]"]
    for key, value in step.items():
        lines.append(
            f"{key} = {json.dumps(value) if not isinstance(value, dict) else _table(value)}"
        )
    return "\n".join(lines) + "\n"


def _table(value: dict) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("suite", nargs="?", default="quick")
    parser.add_argument("--steps", help="step numbers to run, e.g. 1,2,9 (default all)")
    args = parser.parse_args()
    text = (resources.files("perfatlas") / "suites" / f"{args.suite}.toml").read_text()
    steps = tomllib.loads(text)["step"]
    chosen = [int(s) for s in args.steps.split(",")] if args.steps else range(1, len(steps) + 1)
    print(f"{'step':>4} {'benchmark':16} {'launches':>8} {'estimated':>10} {'measured':>9} ratio")
    total_estimate = total_measured = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for number in chosen:
            suite = Path(folder) / f"step{number}.toml"
            suite.write_text(one_step_suite(steps[number - 1]))
            db = Path(folder) / f"step{number}.db"
            plan = json.loads(
                subprocess.run(
                    [*PERFATLAS, "run", str(suite), "--plan", "--json"],
                    capture_output=True, text=True, check=True,
                ).stdout
            )  # fmt: skip
            subprocess.run(
                [*PERFATLAS, "--db", str(db), "run", str(suite), "--out", folder],
                capture_output=True, check=True,
            )  # fmt: skip
            # the run's own wall time (store timestamps, 1 s resolution), not the report's
            with sqlite3.connect(db) as connection:
                began, ended = connection.execute("SELECT started, finished FROM runs").fetchone()
            measured = (
                datetime.fromisoformat(ended) - datetime.fromisoformat(began)
            ).total_seconds()
            estimate = plan["estimated_seconds"]
            total_estimate, total_measured = total_estimate + estimate, total_measured + measured
            print(
                f"{number:>4} {steps[number - 1]['benchmark']:16} {len(plan['launches']):>8} "
                f"{estimate:>9.1f}s {measured:>8.1f}s {measured / estimate:5.2f}"
            )
    print(
        f"{'all':>4} {'':16} {'':>8} {total_estimate:>9.1f}s {total_measured:>8.1f}s "
        f"{total_measured / total_estimate:5.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
