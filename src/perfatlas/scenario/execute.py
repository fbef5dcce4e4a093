"""`perfatlas scenario run FILE`: base data first where missing, a program per job, each program
measured alone (the dedicated runtime), then every job as its own process, side by side.

Dedicated runtime. Synthesis predicts a program's runtime from the base data and an estimate of
each line's overhead; the program is then run alone, once, and re-solved with the pass times,
line overheads and start-up that run measured (synthesis.refine: same slices and variants,
repeats recomputed), and run alone again: that wall time is the dedicated runtime every
runtime extension divides by. Should it still miss the asked runtime by more than 3 %, one more
refinement and dedicated run follow.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from perfatlas.common.warning import WarningRecord
from perfatlas.machine.topology import Machine
from perfatlas.run.runner import Runner, progress_bar
from perfatlas.scenario.accounting import job_row, summary
from perfatlas.scenario.ensure_base import ensure_base
from perfatlas.scenario.scenario import Job, Scenario
from perfatlas.scenario.side_by_side import Instance, Outcome, check_nice, run_together
from perfatlas.scenario.synthesis import (
    Program,
    Target,
    maximum_rates,
    misses,
    refine,
    synthesize,
    usable_candidates,
)
from perfatlas.scenario.variants import Variant, stored_variants
from perfatlas.store.database import Store

REFINE_AGAIN = 0.03  # a dedicated run this far from the asked runtime refines once more


@dataclass
class Prepared:
    job: Job
    program: Program
    path: Path
    dedicated_walls: list[float]  # every dedicated run, in order; the last one counts

    @property
    def dedicated_s(self) -> float:
        return self.dedicated_walls[-1]


def candidates_for(job: Job, variants: dict[tuple, Variant]) -> list[Variant]:
    if job.mix:
        return [variants[(p.kernel, p.bytes, p.stride, job.threads)] for p in job.mix]
    return [
        v
        for v in variants.values()
        if v.threads == job.threads
        and (job.kernels is None or v.kernel in job.kernels)
        and (job.sizes is None or v.bytes in job.sizes)
    ]


def target_for(job: Job, candidates: list[Variant]) -> Target:
    """The job's rates in byte/s and flop/s; percentages of the highest usable candidate's."""
    highest = maximum_rates(usable_candidates(candidates) or candidates) if candidates else {}
    return Target(
        transfer_rate=job.transfer_rate.resolve(highest["transfer_rate"][0])
        if job.transfer_rate and highest
        else (job.transfer_rate.value if job.transfer_rate else None),
        flop_rate=job.flop_rate.resolve(highest["flop_rate"][0])
        if job.flop_rate and highest
        else (job.flop_rate.value if job.flop_rate else None),
        write_fraction=job.write_fraction,
    )


def synthesize_job(job: Job, variants: dict[tuple, Variant]) -> Program:
    where = f"job '{job.name}'"
    candidates = candidates_for(job, variants)
    if job.mix:
        return synthesize(
            runtime_s=job.runtime_s,
            threads=job.threads,
            candidates=candidates,
            mix=[(v, part.share) for v, part in zip(candidates, job.mix)],
            seed=job.seed,
            where=where,
        )
    return synthesize(
        runtime_s=job.runtime_s,
        threads=job.threads,
        candidates=candidates,
        target=target_for(job, candidates),
        seed=job.seed,
        variation=job.variation,
        where=where,
    )


def measured(program: Program, document: dict, wall_s: float) -> tuple[dict[tuple, Variant], float]:
    """Pass time and line overhead of every variant of a program run, and its start-up: the
    wall time the lines (at those per-variant figures) do not explain."""
    lines = document["derived"]["invocations"]
    timed: dict[tuple, list[float]] = {}
    repeats: dict[tuple, int] = {}
    overheads: dict[tuple, list[float]] = {}
    for i, line in enumerate(lines):
        key = (line["kernel"], line["bytes"], line["stride"], line["threads"])
        timed.setdefault(key, []).append(line["end_s"] - line["start_s"])
        repeats[key] = repeats.get(key, 0) + line["repeat"]
        if 0 < i < len(lines) - 1:  # the first carries the team's creation, the last no check
            after = lines[i + 1]["setup_start_s"] - line["end_s"]
            overheads.setdefault(key, []).append(line["start_s"] - line["setup_start_s"] + after)
    variants = {}
    for v in program.variants():
        if v.key in timed:
            overhead = statistics.median(overheads[v.key]) if v.key in overheads else v.overhead_s
            variants[v.key] = v.measured(sum(timed[v.key]) / repeats[v.key], overhead)
    explained = sum(
        variants[(line["kernel"], line["bytes"], line["stride"], line["threads"])].overhead_s
        + line["end_s"]
        - line["start_s"]
        for line in lines
    )
    return variants, max(0.0, wall_s - explained)


def _alone(prepared: Prepared, cpus: tuple[int, ...], folder: Path) -> Outcome:
    job = prepared.job
    instance = Instance(
        f"{job.name}-dedicated", prepared.path, job.threads, 0.0, job.nice, job.bind
    )
    outcome = run_together([instance], cpus, folder)[0]
    prepared.dedicated_walls.append(outcome.wall_s)
    return outcome


def dedicate(job: Job, program: Program, cpus: tuple[int, ...], folder: Path) -> Prepared:
    """Run the program alone, refine it from what that run measured, run it alone again."""
    path = folder / f"{job.name}.prog"
    path.write_text(program.text(f"job {job.name}"))
    prepared = Prepared(job, program, path, [])
    outcome = _alone(prepared, cpus, folder)
    for round_ in range(2):
        if round_ and abs(prepared.dedicated_s / job.runtime_s - 1.0) <= REFINE_AGAIN:
            break
        variants, startup = measured(prepared.program, outcome.document, outcome.wall_s)
        prepared.program = refine(prepared.program, variants, startup)
        path.write_text(prepared.program.text(f"job {job.name}"))
        outcome = _alone(prepared, cpus, folder)
    return prepared


def instances(scenario: Scenario, prepared: list[Prepared]) -> list[Instance]:
    found = []
    for p in prepared:
        job = p.job
        for copy in range(job.count):
            name = f"{job.name}#{copy + 1}" if job.count > 1 else job.name
            found.append(Instance(name, p.path, job.threads, job.start_s, job.nice, job.bind))
    return found


def program_summary(p: Prepared) -> dict:
    job = p.job
    return {
        "job": job.name,
        "count": job.count,
        "threads": job.threads,
        "runtime_s": job.runtime_s,
        "start_s": job.start_s,
        "nice": job.nice,
        "binding": ",".join(map(str, job.bind)) if job.bind else "OS",
        "asked": p.program.target.describe()
        if p.program.target
        else "mix " + ", ".join(f"{v.label} {share:.0%}" for v, share in p.program.mix),
        "predicted": p.program.behaviour(),
        "misses": misses(p.program),
        "dedicated_walls_s": p.dedicated_walls,
        "dedicated_s": p.dedicated_s,
        "lines": len(p.program.lines),
        "variants": len(p.program.variants()),
        "text": p.path.read_text(),
    }


def run_scenario(
    store: Store, machine: Machine, scenario: Scenario, folder: Path, argv: list[str] | None = None
) -> tuple[int, dict, list[dict]]:
    """Run a scenario and store it; returns the run id, the scenario document and job rows."""
    check_nice([job.nice for job in scenario.jobs])
    ensure_base(store, machine, scenario)
    variants = stored_variants(store, machine.fingerprint)
    programs = [synthesize_job(job, variants) for job in scenario.jobs]  # fail before running
    folder.mkdir(parents=True, exist_ok=True)
    runner = Runner(store, machine)
    with runner.run(f"scenario {scenario.name}", argv or sys.argv):
        with progress_bar(len(scenario.jobs) + 1) as step:
            prepared = []
            for job, program in zip(scenario.jobs, programs):
                step(f"job {job.name}: its program alone (dedicated runtime)")
                prepared.append(dedicate(job, program, scenario.cpus, folder))
            step(f"scenario {scenario.name}: {scenario.instances} jobs on CPUs {scenario.cpus}")
            outcomes = run_together(instances(scenario, prepared), scenario.cpus, folder)
        dedicated = {p.job.name: p.dedicated_s for p in prepared}
        spec_of = {i.name: p.job.name for p in prepared for i in instances(scenario, [p])}
        rows = [
            job_row(o, dedicated[spec_of[o.instance.name]], spec_of[o.instance.name])
            for o in sorted(outcomes, key=lambda o: (o.start_s, o.instance.name))
        ]
        document = {
            "description": scenario.description,
            "path": scenario.path,
            "definition": scenario.text,
            "scale": scenario.scale,
            "cpus": list(scenario.cpus),
            "programs": [program_summary(p) for p in prepared],
            "summary": summary(rows, scenario.cpus),
        }
        store.add_scenario(runner.run_id, "scenario", scenario.name, document, rows)
        for row in rows:
            store.add_document(runner.run_id, headline(scenario.name, row), warnings_of(row))
    return runner.data, document, rows


def headline(scenario: str, row: dict) -> dict:
    """A job's figures as an ordinary result, so that show, export and compare see them."""
    samples = {"wall_s": [row["wall_s"]], "waiting_s": [row["waiting_s"]]}
    units = {"wall_s": "s", "waiting_s": "s"}
    if row["extension"]:
        samples["runtime_extension"] = [row["extension"]]
        units["runtime_extension"] = "1"
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "scenario.job",
        "params": {"scenario": scenario, "job": row["job"], "threads": row["threads"]},
        "samples": samples,
        "units": units,
        "derived": {"dedicated_s": row["dedicated_s"], "migrations": row["migrations"]},
    }


def warnings_of(row: dict) -> list[WarningRecord]:
    warning = row["accounting"]["warning"]
    return [WarningRecord.from_dict(warning)] if warning else []
