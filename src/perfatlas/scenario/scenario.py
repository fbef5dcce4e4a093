"""Scenarios declared in TOML, parsed and checked before anything runs; an error names the line
at fault (tomllib's position for syntax, the key's line for a value: perfatlas.scenario.locate).

    name = "overload"                  # default: the file name
    description = "N+1 sequential jobs on N CPUs"
    cpus = "all"                       # the CPU subset: "all" or a list ("0-3"); N = its size
    seed = 1                           # synthesis seed (each job may set its own)
    variation = 0.2                    # rates vary +-20 % from slice to slice around the average

    [[job]]
    name = "seq"
    count = "N+1"                      # copies: a number or N, N+1, N-1, 2N, N/2 ...
    threads = 1                        # 1: sequential; a number or N: OpenMP threads
    runtime = "8s"                     # on the dedicated machine (the synthesis target)
    start = "0s"                       # offset from the scenario's start
    nice = 0                           # -20 .. 19
    bind = "0"                         # optional: thread t pinned to the t-th CPU listed;
                                       # without it the OS places the threads within the subset
    kernels = ["triad", "polynomial"]  # optional: the candidate kernels (default: all)
    bytes = ["25MB"]                   # optional: candidate working sets, SI sizes or multiples
                                       # of the last-level cache ("4xLLC"); default: 240kB, 2.5MB,
                                       # 25MB and whatever else the base data holds
    target = { transfer_rate = "50%", flop_rate = "1Gflop/s", write_fraction = 0.3 }
    # or an explicit kernel mix (time shares) instead of a target:
    # mix = [{ kernel = "triad", bytes = "25MB", share = 3 }, { kernel = "polynomial", share = 1 }]

Rates are byte/s and flop/s (SI: "4GB/s", "500Mflop/s", or plain numbers), or a percentage of
the highest rate among the job's candidate variants in the base data ("50%").

Names become file names (the scenario's folder, a job's program and output files), so they follow
perfatlas.common.safe_names; every number is checked finite and within the limits below before anything
is made or run (docs/safety/launch.md).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfatlas.common.errors import UserError
from perfatlas.common.safe_names import name_problem, shown
from perfatlas.common.text_file import parse_toml, read_text_file
from perfatlas.common.units import format_cpu_list, parse_cpu_list, parse_duration
from perfatlas.machine.topology import Machine
from perfatlas.parbench.catalog import STRIDES, catalog
from perfatlas.plan.suite import suite_size
from perfatlas.scenario.locate import Locator

DEFAULT_SIZES = (240_000, 2_500_000, 25_000_000)  # PARbench's working sets
TOP_KEYS = {"name", "description", "cpus", "seed", "variation", "job"}
JOB_KEYS = {
    "name",
    "count",
    "threads",
    "runtime",
    "start",
    "nice",
    "bind",
    "kernels",
    "bytes",
    "target",
    "mix",
    "seed",
    "variation",
}
TARGET_KEYS = {"transfer_rate", "flop_rate", "write_fraction"}
MIX_KEYS = {"kernel", "bytes", "stride", "share"}
_RATE_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kMGT]?)(B|flop)/s\s*$")
_PERCENT = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*%\s*$")
_OF_N = re.compile(r"^\s*(\d*)\s*\*?\s*N\s*(?:([+-])\s*(\d+))?\s*$")
_N_OVER = re.compile(r"^\s*N\s*/\s*(\d+)\s*$")
# Limits, each named in the sentence that refuses a value beyond it: a scenario's copies are
# processes started together (and sampled every 20 ms); a program holds a line per slice of at
# least 50 ms, so its runtime bounds its length and the memory synthesis needs.
MAX_COPIES = 1024
MAX_RUNTIME_S = 3600.0
MAX_START_S = 3600.0


@dataclass(frozen=True)
class Rate:
    value: float  # byte/s or flop/s; with relative, a fraction of the highest candidate rate
    relative: bool = False

    def resolve(self, highest: float) -> float:
        return self.value * highest if self.relative else self.value


@dataclass(frozen=True)
class MixPart:
    kernel: str
    bytes: int
    stride: int
    share: float


@dataclass(frozen=True)
class Job:
    name: str
    index: int  # position in the file
    count: int
    threads: int
    runtime_s: float
    start_s: float
    nice: int
    bind: tuple[int, ...] | None
    kernels: tuple[str, ...] | None
    sizes: tuple[int, ...] | None
    transfer_rate: Rate | None
    flop_rate: Rate | None
    write_fraction: float | None
    mix: tuple[MixPart, ...] | None
    seed: int
    variation: float

    @property
    def binding_text(self) -> str:
        return f"pinned {format_cpu_list(list(self.bind))}" if self.bind else "OS"


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    path: str
    text: str
    cpus: tuple[int, ...]
    jobs: tuple[Job, ...]
    scale: float = 1.0
    definition: dict[str, Any] = field(default_factory=dict)

    @property
    def instances(self) -> int:
        return sum(job.count for job in self.jobs)


class _Checker:
    """Turns a wrong value into one sentence naming its file and line."""

    def __init__(self, path: str, text: str, machine: Machine):
        self.path, self.locator, self.machine = path, Locator(text), machine

    def fail(self, where: tuple, message: str) -> UserError:
        line = self.locator.line(where)
        at = f" line {line}" if line else ""
        return UserError(f"scenario {self.path}{at}: {message}")


def load(path: str | Path, machine: Machine, scale: float = 1.0) -> Scenario:
    """A scenario file (or a shipped scenario's name) parsed and checked against this machine."""
    return parse(read_text_file(_source(path), "scenario"), str(path), machine, scale)


def _source(path: str | Path) -> Path:
    given = Path(path)
    if given.is_file() or given.suffix == ".toml":
        return given
    from importlib import resources

    shipped = resources.files("perfatlas") / "scenarios" / f"{path}.toml"
    if shipped.is_file():
        return Path(str(shipped))
    raise UserError(
        f"scenario '{path}' is neither a file nor a shipped scenario ({shipped_names()})"
    )


def shipped_names() -> str:
    from importlib import resources

    folder = resources.files("perfatlas") / "scenarios"
    names = sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))
    return ", ".join(names)


def parse(text: str, path: str, machine: Machine, scale: float = 1.0) -> Scenario:
    if not (math.isfinite(scale) and scale > 0):
        raise UserError(f"--scale {scale:g} must be a positive number")
    try:
        data = parse_toml(text, f"scenario {path}")
    except tomllib.TOMLDecodeError as error:
        raise _syntax_error(error, path) from None
    check = _Checker(path, text, machine)
    _only(check, data, TOP_KEYS, (), "the scenario")
    cpus = _cpus(check, data.get("cpus", "all"), machine)
    jobs_data = data.get("job")
    if not isinstance(jobs_data, list) or not jobs_data:
        raise check.fail((), "the scenario has no jobs: add a [[job]] table")
    seed = _integer(check, data.get("seed", 1), ("seed",), "seed")
    variation = _variation(check, data.get("variation", 0.2), ("variation",))
    jobs, names, copies = [], set(), 0
    for index, spec in enumerate(jobs_data):
        job = _job(check, spec, index, len(cpus), cpus, seed, variation, scale)
        if job.name in names:
            raise check.fail(("job", index, "name"), f"two jobs are named '{job.name}'")
        names.add(job.name)
        jobs.append(job)
        copies += job.count
        if copies > MAX_COPIES:
            raise check.fail(
                ("job", index, "count"),
                f"the jobs up to '{job.name}' start {copies} copies, more than the "
                f"{MAX_COPIES} a scenario may start",
            )
    if "name" in data:
        name = _name(check, data["name"], ("name",), "name")
    else:
        name = _name(check, Path(path).stem, (), "the scenario's name (its file's name)")
    return Scenario(
        name=name,
        description=str(data.get("description", "")),
        path=path,
        text=text,
        cpus=tuple(cpus),
        jobs=tuple(jobs),
        scale=scale,
        definition=data,
    )


def _syntax_error(error: tomllib.TOMLDecodeError, path: str) -> UserError:
    message = str(error)
    match = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if not match:
        return UserError(f"scenario {path} is not valid TOML: {message}")
    what = message[: match.start()].strip().rstrip(".")
    return UserError(
        f"scenario {path} line {match.group(1)}: not valid TOML: {what} (column {match.group(2)})"
    )


def _only(check: _Checker, table: Any, allowed: set[str], where: tuple, what: str) -> None:
    if not isinstance(table, dict):
        raise check.fail(where, f"{what} must be a table")
    for key in table:
        if key not in allowed:
            raise check.fail(
                where + (key,),
                f"unknown key {shown(key)} in {what} (it takes {', '.join(sorted(allowed))})",
            )


def _name(check: _Checker, value: Any, where: tuple, what: str) -> str:
    """A name that becomes a file or folder name (perfatlas.common.safe_names), or one sentence."""
    problem = name_problem(value)
    if problem:
        raise check.fail(where, f"{what} {shown(value)} {problem}")
    return value


def _cpu_list(check: _Checker, value: Any, where: tuple, what: str) -> list[int]:
    """A CPU list: a string ("0-3,5") or a list of CPU numbers."""
    if isinstance(value, list) and all(
        isinstance(cpu, int) and not isinstance(cpu, bool) for cpu in value
    ):
        return value
    if not isinstance(value, str):
        raise check.fail(where, f'{what} = {shown(value)} is not a CPU list: write e.g. "0-3"')
    try:
        return parse_cpu_list(value, what)
    except UserError as error:
        raise check.fail(where, str(error)) from None


def _cpus(check: _Checker, value: Any, machine: Machine) -> list[int]:
    if value == "all":
        cpus = sorted(os.sched_getaffinity(0) & set(machine.pus))
    else:
        cpus = _cpu_list(check, value, ("cpus",), "cpus")
        try:
            machine.check_cpus(cpus)
        except UserError as error:
            raise check.fail(("cpus",), f"cpus = {shown(value)}: {error}") from None
        outside = sorted(set(cpus) - os.sched_getaffinity(0))
        if outside:
            raise check.fail(
                ("cpus",),
                f"cpu {outside[0]} is outside the CPUs this process may use "
                f"({format_cpu_list(sorted(os.sched_getaffinity(0)))})",
            )
    return cpus


def of_n(check: _Checker, value: Any, n: int, where: tuple, what: str) -> int:
    """An integer, or an expression of N (the subset's CPU count): N, N+1, N-1, 2N, N/2."""
    if isinstance(value, bool):
        raise check.fail(where, f"{what} = {shown(value)} is not a number or an expression of N")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if match := _OF_N.match(value):
            factor = int(match.group(1) or 1)
            offset = int(match.group(3) or 0) * (-1 if match.group(2) == "-" else 1)
            return factor * n + offset
        if (match := _N_OVER.match(value)) and int(match.group(1)) > 0:
            return n // int(match.group(1))
    raise check.fail(
        where, f"{what} = {shown(value)} is not a number or an expression of N (N, N+1, 2N, N/2)"
    )


def _integer(check: _Checker, value: Any, where: tuple, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise check.fail(where, f"{what} = {shown(value)} is not an integer")
    return value


def _variation(check: _Checker, value: Any, where: tuple) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise check.fail(where, f"variation = {shown(value)} must be a fraction in [0, 1)")
    return float(value)


def _duration(
    check: _Checker, value: Any, where: tuple, what: str, scale: float, limit: float
) -> float:
    """Seconds, times --scale: finite, not negative, at most `limit` (a limit says its name)."""
    try:
        if not isinstance(value, (int, float, str)) or isinstance(value, bool):
            raise UserError(f"{what} {shown(value)} is not a duration")
        seconds = parse_duration(value, what)
    except UserError as error:
        raise check.fail(where, str(error)) from None
    scaled = f" (x{scale:g} by --scale)" if scale != 1 else ""
    if seconds * scale > limit:
        last = "a job may last" if what == "runtime" else "a job may start after"
        raise check.fail(
            where, f"{what} = {shown(value)}{scaled} is more than the {limit:g} s {last}"
        )
    return seconds * scale


def _size(check: _Checker, value: Any, where: tuple, what: str) -> int:
    if not isinstance(value, (int, float, str)) or isinstance(value, bool):
        raise check.fail(where, f"{what} = {shown(value)} is not a size")
    try:
        size = suite_size(
            value if isinstance(value, (int, str)) else str(value), check.machine, what
        )
        if size > 0:
            check.machine.check_bytes(size, what)
    except UserError as error:
        raise check.fail(where, str(error)) from None
    except (ValueError, OverflowError):  # a number no size can be (1e999)
        raise check.fail(where, f"{what} = {shown(value)} is not a size") from None
    if size <= 0:
        raise check.fail(where, f"{what} = {shown(value)} must be positive")
    return size


def _rate(check: _Checker, value: Any, where: tuple, unit: str) -> Rate:
    what = where[-1]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        rate = Rate(float(value))
    elif isinstance(value, str) and (match := _PERCENT.match(value)):
        rate = Rate(float(match.group(1)) / 100.0, relative=True)
    elif isinstance(value, str) and (match := _RATE.match(value)) and match.group(3) == unit:
        rate = Rate(float(match.group(1)) * _RATE_PREFIX[match.group(2)])
    else:
        rate = None
    if rate is not None and math.isfinite(rate.value):
        return rate
    if rate is not None:
        raise check.fail(where, f"{what} = {shown(value)} is not a finite rate")
    example = "4GB/s" if unit == "B" else "500Mflop/s"
    raise check.fail(
        where, f"{what} = {shown(value)} is not a rate: write e.g. {example!r}, a number or '50%'"
    )


def _job(
    check: _Checker,
    spec: Any,
    index: int,
    n: int,
    cpus: list[int],
    seed: int,
    variation: float,
    scale: float,
) -> Job:
    at = ("job", index)
    _only(check, spec, JOB_KEYS, at, f"job {index + 1}")
    name = _name(check, spec.get("name", f"job{index + 1}"), at + ("name",), "the job name")
    label = f"job '{name}'"
    count = of_n(check, spec.get("count", 1), n, at + ("count",), "count")
    if count < 1:
        raise check.fail(at + ("count",), f"{label}: count {count} must be at least 1")
    if count > MAX_COPIES:
        raise check.fail(
            at + ("count",),
            f"{label}: count = {count} is more than the {MAX_COPIES} copies a scenario may start",
        )
    threads = of_n(check, spec.get("threads", 1), n, at + ("threads",), "threads")
    if not 1 <= threads <= n:
        raise check.fail(
            at + ("threads",),
            f"{label}: threads = {threads} is more than the {n} CPUs of the subset "
            f"{format_cpu_list(cpus)}"
            if threads > n
            else f"{label}: threads = {threads} must be at least 1",
        )
    if "runtime" not in spec:
        raise check.fail(at, f'{label} has no runtime (e.g. runtime = "5s")')
    runtime = _duration(check, spec["runtime"], at + ("runtime",), "runtime", scale, MAX_RUNTIME_S)
    if runtime <= 0:
        raise check.fail(at + ("runtime",), f"{label}: runtime must be positive")
    start = _duration(check, spec.get("start", 0), at + ("start",), "start", scale, MAX_START_S)
    nice = _integer(check, spec.get("nice", 0), at + ("nice",), "nice")
    if not -20 <= nice <= 19:
        raise check.fail(at + ("nice",), f"{label}: nice = {nice} is outside -20 .. 19")
    return Job(
        name=name,
        index=index,
        count=count,
        threads=threads,
        runtime_s=runtime,
        start_s=start,
        nice=nice,
        bind=_bind(check, spec, at, label, threads, cpus),
        kernels=_kernels(check, spec, at, label),
        sizes=_sizes(check, spec, at),
        **_behaviour(check, spec, at, label),
        seed=_integer(check, spec.get("seed", seed + index), at + ("seed",), "seed"),
        variation=_variation(check, spec.get("variation", variation), at + ("variation",)),
    )


def _bind(
    check: _Checker, spec: dict, at: tuple, label: str, threads: int, cpus: list[int]
) -> tuple[int, ...] | None:
    if "bind" not in spec:
        return None
    value = spec["bind"]
    bind = _cpu_list(check, value, at + ("bind",), "bind")
    outside = sorted(set(bind) - set(cpus))
    if outside:
        raise check.fail(
            at + ("bind",),
            f"{label}: bind names cpu {outside[0]}, outside the subset {format_cpu_list(cpus)}",
        )
    if len(bind) < threads:
        raise check.fail(
            at + ("bind",),
            f"{label}: bind = {shown(value)} names {len(bind)} CPU(s) for {threads} threads "
            "(one per thread)",
        )
    return tuple(bind)


def _known_kernel(check: _Checker, name: Any, where: tuple, label: str) -> str:
    names = [k.name for k in catalog()]
    if name not in names:
        raise check.fail(
            where,
            f"{label}: kernel {shown(name)} is not in the parbench catalog ('perfatlas list' shows "
            f"its {len(names)} kernels)",
        )
    return name


def _kernels(check: _Checker, spec: dict, at: tuple, label: str) -> tuple[str, ...] | None:
    if "kernels" not in spec:
        return None
    value = spec["kernels"]
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise check.fail(at + ("kernels",), f"{label}: kernels must be a list of kernel names")
    return tuple(_known_kernel(check, name, at + ("kernels",), label) for name in names)


def _sizes(check: _Checker, spec: dict, at: tuple) -> tuple[int, ...] | None:
    if "bytes" not in spec:
        return None
    value = spec["bytes"]
    values = value if isinstance(value, list) else [value]
    return tuple(_size(check, v, at + ("bytes",), "bytes") for v in values)


def _behaviour(check: _Checker, spec: dict, at: tuple, label: str) -> dict[str, Any]:
    has_target, has_mix = "target" in spec, "mix" in spec
    if has_target == has_mix:
        raise check.fail(
            at,
            f"{label} needs a target behaviour (target = {{ transfer_rate = ... }}) or an "
            "explicit kernel mix (mix = [...]), exactly one of them",
        )
    if has_mix:
        return {
            "transfer_rate": None,
            "flop_rate": None,
            "write_fraction": None,
            "mix": _mix(check, spec["mix"], at + ("mix",), label),
        }
    target = spec["target"]
    where = at + ("target",)
    _only(check, target, TARGET_KEYS, where, f"the target of {label}")
    if not target:
        raise check.fail(where, f"{label}: the target names no rate")
    fraction = target.get("write_fraction")
    if fraction is not None and (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float))
        or not 0 <= fraction <= 1
    ):
        raise check.fail(
            where + ("write_fraction",),
            f"{label}: write_fraction = {shown(fraction)} must be in [0, 1]",
        )
    return {
        "transfer_rate": _rate(check, target["transfer_rate"], where + ("transfer_rate",), "B")
        if "transfer_rate" in target
        else None,
        "flop_rate": _rate(check, target["flop_rate"], where + ("flop_rate",), "flop")
        if "flop_rate" in target
        else None,
        "write_fraction": None if fraction is None else float(fraction),
        "mix": None,
    }


def _mix(check: _Checker, value: Any, where: tuple, label: str) -> tuple[MixPart, ...]:
    if not isinstance(value, list) or not value:
        raise check.fail(where, f"{label}: mix must be a list of {{ kernel = ..., share = ... }}")
    parts = []
    for i, part in enumerate(value):
        at = where + (i,)
        _only(check, part, MIX_KEYS, at, f"a mix entry of {label}")
        if "kernel" not in part:
            raise check.fail(at, f"{label}: mix entry {i + 1} names no kernel")
        name = _known_kernel(check, part["kernel"], at + ("kernel",), label)
        stride = part.get("stride", 1)
        if isinstance(stride, bool) or not isinstance(stride, int) or stride not in STRIDES:
            raise check.fail(
                at + ("stride",),
                f"{label}: stride = {shown(stride)} is not one of 1, 2, 4, 8, 16, 32",
            )
        if stride != 1 and not next(k for k in catalog() if k.name == name).strided:
            raise check.fail(at + ("stride",), f"{label}: kernel {name} has no stride")
        share = part.get("share", 1)
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float))
            or not (math.isfinite(share) and share > 0)
        ):
            raise check.fail(
                at + ("share",), f"{label}: share = {shown(share)} must be a positive number"
            )
        size = _size(check, part.get("bytes", DEFAULT_SIZES[1]), at + ("bytes",), "bytes")
        parts.append(MixPart(name, size, stride, float(share)))
    return tuple(parts)
