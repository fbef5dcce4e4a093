"""The abstract executor and its registry (ReFrame's scheduler/launcher split, one class each).

An executor is chosen once, from the command line, and handed to the runner
(perfatlas.run.runner.Runner); the runner opens and closes the run, the executor starts the
measurements and stores each document as it arrives. It is told the launch options explicitly:
nothing about launching is read from global state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from perfatlas.common.discovery import import_modules
from perfatlas.common.errors import UserError
from perfatlas.common.progress import progress_bar
from perfatlas.launch.contract import validate
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Destination, Planned, merge_repeats
from perfatlas.run.elsewhere import Elsewhere
from perfatlas.run.series_points import SeriesPoints
from perfatlas.store.database import Store


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
    """Measurements started from here one after another, each waited for (local, hosts).

    Each document is validated and stored as soon as its launch writes it (a series' points one
    by one, perfatlas.launch.native.run_launch); documents a launch hands over only at its end (every
    host's, read from files) are stored then. With --repeat N the launches of a measurement
    run in turn; each point is stored as the first launch gives it, and replaced by its pool
    (merge_repeats) with every later launch's, so that a run killed between repetitions keeps
    the repetitions that finished (derived.launches counts them; docs/contract.md, Series).
    """

    @abstractmethod
    def launch(
        self,
        benchmark: Any,
        params: dict[str, Any],
        placement: Placement | None,
        into: Destination,
        on_document: Callable[[dict], None],
    ) -> list[dict]:
        """One launch of one measurement: its documents, not yet validated; those handed to
        `on_document` while it ran among them."""

    def measure_all(
        self, into: Destination, measurements: list[Planned], repeat: int, progress: bool
    ) -> list[dict]:
        if not progress:
            return [doc for planned in measurements for doc in self._measure(into, planned, repeat)]
        documents = []
        # the bar counts the points of every launch: a series of 5 sizes, twice, is 10 steps
        with progress_bar(sum(p.points for p in measurements) * repeat) as steps:
            for planned in measurements:
                steps(planned.description, planned.points * repeat)
                documents += self._measure(into, planned, repeat, steps.done)
        return documents

    def _measure(
        self,
        into: Destination,
        planned: Planned,
        repeat: int,
        done: Callable[[int], None] | None = None,
    ) -> list[dict]:
        """Launch `repeat` times; validate, pool and commit each document as it arrives."""
        params = planned.benchmark.with_stored(planned.params, into.store, into.machine)
        launches: list[list[dict]] = []
        stored: dict[int, tuple[list[int], dict]] = {}  # point index: its rows, its pooled document
        for number in range(1, repeat + 1):
            launches.append(
                self._launch_once(into, planned, params, launches, number, repeat, stored, done)
            )
        return [document for _, document in stored.values()]

    def _launch_once(
        self,
        into: Destination,
        planned: Planned,
        params: dict[str, Any],
        earlier: list[list[dict]],
        number: int,
        repeat: int,
        stored: dict[int, tuple[list[int], dict]],
        done: Callable[[int], None] | None,
    ) -> list[dict]:
        """Launch `number` of `repeat`: its documents, each point committed pooled with the
        earlier launches' (replacing what they stored)."""
        benchmark = planned.benchmark
        points = SeriesPoints(benchmark, params)
        received: list[dict] = []
        counted = 0  # points of this launch shown finished on the progress bar

        def arrived(document: dict) -> None:
            nonlocal counted
            validate(document, benchmark.name)
            received.append(document)
            finished = points.arrived(document)
            index = len(received) - 1
            pooled = _pool(earlier, index, document, benchmark.name)
            warnings = benchmark.warnings(pooled) + (
                planned.annotate(pooled) if planned.annotate else []
            )
            if index in stored:
                ids = into.store.replace_document(stored[index][0], into.run_id, pooled, warnings)
            else:
                ids = into.store.add_document(into.run_id, pooled, warnings)
            stored[index] = (ids, pooled)
            if done is not None and finished:
                done(finished)
                counted += finished

        try:
            documents = self.launch(benchmark, params, planned.placement, into, arrived)
            streamed = {id(document) for document in received}
            for document in documents:  # those handed over only now (read from files)
                if id(document) not in streamed:
                    arrived(document)
        except UserError as error:
            raise _stopped(error, points, number, repeat, len(stored), into) from error
        if done is not None and points.count > counted:
            done(points.count - counted)
        return documents


def _pool(earlier: list[list[dict]], index: int, document: dict, name: str) -> dict:
    """Point `index` of the last launch pooled with the same point of the earlier launches."""
    if not earlier:
        return document
    if any(index >= len(launch) for launch in earlier):
        raise UserError(
            f"{name} wrote more documents in its last launch than in an earlier one, so its "
            "repeats cannot be pooled; this is a perfatlas bug"
        )
    return merge_repeats([[launch[index]] for launch in earlier] + [[document]])[0]


def _stopped(
    error: UserError,
    points: SeriesPoints,
    number: int,
    repeat: int,
    stored: int,
    into: Destination,
) -> UserError:
    """A launch that failed part-way: which point, and what of the measurement is stored (what
    the run holds is counted where none of the measurement is: a full disk may have refused
    its first document)."""
    if points.count == 1 and not points.documents:
        return error
    name = points.benchmark.name
    where = (
        f"at {points.label(points.failed_at())}"
        if points.param
        else f"after {points.documents} document(s)"
    )
    launch = f" in launch {number} of {repeat}" if repeat > 1 else ""
    if number > 1:
        kept = (
            f"its points are stored, each pooled over the launches that reached it (at least "
            f"{number - 1})"
        )
    elif stored:
        kept = (
            f"the {stored} result{'' if stored == 1 else 's'} before it "
            f"{'is' if stored == 1 else 'are'} stored"
        )
    else:
        kept = _run_keeps(into)
    why = str(error).removesuffix(" (results stored before it are kept)")
    why = why.removesuffix("; what was stored before is kept")
    return UserError(f"{name} stopped {where}{launch}: {why}; {kept}")


def _run_keeps(into: Destination) -> str:
    """What the open run holds when none of the measurement that stopped could be stored."""
    try:
        earlier = into.store.result_count(into.run_id)
    except UserError:
        return f"none of it is stored; what run {into.run_id} stored before it is kept"
    if not earlier:
        return f"none of it is stored, and run {into.run_id} holds no result"
    return (
        f"none of it is stored; run {into.run_id} keeps the {earlier} "
        f"result{'' if earlier == 1 else 's'} measured before it"
    )


_EXECUTORS: dict[str, type[Executor]] = {}


def register_executor(cls: type[Executor]) -> type[Executor]:
    _EXECUTORS[cls.name] = cls
    return cls


def _executors() -> dict[str, type[Executor]]:
    """The registry, filled first: every executor_* module of perfatlas's packages registers its
    class (perfatlas.common.discovery): local here, hosts and slurm in perfatlas.cluster."""
    import_modules("executor")
    return _EXECUTORS


def executor_names() -> list[str]:
    return sorted(_executors())


def get_executor(name: str, options: LaunchOptions | None = None) -> Executor:
    if name not in _executors():
        raise UserError(f"unknown executor '{name}'; known: {', '.join(executor_names())}")
    return _EXECUTORS[name](options)


def executor_for(options: LaunchOptions) -> Executor:
    """The executor the launch options ask for: --launcher slurm, mpirun (hosts), else local."""
    for cls in _executors().values():
        if cls.launcher == options.launcher:
            return cls(options)
    return get_executor("local", options)
