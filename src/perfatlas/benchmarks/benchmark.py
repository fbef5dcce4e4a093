"""What every benchmark declares: its native executable, how to launch it, and what Python adds
to the parameters the executable declares.

A native program's parameters (names, kinds, defaults, bounds, choices, help) are declared once,
in its `pa_param` table (native/common/args.h); `Benchmark.params` is built from `pa-x --params`
(perfatlas.launch.native_params). A module only adds what the native program does not know: the
parameters Python itself consumes (`adds`: np, threads), defaults chosen from the machine
(`refines`), checks against the machine, labels, and its time estimate (`estimate`). Adding a
benchmark means one module bench_<name>.py in the package its name begins with (`mem.latency` in
perfatlas.mem) with a `@register`ed subclass of Benchmark (and its native executable); the module
is discovered (perfatlas.common.discovery), and the CLI, suites, store and report find it through
the registry (docs/adding-a-benchmark.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from perfatlas.benchmarks.prepare_launch import prepare_launch
from perfatlas.common.discovery import import_modules
from perfatlas.common.errors import UserError
from perfatlas.common.units import (
    format_cpu_list,
    format_size,
    parse_cpu_list,
    parse_duration,
    parse_size,
    parse_size_series,
    split_series,
)
from perfatlas.common.warning import WarningRecord
from perfatlas.launch.build_parts import not_built
from perfatlas.launch.contract import result_warnings
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.launch.native import bin_dir, run_launch
from perfatlas.launch.native_params import NativeParam, native_table
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine

DocumentSink = Callable[[dict], None]  # takes each document of a launch as it arrives


@dataclass(frozen=True)
class Param:
    """One parameter: how to parse it from text, its default, its bounds, what it means."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    format: Callable[[Any], str] = str
    series: bool = False  # a list of values is measured by one launch, one result per value
    after: str | None = None  # a parameter Python adds: its place (default: before the native ones)
    sizes: tuple[str, ...] | None = None  # a size that takes only these (page: 4KiB, 2MiB)
    split: Callable[[str, str], list] = split_series  # a series' text into its points

    def value(self, text: str | Any, benchmark: str) -> Any:
        if self.series and isinstance(text, str) and (".." in text or "," in text):
            text = self.split(text, self.name)
        if isinstance(text, list):
            if not self.series:
                raise UserError(f"{benchmark}: {self.name} takes one value, not a list")
            if not text:
                raise UserError(f"{benchmark}: {self.name} is an empty list")
            points = [self.value(t, benchmark) for t in text]
            return points if len(points) > 1 else points[0]
        if self.choices is not None and str(text) not in self.choices:
            raise UserError(
                f"{benchmark}: {self.name}='{text}' is not one of {', '.join(self.choices)}"
            )
        # a suite's numbers and booleans are parsed as their text, so that they meet the same
        # checks as the command line's (a float is no whole number, inf no size)
        value = self.parse(text if isinstance(text, str) else str(text))
        if self.sizes is not None and value not in [self.parse(size) for size in self.sizes]:
            raise UserError(
                f"{benchmark}: {self.name}={text} is not one of {', '.join(self.sizes)}"
            )
        if self.minimum is not None and value < self.minimum:
            raise UserError(
                f"{benchmark}: {self.name}={text} is below the minimum {self.format(self.minimum)}"
            )
        if self.maximum is not None and value > self.maximum:
            raise UserError(
                f"{benchmark}: {self.name}={text} is above the maximum {self.format(self.maximum)}"
            )
        return value


def size_param(
    name: str, default: int, help: str, minimum: float | None = 1, series: bool = False
) -> Param:
    """A size; with `series`, also a list ('16KiB,1MiB') or a geometric series ('4KiB..64MiB/2'),
    measured in one launch with one result per size (docs/contract.md, Series)."""
    return Param(
        name,
        lambda t: parse_size(t, name),
        default,
        help,
        minimum=minimum,
        format=format_size,
        series=series,
        split=parse_size_series,
    )


def series_param(params: dict[str, Any], benchmark: Benchmark) -> Param | None:
    """The series parameter these parameters give a list of (bytes=A,B,...), or None."""
    return next(
        (p for p in benchmark.declared() if p.series and isinstance(params.get(p.name), list)),
        None,
    )


def series_points(params: dict[str, Any], benchmark: Benchmark) -> list[dict[str, Any]]:
    """One parameter set per point of a series parameter (a single set when there is none)."""
    param = series_param(params, benchmark)
    if param is None:
        return [params]
    return [dict(params, **{param.name: value}) for value in params[param.name]]


def int_param(
    name: str,
    default: int,
    help: str,
    minimum: float | None = 1,
    maximum: float | None = None,
) -> Param:
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise UserError(f"{name}='{text}' is not a whole number") from None

    return Param(name, parse, default, help, minimum=minimum, maximum=maximum)


def number_param(
    name: str, default: float | None, help: str, minimum: float | None, maximum: float | None
) -> Param:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UserError(f"{name}='{text}' is not a number") from None
        if not math.isfinite(value):
            raise UserError(f"{name}='{text}' is not a finite number")
        return value

    return Param(
        name, parse, default, help, minimum=minimum, maximum=maximum, format=lambda v: f"{v:g}"
    )


def duration_param(name: str, default: float, help: str, minimum: float | None = 1e-6) -> Param:
    return Param(
        name,
        lambda t: parse_duration(t, name),
        default,
        help,
        minimum=minimum,
        format=lambda s: f"{s:g}s",
    )


def cpus_param(name: str, help: str) -> Param:
    return Param(name, lambda t: parse_cpu_list(t, name), None, help, format=format_cpu_list)


SERIES_HELP = "; a list (16KiB,1MiB) or a series (4KiB..64MiB/2: 2 points per doubling)"
REMOTE_HELP = (
    "; or remote: the node nearest the first thread's that holds none of the threads (perfatlas "
    "chooses it)"
)


def native_param(row: NativeParam) -> Param:
    """The Param of one native table row: the native program's name, kind, default, bounds,
    choices and help. Python's additions to the kinds: a size series may also be written as a
    geometric series; a CPU list defaults to None (the benchmark chooses PUs of the machine);
    a memory node may also be `remote`; free text defaults to None where the native default is
    empty."""
    name, kind, low, high = row.name, row.kind, row.minimum, row.maximum
    if kind in ("int", "ints"):
        param = int_param(name, 0, row.help, minimum=low, maximum=high)
        param = replace(param, series=kind == "ints")
    elif kind in ("size", "sizes"):
        help = row.help + (SERIES_HELP if kind == "sizes" else "")
        param = size_param(name, 0, help, minimum=low, series=kind == "sizes")
        param = replace(param, maximum=high, sizes=row.choices)
    elif kind == "double":
        param = number_param(name, None, row.help, low, high)
    elif kind == "duration":
        param = replace(duration_param(name, 0.0, row.help, minimum=low), maximum=high)
    elif kind == "choice":
        param = Param(name, str, None, row.help, choices=row.choices)
    elif kind == "cpus":
        return cpus_param(name, row.help)
    elif kind == "node":
        return Param(name, str, row.default, row.help + REMOTE_HELP)
    else:  # string
        return Param(name, str, row.default or None, row.help)
    text = row.default
    return replace(param, default=param.value(text, name) if param.series else param.parse(text))


def declared_params(
    executable: str,
    adds: tuple[Param, ...] = (),
    refines: dict[str, dict[str, Any]] | None = None,
    withheld: tuple[str, ...] = (),
) -> tuple[Param, ...]:
    """The parameters of a benchmark: its executable's table (less `withheld`, the ones the
    benchmark sets itself), each refined by Python where `refines` says so, and the parameters
    Python `adds`, each before the native ones or after the one its `after` names."""
    refines = refines or {}
    table = native_table(executable)
    unknown = set(refines) - {row.name for row in table.params}
    if unknown:
        raise UserError(f"{executable} has no parameter {sorted(unknown)[0]} to refine")
    params = [
        replace(native_param(row), **refines.get(row.name, {}))
        for row in table.params
        if row.name not in withheld
    ]
    first = [p for p in adds if p.after is None]
    for added in (p for p in adds if p.after is not None):
        at = next((i for i, p in enumerate(params) if p.name == added.after), None)
        if at is None:
            raise UserError(f"{executable} has no parameter {added.after} to place {added.name}")
        params.insert(at + 1, added)
    return (*first, *params)


class _Declared:
    """`Benchmark.params`, built on first use from the native table: once per class and folder
    of executables (PERFATLAS_BIN_DIR may name another build)."""

    def __get__(self, benchmark: Benchmark | None, cls: type[Benchmark]) -> tuple[Param, ...]:
        if benchmark is not None and benchmark.absent() is not None:
            return ()  # not built here: its parameters stay as given (Benchmark.resolve)
        built = cls.__dict__.get("_params_by_bin_dir")
        if built is None:
            built = {}
            cls._params_by_bin_dir = built  # type: ignore[attr-defined]
        folder = str(bin_dir())
        if folder not in built:
            built[folder] = cls.build_params()
        return built[folder]


NODE_WORDS = ("local", "remote", "interleave")  # what a memory node parameter takes


class Benchmark:
    """A registered benchmark. Subclasses set the class attributes and may refine the hooks."""

    name: ClassVar[str]
    summary: ClassVar[str]
    executable: ClassVar[str]
    metrics: ClassVar[dict[str, str]]  # metric -> unit
    launcher: ClassVar[str] = "local"  # perfatlas.launch.launchers: local or mpirun
    # What Python adds to the executable's own table (declared_params): parameters Python itself
    # consumes, native parameters' fields it replaces (a default chosen from the machine), and
    # native parameters the benchmark sets itself (fixed_args, a mode).
    adds: ClassVar[tuple[Param, ...]] = ()
    refines: ClassVar[dict[str, dict[str, Any]]] = {}
    withheld: ClassVar[tuple[str, ...]] = ()
    # Parameters that place memory, each with the words it takes besides a node number (remote
    # is resolved against the threads by remote_node).
    node_params: ClassVar[dict[str, tuple[str, ...]]] = {"node": NODE_WORDS}
    params: ClassVar[tuple[Param, ...]] = _Declared()  # type: ignore[assignment]
    # The optional parts of the native build it needs (perfatlas.launch.build_parts: MPI, CHOLMOD, ...);
    # where one was not built its results are stored as "not built here: <why>".
    built_with: ClassVar[tuple[str, ...]] = ()
    # Whether its figures are judged by the anomaly rule (perfatlas.common.anomaly) as soon as
    # they are measured, and those that pass it measured again (perfatlas.run.remeasure_anomalies).
    anomaly_judged: ClassVar[bool] = False

    @classmethod
    def build_params(cls) -> tuple[Param, ...]:
        return declared_params(cls.executable, cls.adds, cls.refines, cls.withheld)

    def declared(self) -> tuple[Param, ...]:
        """The parameters, or none where the executable cannot tell them here (a report of
        another machine's results labels them all the same)."""
        try:
            return self.params
        except UserError:
            return ()

    def resolved(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        """The parameters of one measurement from the user's text: resolve()d, or as given where
        this build lacks a part the benchmark needs (`absent`: run() stores them as not built)."""
        return dict(raw) if self.absent() is not None else self.resolve(raw, machine)

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        """Parse user text into typed parameters, apply defaults, check them against the machine."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise UserError(
                f"{self.name} has no parameter '{unknown[0]}'; it takes {', '.join(known)}"
            )
        params = {
            name: param.value(raw[name], self.name) if name in raw else param.default
            for name, param in known.items()
        }
        self.check(params, machine)
        return params

    def absent(self) -> str | None:
        """Why this build lacks the executable: a part of `built_with` that was not built, stored
        as "not built here: <why>" so that a suite goes on. (An executable missing from a build
        that was not asked to leave it out is an error: perfatlas.launch.native.executable.)"""
        return not_built(self.built_with)

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        """Machine-dependent validation (sizes that fit, CPUs and nodes that exist)."""
        if "bytes" in params:
            sizes = params["bytes"] if isinstance(params["bytes"], list) else [params["bytes"]]
            machine.check_bytes(max(sizes))
        for name, words in self.node_params.items():
            self.check_node(name, params.get(name), machine, words)

    def check_node(self, name: str, node: Any, machine: Machine, words: tuple[str, ...]) -> None:
        """A memory node parameter: one of `words` or a NUMA node of this machine."""
        if node is not None and node not in words:
            if not str(node).isdigit():
                raise UserError(
                    f"{self.name}: {name}='{node}' must be {', '.join(words)} or a NUMA node number"
                )
            if int(node) not in machine.numa_nodes:
                raise UserError(
                    f"{self.name}: NUMA node {node} does not exist; this machine has node(s) "
                    f"{format_cpu_list(machine.numa_nodes)}"
                )

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        """key=value words for the native executable; a series becomes a comma-separated list of
        byte counts, other lists CPU lists."""
        remote = [name for name in self.node_params if params.get(name) == "remote"]
        if remote:
            params = dict(params, **{name: self.remote_node(params, machine) for name in remote})
        series = {p.name for p in self.declared() if p.series}
        words = []
        for key, value in params.items():
            if key in series and isinstance(value, list):
                value = ",".join(str(v) for v in value)
            elif isinstance(value, list):
                value = format_cpu_list(value)
            words.append(f"{key}={value}")
        return words

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Seconds one point of its measurement takes (`params` resolved; one point of a size
        series), the launch's start-up aside: each benchmark's own model, from the shapes in
        perfatlas.benchmarks.time_model (perfatlas run --plan adds the start-up and sums)."""
        raise NotImplementedError(f"{self.name} declares no time estimate (Benchmark.estimate)")

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        """Why this measurement cannot be made with this build on this machine, or None when
        it can."""
        absent = self.absent()
        if absent is not None:
            return absent
        asks_remote = any(params.get(name) == "remote" for name in self.node_params)
        if asks_remote and self.remote_node(params, machine) is None:
            if len(machine.numa_nodes) > 1:
                return (
                    "remote NUMA is not measurable with these cpus: each of the "
                    f"{len(machine.numa_nodes)} NUMA nodes holds one of the threads"
                )
            return (
                f"remote NUMA is not measurable here: this machine has "
                f"{len(machine.numa_nodes)} NUMA node(s)"
            )
        return None

    @staticmethod
    def remote_node(params: dict[str, Any], machine: Machine) -> int | None:
        """The node `node=remote` means for these parameters' threads (Machine.remote_node)."""
        cpus = params.get("cpus") or [params.get("cpu", machine.pus[0])]
        return machine.remote_node(cpus)

    def run(
        self,
        params: dict[str, Any],
        machine: Machine,
        options: LaunchOptions | None = None,
        placement: Placement | None = None,
        on_document: DocumentSink | None = None,
    ) -> list[dict]:
        """Measure once on this machine; returns the native documents (one or several).

        `options`: how to launch (default: the environment's); `placement`: a sweep's binding and
        memory policy (perfatlas.machine.placement.Placement), applied by perfatlas.benchmarks.prepare_launch;
        `on_document`: called with each document as soon as the launch has written it (a
        series' points one by one, perfatlas.launch.native.run_launch), before this returns."""
        why = self.unmeasurable(params, machine)
        if why:
            return [
                {
                    "schema": "perfatlas.result/1",
                    "benchmark": self.name,
                    "params": point,
                    "not_measurable": why,
                    "units": dict(self.metrics),
                }
                for point in series_points(params, self)
            ]
        options = options or LaunchOptions.from_environment()
        launch, launcher = prepare_launch(self, params, machine, options, placement)

        def arrived(document: dict) -> None:
            document.setdefault("launch", launch.record())  # which launcher ran it, and how
            if on_document is not None:
                on_document(document)

        documents = run_launch(launch, self.executable, launcher, arrived)
        return documents if isinstance(documents, list) else [documents]

    def check_launch(
        self, params: dict[str, Any], machine: Machine, options: LaunchOptions
    ) -> None:
        """What the launch options make impossible, said before a run is opened (an MPI
        benchmark's ranks without hosts to put them on); by default nothing."""

    def launcher_for(self, params: dict[str, Any]) -> str:
        """The launcher of one parameter set (a benchmark whose solvers differ may choose)."""
        return self.launcher

    def with_stored(self, params: dict[str, Any], store: Any, machine: Machine) -> dict[str, Any]:
        """Parameters completed from earlier results in the store (app.spmv: a measured memory
        bandwidth); by default unchanged."""
        return params

    def warnings(self, document: dict) -> list[WarningRecord]:
        """What is doubtful about one result document, each with its fix (stored with it)."""
        return result_warnings(document)

    def details(self) -> list[str]:
        """Extra lines for 'perfatlas list' (e.g. a kernel catalog)."""
        return []

    def label(self, params: dict[str, Any]) -> str:
        """A short human description of one parameter set, for progress lines and tables.

        Declared parameters come first, formatted; keys a native document adds (the measuring
        `cpu` and memory `owner` of the two-thread method, a contention `load`) follow.
        """
        declared = {p.name: p for p in self.declared()}
        shown = []
        for name, value in params.items():
            if value is None or name in ("samples", "min_sample_time", "seed"):
                continue
            if isinstance(value, list) and name in declared and declared[name].series:
                show = declared[name].format
                value = (
                    f"{show(value[0])}..{show(value[-1])} ({len(value)} points)"
                    if value == sorted(value) and len(value) > 2
                    else ",".join(show(v) for v in value)
                )
            elif isinstance(value, list):
                value = format_cpu_list(value)
            elif name in declared:
                value = declared[name].format(value)
            shown.append(f"{name}={value}")
        return " ".join(shown)


_REGISTRY: dict[str, Benchmark] = {}


def register(cls: type[Benchmark]) -> type[Benchmark]:
    _REGISTRY[cls.name] = cls()
    return cls


def get(name: str) -> Benchmark:
    import_modules("bench")  # every bench_* module of perfatlas's packages registers itself

    if name not in _REGISTRY:
        raise UserError(
            f"unknown benchmark '{name}'; known: {', '.join(sorted(_REGISTRY))} ('perfatlas list')"
        )
    return _REGISTRY[name]


def all_benchmarks() -> list[Benchmark]:
    import_modules("bench")

    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
