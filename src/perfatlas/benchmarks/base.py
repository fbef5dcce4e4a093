"""What every benchmark declares: its parameters, its native executable, how to launch it.

Adding a benchmark means one module in this package with a `@register`ed subclass of Benchmark
(and its native executable); the CLI, suites, store and report find it through the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from perfatlas.contract import result_warnings
from perfatlas.errors import UserError
from perfatlas.launch_plan import prepare_launch
from perfatlas.launchers import LaunchOptions
from perfatlas.machine import Machine
from perfatlas.native import run_launch
from perfatlas.placement import Placement
from perfatlas.units import (
    format_cpu_list,
    format_size,
    parse_cpu_list,
    parse_duration,
    parse_size,
    parse_size_series,
)
from perfatlas.warning import WarningRecord

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

    def value(self, text: str | Any, benchmark: str) -> Any:
        if self.series and isinstance(text, str) and (".." in text or "," in text):
            text = parse_size_series(text, self.name)
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
        value = self.parse(text) if isinstance(text, str) else text
        if self.minimum is not None and value < self.minimum:
            raise UserError(
                f"{benchmark}: {self.name}={text} is below the minimum {self.format(self.minimum)}"
            )
        if self.maximum is not None and value > self.maximum:
            raise UserError(
                f"{benchmark}: {self.name}={text} is above the maximum {self.format(self.maximum)}"
            )
        return value


def size_param(name: str, default: int, help: str, minimum: int = 1, series: bool = False) -> Param:
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
    )


def series_points(params: dict[str, Any], benchmark: Benchmark) -> list[dict[str, Any]]:
    """One parameter set per point of a series parameter (a single set when there is none)."""
    for param in benchmark.params:
        values = params.get(param.name)
        if param.series and isinstance(values, list):
            return [dict(params, **{param.name: value}) for value in values]
    return [params]


def int_param(name: str, default: int, help: str, minimum: int = 1, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise UserError(f"{name}='{text}' is not a whole number") from None

    return Param(name, parse, default, help, minimum=minimum, maximum=maximum)


def choice_param(name: str, choices: tuple[str, ...], help: str) -> Param:
    return Param(name, str, choices[0], help, choices=choices)


def duration_param(name: str, default: float, help: str, minimum: float = 1e-6) -> Param:
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


# Parameters shared by the memory benchmarks: where the memory lives and how it is paged.
def memory_params() -> tuple[Param, ...]:
    return (
        Param(
            "node",
            str,
            "local",
            "memory placement: local (first touch), a NUMA node number (bind), remote (the node "
            "nearest the first thread's that holds none of the threads), or interleave",
        ),
        Param(
            "page",
            lambda t: parse_size(t, "page"),
            4096,
            "page size: 4KiB or 2MiB",
            format=format_size,
        ),
    )


def repetition_params(samples: int = 9, min_sample_time: float = 0.02) -> tuple[Param, ...]:
    return (
        int_param("samples", samples, "timed samples after warm-up", minimum=1, maximum=10000),
        duration_param("min_sample_time", min_sample_time, "each sample lasts at least this long"),
    )


class Benchmark:
    """A registered benchmark. Subclasses set the class attributes and may refine the hooks."""

    name: ClassVar[str]
    summary: ClassVar[str]
    executable: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]
    metrics: ClassVar[dict[str, str]]  # metric -> unit
    launcher: ClassVar[str] = "local"  # perfatlas.launchers: local, mpirun (slurm later)

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

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        """Machine-dependent validation (sizes that fit, CPUs and nodes that exist)."""
        if "bytes" in params:
            sizes = params["bytes"] if isinstance(params["bytes"], list) else [params["bytes"]]
            machine.check_bytes(max(sizes))
        node = params.get("node")
        if node is not None and node not in ("local", "interleave", "remote"):
            if not str(node).isdigit():
                raise UserError(
                    f"{self.name}: node='{node}' must be local, remote, interleave "
                    "or a NUMA node number"
                )
            if int(node) not in machine.numa_nodes:
                raise UserError(
                    f"{self.name}: NUMA node {node} does not exist; this machine has node(s) "
                    f"{format_cpu_list(machine.numa_nodes)}"
                )
        if params.get("page") not in (None, 4096, 2 * 2**20):
            raise UserError(f"{self.name}: page={params['page']} must be 4KiB or 2MiB")

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        """key=value words for the native executable; a series becomes a comma-separated list of
        byte counts, other lists CPU lists."""
        if params.get("node") == "remote":
            params = dict(params, node=self.remote_node(params, machine))
        series = {p.name for p in self.params if p.series}
        words = []
        for key, value in params.items():
            if key in series and isinstance(value, list):
                value = ",".join(str(v) for v in value)
            elif isinstance(value, list):
                value = format_cpu_list(value)
            words.append(f"{key}={value}")
        return words

    def unmeasurable(self, params: dict[str, Any], machine: Machine) -> str | None:
        """Why this measurement cannot be made on this machine, or None when it can."""
        if params.get("node") == "remote" and self.remote_node(params, machine) is None:
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
        memory policy (perfatlas.placement.Placement), applied by perfatlas.launch_plan;
        `on_document`: called with each document as soon as the launch has written it (a
        series' points one by one, perfatlas.native.run_launch), before this returns."""
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
        declared = {p.name: p for p in self.params}
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
    from perfatlas import benchmarks  # noqa: F401  (imports every module, filling the registry)

    if name not in _REGISTRY:
        raise UserError(
            f"unknown benchmark '{name}'; known: {', '.join(sorted(_REGISTRY))} ('perfatlas list')"
        )
    return _REGISTRY[name]


def all_benchmarks() -> list[Benchmark]:
    from perfatlas import benchmarks  # noqa: F401

    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
