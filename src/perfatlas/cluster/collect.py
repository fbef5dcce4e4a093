"""Reading a finished step back from its folder: the documents to store, or why there are none.

A node-level step gives one document per node, labelled with the node it ran on (`host` among the
parameters, so nodes never pool together, and in the document's `job` block); an MPI step gives
rank 0's document(s), whose placement already says where every rank ran. Repetitions are pooled
per node as `--repeat` pools local launches (perfatlas.plan.planned.merge_repeats).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from perfatlas.cluster.job import Step
from perfatlas.common.errors import UserError
from perfatlas.common.warning import WarningRecord
from perfatlas.launch.contract import validate
from perfatlas.launch.launchers import get_launcher
from perfatlas.launch.per_node import error_tail, node_name, read_per_node
from perfatlas.plan.planned import merge_repeats


@dataclass
class Collected:
    stored: list[tuple[dict, list[WarningRecord]]] = field(default_factory=list)  # doc, warnings
    failures: list[str] = field(default_factory=list)  # one sentence each


def label_host(document: dict, host: str) -> dict:
    """A node's document: `host` among its parameters (results of different nodes never pool)."""
    document["params"]["host"] = host
    return document


def collect(step: Step, nodes: list[str], job: dict) -> Collected:
    """`nodes`: the allocation's nodes (JOB/nodes); `job`: what every document records of it."""
    benchmark = step.planned.benchmark
    per_repetition: dict[str, list[list[dict]]] = {}
    failures: dict[str, str] = {}
    for folder, launch in zip(step.folders, step.launches, strict=True):
        if step.per_node:
            found, why = _node_documents(step, folder, nodes)
        else:
            found, why = _rank_documents(step, folder, launch)
        failures.update(why)
        for host, documents in found.items():
            per_repetition.setdefault(host, []).append(documents)
    result = Collected()
    by_reason: dict[str, list[str]] = {}
    for where, why in failures.items():
        by_reason.setdefault(why, []).append(where)
    for why, places in by_reason.items():
        result.failures.append(f"{step.title}: {_places(places)}{why}")
    for host, repetitions in per_repetition.items():
        if f"{node_name(host)}: " in failures or len(repetitions) < len(step.folders):
            continue  # a node that failed one repetition keeps none (they would not pool)
        documents = merge_repeats(repetitions) if len(repetitions) > 1 else repetitions[0]
        for document in documents:
            try:
                validate(document, benchmark.name)
            except UserError as error:
                result.failures.append(f"{step.title}: {error}")
                continue
            if step.per_node:
                label_host(document, host)
            document.setdefault("launch", step.launches[0].record())
            document["job"] = {**job, "step": step.index}
            annotate = step.planned.annotate
            extra = annotate(document) if annotate else []
            result.stored.append((document, benchmark.warnings(document) + extra))
    return result


def _node_documents(
    step: Step, folder: Path, nodes: list[str]
) -> tuple[dict[str, list[dict]], dict[str, str]]:
    program = step.planned.benchmark.executable
    count = int(_srun_nodes(step.launches[0].argv))
    expected = nodes if len(nodes) == count else []
    output = read_per_node(folder, program, expected, count)
    failures = {f"{node_name(host)}: ": why for host, why in output.failures.items()}
    status = _status(folder)
    srun = error_tail(_read(folder / "stderr")) or "no error output"
    if not output.documents and status not in (None, "0"):  # srun itself failed
        failures = {"": f"srun exited with status {status}: {srun}"}
    elif status is None and failures:  # killed while it ran: srun says why
        failures = {
            where: f"{why} (the step was stopped: {srun})" for where, why in failures.items()
        }
    return output.documents, failures


def _rank_documents(step: Step, folder: Path, launch) -> tuple[dict, dict[str, str]]:
    program = step.planned.benchmark.executable
    status = _status(folder)
    output = _read(folder / "stderr") + _read(folder / "stdout")
    if status is None:
        return {}, {"": "did not finish: " + (error_tail(output) or "no output")}
    if status != "0":
        return {}, {"": get_launcher("slurm").failure(launch, program, int(status), output)}
    try:
        parsed = json.loads(_read(folder / "stdout"))
    except json.JSONDecodeError as error:
        return {}, {"": f"{program} wrote malformed JSON ({error}); this is a perfatlas bug"}
    return {"": parsed if isinstance(parsed, list) else [parsed]}, {}


def _places(places: list[str]) -> str:
    """['node pa1: ', 'node pa2: '] with one reason -> 'nodes pa1, pa2: '."""
    if len(places) == 1:
        return places[0]
    hosts = [p.removeprefix("node ").removesuffix(": ") for p in places]
    return "nodes " + ", ".join(hosts) + ": "


def _srun_nodes(argv: list[str]) -> str:
    return next(word.split("=")[1] for word in argv if word.startswith("--nodes="))


def _status(folder: Path) -> str | None:
    path = folder / "status"
    return path.read_text().strip() if path.exists() else None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
