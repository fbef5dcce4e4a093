"""Run measurements: hand them to the executor, which launches, validates and stores each result
as it completes.

A run is opened in the store before the first measurement and closed as complete, interrupted
(Ctrl-C, SIGTERM) or failed; what finished before an interruption stays stored. Where the
measurements run is the executor's business (perfatlas.run.executor: local, hosts, slurm), chosen
once by the command line and handed in here; nothing below imports the runner back.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.markup import escape

from perfatlas.benchmarks.benchmark import Benchmark
from perfatlas.common.errors import UserError
from perfatlas.common.progress import console, progress_bar
from perfatlas.common.warning import WarningRecord
from perfatlas.machine.topology import Machine, software_versions
from perfatlas.plan.planned import Destination, Planned, merge_repeats
from perfatlas.run.executor import Executor, get_executor
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

__all__ = ["Planned", "Runner", "console", "merge_repeats", "progress_bar"]


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
    def __init__(
        self,
        store: Store,
        machine: Machine,
        executor: Executor | None = None,
        remeasure: bool = True,
    ):
        self.store = store
        self.machine = machine
        self.executor = executor or get_executor("local")
        self.remeasure = remeasure  # figures that pass the anomaly rule are measured again
        self.run_id: int | None = None
        self._data: RunData | None = None  # the run read back once it completed (data)

    @property
    def _into(self) -> Destination:
        if self.run_id is None:
            raise RuntimeError("measure inside Runner.run(): no run is open")
        return Destination(self.store, self.run_id, self.machine)

    def check(self, measurements: list[Planned]) -> None:
        """Bad input that depends on the executor, before a run is opened (call it first)."""
        self.executor.check(measurements, self.machine)

    def measure(
        self,
        benchmark: Benchmark,
        params: dict[str, Any],
        repeat: int = 1,
        annotate: Callable[[dict], list[WarningRecord]] | None = None,
    ) -> list[dict]:
        """Launch `repeat` times, validate, pool, commit to the store; returns the documents.

        `annotate` may add to each document before it is stored (a sweep's point and what its
        placement obtained) and returns warnings of its own to store with it."""
        planned = [Planned(benchmark, params, annotate=annotate)]
        self.check(planned)
        documents = self.executor.measure_all(self._into, planned, repeat, progress=False)
        self.remeasure_tripped(planned, repeat)
        return documents

    def measure_all(self, measurements: list[Planned], repeat: int = 1) -> list[dict]:
        """Measure a list with a progress bar (every step that takes more than a second shows);
        with the slurm executor, as the steps of one job (perfatlas.cluster.front_end)."""
        self.check(measurements)
        documents = self.executor.measure_all(self._into, measurements, repeat, progress=True)
        self.remeasure_tripped(measurements, repeat)
        return documents

    def remeasure_tripped(self, measurements: list[Planned], repeat: int) -> None:
        """Launch once more the measurements whose figures pass the anomaly rule, stored beside
        them as their re-measurement (perfatlas.run.remeasure_anomalies); the documents returned before are
        the run's own."""
        from perfatlas.run.remeasure_anomalies import again, may_trip

        if not self.remeasure or not may_trip(measurements, not self.executor.here):
            return
        names = dict.fromkeys(p.benchmark.name for p in measurements)
        results = [r for name in names for r in self.store.results(self._into.run_id, name)]
        planned = again(measurements, results)
        if not planned:
            return
        console.print(
            f"re-measuring {len(planned)} measurement(s) whose figures pass the anomaly rule: "
            + "; ".join(p.description for p in planned),
            soft_wrap=True,
        )
        self.executor.measure_all(self._into, planned, repeat, progress=False)

    @contextmanager
    def run(self, suite: str | None, argv: list[str]) -> Iterator[Runner]:
        """Open a run, yield, and record how it ended."""
        self._data = None
        self.run_id = self.store.start_run(
            fingerprint=self.machine.fingerprint,
            topology=self.machine.topology,
            # whether tripped figures were measured again: a reader of the run needs to know
            # whether its anomalies rest on one measurement (--no-remeasure) or two
            context={**self.machine.context(), "remeasure": self.remeasure},
            suite=suite,
            argv=argv,
            software=software_versions(),
            topology_xml=self.machine.hwloc_xml(),
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
            self._finish(status)

    def _finish(self, status: str) -> None:
        """Record how the run ended and, where it completed, store its findings; where the store
        cannot be written (a full disk) while the run already failed, that failure is the one
        said, and the run is marked interrupted the next time the store opens (its process is
        gone)."""
        if status == "complete":
            self._store_findings()
        try:
            self.store.finish_run(self.run_id, status)
        except UserError:
            if status == "complete":
                raise
        if self._data is not None:
            self._data.run = self.store.run(self.run_id)  # how it ended

    @property
    def data(self) -> RunData:
        """The run's results as the store holds them (perfatlas.store.run_data), read back once
        when the run completes, with the findings stored then: what the command then prints and
        reports."""
        if self._data is None:
            self._data = RunData.load(self.store, self.run_id)
        return self._data

    def _store_findings(self) -> None:
        """The run's findings (perfatlas.findings), stored with it. What cannot be computed or
        stored is said, and the run keeps its results: show and export recompute the findings
        (as for a run that did not complete)."""
        from perfatlas.findings.compute import store_findings

        try:
            store_findings(self.store, self.data)
        except Exception as error:  # an analysis meeting data it cannot read: say it, keep all
            console.print(
                f"[yellow]findings of run {self.run_id} not stored ({type(error).__name__}: "
                f"{escape(str(error))}); show and export recompute them[/]",
                highlight=False,
            )
