"""Run measurements: launch the native executable, validate, store each result as it completes.

A run is opened in the store before the first measurement and closed as complete, interrupted
(Ctrl-C, SIGTERM) or failed; what finished before an interruption stays stored.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from perfatlas.benchmarks.base import Benchmark, series_points
from perfatlas.contract import validate
from perfatlas.errors import UserError
from perfatlas.launchers import launch_options
from perfatlas.machine import Machine, software_versions
from perfatlas.placement import Placement, placing
from perfatlas.store import Store

console = Console(stderr=True)


def merge_repeats(documents_per_repeat: list[list[dict]]) -> list[dict]:
    """Pool the samples of N independent launches into one document per result (--repeat)."""
    merged = [
        dict(doc, samples={k: list(v) for k, v in (doc.get("samples") or {}).items()})
        for doc in documents_per_repeat[0]
    ]
    for repeat in documents_per_repeat[1:]:
        for target, doc in zip(merged, repeat, strict=True):
            for metric, values in (doc.get("samples") or {}).items():
                target["samples"][metric].extend(values)
            target["sample_seconds"] = target.get("sample_seconds", []) + doc.get(
                "sample_seconds", []
            )
    for target in merged:
        target.setdefault("derived", {})["launches"] = len(documents_per_repeat)
    return merged


@dataclass(frozen=True)
class Planned:
    """One measurement of a run: a benchmark, its resolved parameters, and for a sweep's launch
    the placement to apply and the annotation of its document (perfatlas.sweep.Slot)."""

    benchmark: Benchmark
    params: dict[str, Any]
    placement: Placement | None = None
    annotate: Callable[[dict], list[str]] | None = None
    note: str = ""  # shown after the label in the progress line

    @property
    def points(self) -> int:
        """Results this launch yields per series point (a size series: one per size)."""
        return len(series_points(self.params, self.benchmark))

    @property
    def description(self) -> str:
        placed = f" {self.placement.label}" if self.placement else ""
        return f"{self.benchmark.name} {self.benchmark.label(self.params)}{placed}{self.note}"


class _Interrupted(Exception):
    pass


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    def handler(signum, frame):
        raise _Interrupted()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Runner:
    def __init__(self, store: Store, machine: Machine):
        self.store = store
        self.machine = machine
        self.run_id: int | None = None

    def measure(
        self,
        benchmark: Benchmark,
        params: dict[str, Any],
        repeat: int = 1,
        annotate: Callable[[dict], list[str]] | None = None,
    ) -> list[dict]:
        """Launch `repeat` times, validate, pool, commit to the store; returns the documents.

        `annotate` may add to each document before it is stored (a sweep's point and what its
        placement obtained) and returns warnings of its own to store with it."""
        from perfatlas.cluster.hosts import measure_once

        if launch_options().launcher == "slurm":  # one job step (perfatlas.cluster)
            return self.measure_all([Planned(benchmark, params, annotate=annotate)], repeat)
        params = benchmark.with_stored(params, self.store, self.machine)
        launches = []
        for _ in range(repeat):
            documents = measure_once(benchmark, params, self.machine, self.store.path)
            for document in documents:
                validate(document, benchmark.name)
            launches.append(documents)
        documents = merge_repeats(launches) if repeat > 1 else launches[0]
        for document in documents:
            extra = annotate(document) if annotate else []
            self.store.add_document(self.run_id, document, benchmark.warnings(document) + extra)
        return documents

    @contextmanager
    def run(self, suite: str | None, argv: list[str]) -> Iterator[Runner]:
        """Open a run, yield, and record how it ended."""
        self.run_id = self.store.start_run(
            fingerprint=self.machine.fingerprint,
            topology=self.machine.topology,
            context=self.machine.context(),
            suite=suite,
            argv=argv,
            software=software_versions(),
        )
        status = "failed"
        try:
            with _sigterm_as_interrupt():
                yield self
            status = "complete"
        except UserError as error:  # a Slurm job that ended early says how (cluster.front_end)
            status = getattr(error, "run_status", "failed")
            raise
        except (KeyboardInterrupt, _Interrupted):
            status = "interrupted"
            console.print(f"[yellow]interrupted: run {self.run_id} keeps what finished[/]")
            sys.exit(130)
        finally:
            self.store.finish_run(self.run_id, status)

    def measure_all(self, measurements: list[Planned], repeat: int = 1) -> list[dict]:
        """Measure a list with a progress bar (every step that takes more than a second shows);
        with --launcher slurm, as the steps of one job (perfatlas.cluster.front_end)."""
        if launch_options().launcher == "slurm":
            from perfatlas.cluster.front_end import measure_in_job

            return measure_in_job(self, measurements, repeat)
        documents = []
        with progress_bar(sum(p.points for p in measurements)) as step:
            for planned in measurements:
                step(planned.description, planned.points)
                with placing(planned.placement):
                    documents += self.measure(
                        planned.benchmark, planned.params, repeat, planned.annotate
                    )
        return documents


@contextmanager
def progress_bar(total: int) -> Iterator[Callable[..., None]]:
    """A progress bar of `total` steps; each call of the yielded function starts the next
    measurement, which counts `points` steps (the sizes of a series launch)."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[current]}"),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("measuring", total=total, current="")
        pending = 0  # steps of the measurement under way

        def step(description: str, points: int = 1) -> None:
            nonlocal pending
            progress.advance(task, pending)
            pending = points
            progress.update(task, current=description)

        yield step
        progress.advance(task, pending)
        progress.update(task, current="done")
