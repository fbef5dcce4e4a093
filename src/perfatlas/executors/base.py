"""The abstract executor and its registry (ReFrame's scheduler/launcher split, one class each).

An executor is chosen once, from the command line, and handed to the runner
(perfatlas.runner.Runner); the runner opens and closes the run, the executor starts the
measurements and stores each document as it arrives. It is told the launch options explicitly:
nothing about launching is read from global state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from perfatlas.contract import validate
from perfatlas.errors import UserError
from perfatlas.executors.elsewhere import Elsewhere
from perfatlas.launchers import LaunchOptions
from perfatlas.machine import Machine
from perfatlas.placement import Placement
from perfatlas.planned import Destination, Planned, merge_repeats
from perfatlas.progress import progress_bar
from perfatlas.store import Store


class Executor(ABC):
    """Starts planned measurements somewhere and stores their documents."""

    name: ClassVar[str]
    launcher: ClassVar[str]  # the --launcher word that chooses it
    summary: ClassVar[str]
    here: ClassVar[bool] = False  # measures on this machine (run_elsewhere returns None)

    def __init__(self, options: LaunchOptions | None = None):
        self.options = options or LaunchOptions.from_environment()

    def preflight(self, store_path: Path) -> None:
        """Before a run is opened: one sentence (UserError) when this executor cannot launch
        (its scheduler or its hosts do not answer); by default nothing to check."""
        return None

    def check(self, measurements: list[Planned], machine: Machine) -> None:
        """Bad input that depends on how measurements launch, before a run is opened."""
        for planned in measurements:
            planned.benchmark.check_launch(planned.params, machine, self.options)

    @abstractmethod
    def measure_all(
        self, into: Destination, measurements: list[Planned], repeat: int, progress: bool
    ) -> list[dict]:
        """Measure everything, each measurement `repeat` times (pooled), storing each document
        into the open run as it completes; returns the documents stored."""

    def run_elsewhere(
        self, args_for: Callable[[Path], list[str]], store: Store, name: str, machine: Machine
    ) -> Elsewhere | None:
        """Run `perfatlas ARGS` (args_for(folder): the arguments, given the folder its files go
        to) where this executor measures, and import the runs it stores into `store`.
        None: this executor measures here, so the caller runs the command in this process."""
        return None


class OneLaunchAtATime(Executor):
    """Measurements started from here one after another, each waited for (local, hosts)."""

    @abstractmethod
    def launch(
        self,
        benchmark: Any,
        params: dict[str, Any],
        placement: Placement | None,
        into: Destination,
    ) -> list[dict]:
        """One launch of one measurement: its documents, not yet validated."""

    def measure_all(
        self, into: Destination, measurements: list[Planned], repeat: int, progress: bool
    ) -> list[dict]:
        if not progress:
            return [doc for planned in measurements for doc in self._measure(into, planned, repeat)]
        documents = []
        with progress_bar(sum(p.points for p in measurements)) as step:
            for planned in measurements:
                step(planned.description, planned.points)
                documents += self._measure(into, planned, repeat)
        return documents

    def _measure(self, into: Destination, planned: Planned, repeat: int) -> list[dict]:
        """Launch `repeat` times, validate, pool, commit to the store."""
        benchmark = planned.benchmark
        params = benchmark.with_stored(planned.params, into.store, into.machine)
        launches = []
        for _ in range(repeat):
            documents = self.launch(benchmark, params, planned.placement, into)
            for document in documents:
                validate(document, benchmark.name)
            launches.append(documents)
        documents = merge_repeats(launches) if repeat > 1 else launches[0]
        for document in documents:
            extra = planned.annotate(document) if planned.annotate else []
            into.store.add_document(into.run_id, document, benchmark.warnings(document) + extra)
        return documents


_EXECUTORS: dict[str, type[Executor]] = {}


def register_executor(cls: type[Executor]) -> type[Executor]:
    _EXECUTORS[cls.name] = cls
    return cls


def executor_names() -> list[str]:
    return sorted(_EXECUTORS)


def get_executor(name: str, options: LaunchOptions | None = None) -> Executor:
    if name not in _EXECUTORS:
        raise UserError(f"unknown executor '{name}'; known: {', '.join(executor_names())}")
    return _EXECUTORS[name](options)


def executor_for(options: LaunchOptions) -> Executor:
    """The executor the launch options ask for: --launcher slurm, mpirun (hosts), else local."""
    for cls in _EXECUTORS.values():
        if cls.launcher == options.launcher:
            return cls(options)
    return get_executor("local", options)
