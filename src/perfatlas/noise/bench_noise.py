"""noise: computational noise of the OS and the machine (LANL Lightning report, sec. 3).

Fixed work quantum (`method=fwq`: every quantum's duration, Sottile & Minnich; LLNL FWQ) or fixed
time quantum (`method=ftq`: the work done in every interval), one pinned thread per PU, all PUs
of `cpus` measuring at once. The samples are the raw time series; slowdown, detour distribution,
spectrum and the bulk-synchronous model are computed from them (perfatlas.noise.analysis_noise).
"""

from __future__ import annotations

import math
from typing import Any

from perfatlas.benchmarks.benchmark import Benchmark, Param, register
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list, parse_cpu_list
from perfatlas.common.warning import Kind, WarningRecord
from perfatlas.launch.contract import placement_warnings
from perfatlas.machine.topology import Machine

DEFAULT_QUANTUM = {"fwq": 100e-6, "ftq": 1e-3}  # FWQ work quantum; FTQ interval (seconds)
SHORTEST_QUANTUM = {"fwq": 1e-6, "ftq": 100e-6}  # FTQ: 1000 units of >= 100 ns per interval
MAX_SAMPLES_PER_PU = 2_000_000  # ~15 MB of JSON per PU: 200 s of 100 us quanta
MAX_SAMPLES = 10_000_000  # all PUs together: what the store keeps of one measurement
QUANTUM_RESOLUTIONS = 100  # an FWQ quantum shorter than this many timer resolutions is warned about
FTQ_TIMER_SHARE = 0.1  # an FTQ unit whose timer read costs more than this share is warned about


def default_quantum(method: str, duration: float, pus: int) -> float:
    """The method's default quantum, lengthened (to whole microseconds) where the quanta of
    every PU over `duration` would exceed what the store keeps: 10 s of 100 us quanta on all
    384 PUs of a 4-socket machine would be 38 million samples; 400 us quanta fit."""
    fitting = duration * max(pus / MAX_SAMPLES, 1 / MAX_SAMPLES_PER_PU)
    return max(DEFAULT_QUANTUM[method], math.ceil(round(fitting * 1e6, 6)) / 1e6)


def format_duration(seconds: float) -> str:
    """0.0001 -> '100us', 0.002 -> '2ms', 10 -> '10s'."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= factor:
            return f"{seconds / factor:g}{unit}"
    return f"{seconds * 1e9:g}ns"


def parse_cpus_or_all(text: str) -> list[int] | str:
    return "all" if text == "all" else parse_cpu_list(text, "cpus")


def parse_cpu(text: str) -> int:
    if not text.isdigit():
        raise UserError(f"cpu='{text}' is not a PU number (e.g. cpu=1; cpus=0-3 for several)")
    return int(text)


@register
class Noise(Benchmark):
    name = "noise"
    summary = "OS noise: fixed work or fixed time quanta on one PU or all PUs at once"
    executable = "pa-noise"
    metrics = {"quantum_ns": "ns", "work_per_interval": "work units"}
    adds = (Param("cpu", parse_cpu, None, "the one PU to measure (or cpus=)", after="method"),)
    refines = {
        "cpus": {
            "parse": parse_cpus_or_all,
            "help": "PUs measuring at once, one pinned thread each, or 'all' (default: the first "
            "PU)",
            "format": lambda v: v if isinstance(v, str) else format_cpu_list(v),
        },
        "duration": {"format": format_duration},
        "quantum": {
            "default": None,
            "help": "fwq: undisturbed duration of one work quantum (default 100us, longer where "
            "all PUs' quanta would exceed what the store keeps); ftq: the interval (default 1ms)",
            "format": format_duration,
        },
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        cpu, cpus = params.pop("cpu"), params["cpus"]
        if cpu is not None and cpus is not None:
            raise UserError("noise: give cpu= (one PU) or cpus= (several at once), not both")
        if cpus == "all":
            cpus = list(machine.pus)
        elif cpus is None:
            cpus = [cpu] if cpu is not None else machine.cpus_for_threads(1)
        machine.check_cpus(cpus)
        params["cpus"] = cpus
        method = params["method"]
        if params["quantum"] is None:
            params["quantum"] = default_quantum(method, params["duration"], len(cpus))
        quantum, duration = params["quantum"], params["duration"]
        if quantum < SHORTEST_QUANTUM[method]:
            raise UserError(
                f"noise: quantum={format_duration(quantum)} is below the shortest {method} "
                f"quantum, {format_duration(SHORTEST_QUANTUM[method])}"
            )
        if quantum > duration:
            raise UserError(
                f"noise: quantum={format_duration(quantum)} is longer than "
                f"duration={format_duration(duration)}; measure many quanta"
            )
        per_pu = duration / quantum
        if per_pu > MAX_SAMPLES_PER_PU or per_pu * len(cpus) > MAX_SAMPLES:
            raise UserError(
                f"noise: {per_pu:.3g} samples on each of {len(cpus)} PU(s) is more than the "
                f"store keeps ({MAX_SAMPLES_PER_PU:.0e} per PU, {MAX_SAMPLES:.0e} in all); "
                "raise quantum= or shorten duration="
            )
        return params

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        return [
            f"method={params['method']}",
            f"cpus={format_cpu_list(params['cpus'])}",
            f"duration={params['duration']!r}",
            f"quantum={params['quantum']!r}",
        ]

    def label(self, params: dict[str, Any]) -> str:
        """'fwq quantum=100us duration=2s cpu=1 (of cpus=0-1 at once)'."""
        words = [str(params.get("method", "fwq"))]
        for name in ("quantum", "duration"):
            if isinstance(params.get(name), (int, float)):
                words.append(f"{name}={format_duration(params[name])}")
        cpus, cpu = params.get("cpus"), params.get("cpu")
        together = format_cpu_list(cpus) if isinstance(cpus, list) else cpus
        if cpu is not None and isinstance(cpus, list) and len(cpus) > 1:
            words.append(f"cpu={cpu} (of cpus={together} at once)")
        elif cpu is not None:
            words.append(f"cpu={cpu}")
        elif cpus is not None:
            words.append(f"cpus={together}")
        return " ".join(words)

    def warnings(self, document: dict) -> list[WarningRecord]:
        """The samples are a time series of noise, not repetitions of one figure: their spread is
        the measurement, so the coefficient-of-variation warning does not apply. Binding does,
        and a quantum too fine for the timer: an FWQ quantum must span many timer resolutions,
        an FTQ work unit must be much longer than the timer read it ends with."""
        if document.get("not_measurable"):
            return []
        found = placement_warnings(document)
        params, derived = document.get("params") or {}, document.get("derived") or {}
        resolution = (document.get("timer") or {}).get("resolution_ns")
        if params.get("method") == "ftq":
            unit, read = derived.get("unit_ns_calibrated"), derived.get("timer_read_ns")
            if unit and read and read > FTQ_TIMER_SHARE * unit:
                found.append(
                    WarningRecord(
                        Kind.COARSE_QUANTUM,
                        f"coarse: reading the timer ({read:.0f} ns) is over {FTQ_TIMER_SHARE:.0%} "
                        f"of a work unit ({unit:.0f} ns)",
                        "raise quantum= (units are 1/1000 of it)",
                    )
                )
        elif resolution and params.get("quantum", 0) * 1e9 < QUANTUM_RESOLUTIONS * resolution:
            found.append(
                WarningRecord(
                    Kind.COARSE_QUANTUM,
                    f"coarse: a quantum of {params['quantum'] * 1e9:.0f} ns is under "
                    f"{QUANTUM_RESOLUTIONS}x the timer resolution ({resolution:.0f} ns), so small "
                    "detours are not resolved",
                    "raise quantum=",
                )
            )
        return found

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Its duration."""
        return float(params.get("duration") or 0)
