"""Suites: TOML files that name benchmarks and the parameter grids to measure them over.

A step's value may be a scalar, a list (every combination is measured), or a size sweep
`{from = "4KiB", to = "256MiB", per_doubling = 2}` (geometric points, rounded to 64 bytes; bounds
may be multiples of the last-level cache, `to = "4xLLC"`: the effective one where
perfatlas.mem.cache_probe measured it, else hwloc's). The sizes of a step whose benchmark
measures a size series in one process (mem.*) go to one launch per combination of its other
parameters (docs/sizing.md). `threads = "all"` means one thread per PU; `--threads LIST` replaces
the thread counts of every step whose benchmark takes threads.
A step with `bind`, `mempolicy` or `launches` is a sweep: its thread counts x bindings x memory
policies, each launched `launches` times, interleaved (perfatlas.plan.sweep_grid).

Every field is checked before anything is planned (check_suite): a value is a word, a whole or
finite number, a non-empty list of them, or a size sweep; a step expands to at most
MAX_MEASUREMENTS measurements, counted before they are made.
"""

from __future__ import annotations

import itertools
import math
import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from perfatlas.benchmarks import get
from perfatlas.benchmarks.benchmark import Benchmark
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import parse_toml, read_text_file
from perfatlas.common.units import MAX_SERIES_POINTS, geometric_sizes, parse_size
from perfatlas.machine.placement import parse_bind, parse_mempolicy
from perfatlas.machine.topology import Machine
from perfatlas.plan.sweep_grid import Slot, plan, schedule

MAX_MEASUREMENTS = 10_000  # measurements one step may expand to
MAX_LAUNCHES = 1000  # a sweep step's launches of every point
SWEEP_KEYS = ("from", "to", "per_doubling")
SUITE_KEYS = ("description", "step")  # a suite's top level


@dataclass(frozen=True)
class Measurement:
    benchmark: Benchmark
    raw: dict[str, Any]
    slots: tuple[
        Slot, ...
    ] = ()  # a sweep step's launches (perfatlas.plan.sweep_grid), else one launch


def suite_names() -> list[str]:
    folder = resources.files("perfatlas") / "suites"
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load(name: str) -> dict:
    """A suite by name (shipped in perfatlas/suites) or by path to a TOML file."""
    path = Path(name)
    if path.suffix == ".toml" and os.path.lexists(path):
        text = read_text_file(path, "suite")
    else:
        shipped = resources.files("perfatlas") / "suites" / f"{name}.toml"
        if "/" in name or "\0" in name or not shipped.is_file():
            raise UserError(f"unknown suite '{name}'; known: {', '.join(suite_names())}")
        text = shipped.read_text()
    try:
        suite = parse_toml(text, f"suite {name}")
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"suite {name} is not valid TOML: {error}") from None
    check_suite(suite, name)
    return suite


def check_suite(suite: dict, name: str) -> None:
    """Every field of a suite, each refusal one sentence naming the step and the key."""
    unknown = [key for key in suite if key not in SUITE_KEYS]
    if unknown:  # a misspelt [[steps]] or a key meant for a step
        raise UserError(
            f"suite {name} has no key {_shown(unknown[0])}; it takes description and [[step]] "
            "tables"
        )
    if not isinstance(suite.get("description", ""), str):
        raise UserError(f"suite {name}: description must be a string")
    steps = suite.get("step")
    if not steps:
        raise UserError(f"suite {name} has no [[step]] tables")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise UserError(f"suite {name}: step must be [[step]] tables, not {_shown(steps)}")
    for number, step in enumerate(steps, start=1):
        benchmark = step.get("benchmark")
        if not isinstance(benchmark, str):
            raise UserError(f"suite {name}, step {number}: benchmark must be a benchmark's name")
        for key, value in step.items():
            where = f"suite {name}, step {number} ({benchmark}): {key}"
            if key == "launches":
                _check_whole(value, where, MAX_LAUNCHES)
            elif isinstance(value, dict):
                _check_sweep(value, where)
            elif isinstance(value, list):
                if not value or len(value) > MAX_SERIES_POINTS:
                    raise UserError(f"{where} must list 1 to {MAX_SERIES_POINTS} values")
                for item in value:
                    _check_scalar(item, where)
            else:
                _check_scalar(value, where)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_scalar(value: object, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UserError(f"{where} = {_shown(value)} is not a word or a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"{where} = {value} is not a finite number")


def _check_whole(value: object, where: str, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise UserError(f"{where} = {_shown(value)} must be a whole number from 1 to {maximum}")


def _check_sweep(spec: dict, where: str) -> None:
    unknown = sorted(set(spec) - set(SWEEP_KEYS))
    if unknown or "from" not in spec or "to" not in spec:
        raise UserError(
            f'{where} = {_shown(spec)} is not a size sweep: write {{from = "4KiB", to = '
            f'"64MiB", per_doubling = 2}} (from and to required, nothing else)'
        )
    for key in ("from", "to"):
        _check_scalar(spec[key], f"{where}.{key}")
    if "per_doubling" in spec:
        _check_whole(spec["per_doubling"], f"{where}.per_doubling", MAX_SERIES_POINTS)


def uses_llc(suite: dict) -> bool:
    """Whether some size of the suite is a multiple of the last-level cache (worth probing)."""

    def sized(value: object) -> bool:
        if isinstance(value, dict):
            return any(sized(v) for v in value.values())
        if isinstance(value, list):
            return any(sized(v) for v in value)
        return isinstance(value, str) and value.upper().endswith("XLLC")

    return any(sized(step) for step in suite["step"])


def suite_size(
    text: str | int, machine: Machine | None, what: str, llc_bytes: int | None = None
) -> int:
    """A size, or a multiple of the last-level cache ('4xLLC') so that suites scale with the
    machine. The LLC is `llc_bytes` when given (the effective one, perfatlas.mem.cache_probe),
    else the machine's sizing LLC (the probed one if it was probed, else hwloc's)."""
    if isinstance(text, str) and text.upper().endswith("XLLC"):
        if machine is None and llc_bytes is None:
            raise UserError(f"{what}='{text}' needs the machine's cache sizes")
        factor = text[:-4] or "1"
        llc = llc_bytes if llc_bytes is not None else machine.sizing_llc_bytes
        try:
            size = float(factor) * llc
        except ValueError:
            raise UserError(f"{what}='{text}' is not a multiple of the LLC (e.g. 4xLLC)") from None
        return parse_size(int(size) if math.isfinite(size) else str(size), what)
    return parse_size(text, what)


def size_sweep(
    spec: dict, machine: Machine | None = None, llc_bytes: int | None = None
) -> list[int]:
    """{from, to, per_doubling} -> geometric sizes from..to with per_doubling points per 2x."""
    low = suite_size(spec["from"], machine, "from", llc_bytes)
    high = suite_size(spec["to"], machine, "to", llc_bytes)
    per_doubling = spec.get("per_doubling", 1)
    if low <= 0 or high < low or per_doubling < 1:
        raise UserError(f"size sweep {spec} needs 0 < from <= to and per_doubling >= 1")
    return geometric_sizes(low, high, per_doubling)


def expand(
    suite: dict,
    machine: Machine,
    threads: list[int] | None = None,
    llc_bytes: int | None = None,
    series: bool = True,
) -> list[Measurement]:
    """Every parameter combination of every step, in suite order. A step with `bind`,
    `mempolicy` or `launches` is a sweep (perfatlas sweep): for each combination of its other
    parameters, its thread counts x bindings x policies, launched `launches` times, interleaved.

    Sizes relative to the LLC use `llc_bytes` when given (see suite_size). With `series`, the
    working sets of a step whose benchmark measures a size series in one process (a Param with
    series=True) stay together: one Measurement, one launch, one result per size."""
    measurements = []
    for step in suite["step"]:
        step = dict(step)
        benchmark = get(step.pop("benchmark", ""))
        takes_threads = any(p.name == "threads" for p in benchmark.declared())
        if threads and takes_threads:
            step["threads"] = threads
        sweep = {key: step.pop(key) for key in ("bind", "mempolicy", "launches") if key in step}
        axes = {}
        for key, value in step.items():
            if isinstance(value, dict):
                value = size_sweep(value, machine, llc_bytes)
            values = value if isinstance(value, list) else [value]
            if key == "threads":
                values = [len(machine.pus) if v == "all" else v for v in values]
                values = list(dict.fromkeys(values))  # 'all' may equal an explicit count
            axes[key] = [v if isinstance(v, (int, str)) else str(v) for v in values]
        _check_count(benchmark.name, axes)
        slots = _sweep_slots(sweep, axes.pop("threads", [1]), machine) if sweep else ()
        grouped = series and not sweep and _series_key(benchmark, axes)
        if grouped:  # one launch measures every size of the step (docs/contract.md, Series)
            axes[grouped] = [axes[grouped]]
        for combination in itertools.product(*axes.values()):
            measurements.append(Measurement(benchmark, dict(zip(axes, combination)), slots))
    return measurements


def _check_count(name: str, axes: dict[str, list], per_combination: int = 1) -> None:
    """A step's measurements, counted before itertools.product makes them."""
    count = math.prod(len(values) for values in axes.values()) * per_combination
    if count > MAX_MEASUREMENTS:
        raise UserError(
            f"the {name} step expands to {count} measurements, more than {MAX_MEASUREMENTS}, "
            "the most one step may: list fewer values"
        )


def _series_key(benchmark: Benchmark, axes: dict[str, list]) -> str | None:
    """The parameter of the step whose values one launch can measure as a series, if several."""
    for param in benchmark.declared():
        if param.series and len(axes.get(param.name, [])) > 1:
            return param.name
    return None


def _sweep_slots(sweep: dict, threads: list, machine: Machine) -> tuple[Slot, ...]:
    def listed(key: str, default: str) -> list[str]:
        value = sweep.get(key, default)
        return [str(v) for v in (value if isinstance(value, list) else [value])]

    launches = sweep.get("launches", 3)
    _check_whole(launches, "a sweep step's launches", MAX_LAUNCHES)
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in threads):
        raise UserError(f"a sweep step's threads {threads} must be whole numbers >= 1 or 'all'")
    binds, policies = listed("bind", "close"), listed("mempolicy", "local")
    _check_count("sweep", {"threads": threads, "bind": binds, "mempolicy": policies}, launches)
    points = plan(
        list(threads),
        [parse_bind(b) for b in binds],
        [parse_mempolicy(m, machine) for m in policies],
    )
    return tuple(schedule(points, launches))
