"""Base data: every kernel variant of the catalog measured alone on the dedicated machine (or a
CPU subset), stored under a run whose suite is "parbench-base". Program synthesis
(perfatlas.scenario.synthesis) picks kernel invocations from these figures to reach a target
runtime and behaviour.

A variant is kernel x working set x stride x threads. Working sets: 240 kB, 2.5 MB and 25 MB
(PARbench's), and half and twice the size of every data cache level this machine has. Strides
1..32 apply to the strided kernels only. Thread counts: 1 and all PUs of the subset, or a list.
Each variant is one `parbench.kernel` measurement through the runner; a variant with T > 1 threads
also stores its parallel efficiency, E = X_T / (T X_1) per sample, X being the throughput in
iterations per second and X_1 the median of the same kernel, working set and stride on one thread,
measured just before it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from statistics import median
from typing import Any

from perfatlas.benchmarks import get
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_cpu_list
from perfatlas.common.warning import WarningRecord
from perfatlas.machine.topology import Machine
from perfatlas.parbench.catalog import kernels
from perfatlas.run.runner import Runner, console, progress_bar
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

SUITE = "parbench-base"
PARBENCH_VOLUMES = (240_000, 2_500_000, 25_000_000)
QUICK_VOLUMES = (240_000,)
CACHE_FACTORS = (0.5, 2.0)


@dataclass(frozen=True)
class Options:
    cpus: list[int] | None = None
    threads: list[int] | None = None
    quick: bool = False
    kernels: str | None = None


def volumes(machine: Machine, quick: bool) -> list[int]:
    """Working sets in bytes, ascending: PARbench's three and those around each cache level."""
    if quick:
        return list(QUICK_VOLUMES)
    sizes = set(PARBENCH_VOLUMES)
    for level in sorted({c["level"] for c in machine.topology.get("caches", [])}):
        size = machine.cache_bytes(level)
        if size:
            sizes.update(int(factor * size) for factor in CACHE_FACTORS)
    return sorted(sizes)


def thread_counts(cpus: list[int], asked: list[int] | None) -> list[int]:
    counts = sorted(set(asked or [1, len(cpus)]))
    for count in counts:
        if not 1 <= count <= len(cpus):
            raise UserError(
                f"--threads {count} does not fit the {len(cpus)} PUs {format_cpu_list(cpus)}"
            )
    return counts


def plan(machine: Machine, options: Options) -> list[dict[str, Any]]:
    """The variants as raw parbench.kernel parameters, one thread before more of the same."""
    cpus = options.cpus or machine.pus
    machine.check_cpus(cpus)
    counts = thread_counts(cpus, options.threads)
    repetition = {"samples": "3", "min_sample_time": "1ms"} if options.quick else {}
    variants = []
    for entry in kernels(options.kernels):
        strides = (1,) if options.quick else entry.strides
        for size in volumes(machine, options.quick):
            for stride in strides:
                for threads in counts:
                    variants.append(
                        {
                            "kernel": entry.name,
                            "bytes": str(size),
                            "stride": str(stride),
                            "threads": str(threads),
                            "cpus": format_cpu_list(cpus[:threads]),
                            **repetition,
                        }
                    )
    return variants


class Efficiency:
    """Adds parallel efficiency to documents of T > 1 threads (Runner.measure's annotate)."""

    def __init__(self) -> None:
        self.one_thread: dict[tuple, float] = {}  # variant -> median iterations/s on 1 thread

    @staticmethod
    def _variant(document: dict) -> tuple:
        params = document["params"]
        return params["kernel"], params["bytes"], params["stride"]

    def __call__(self, document: dict) -> list[WarningRecord]:
        if document.get("not_measurable"):
            return []
        iterations = document["derived"]["iterations_per_pass"]
        throughput = [iterations / runtime for runtime in document["samples"]["runtime_s"]]
        threads = document["params"]["threads"]
        if threads == 1:
            self.one_thread[self._variant(document)] = median(throughput)
            return []
        reference = self.one_thread.get(self._variant(document))
        if reference is None:
            return []
        document["samples"]["parallel_efficiency"] = [x / (threads * reference) for x in throughput]
        document["units"]["parallel_efficiency"] = "1"
        document["derived"]["parallel_efficiency_reference"] = {
            "threads": 1,
            "iterations_per_s": reference,
            "definition": "X_T / (T X_1), X = iterations per second, X_1 the 1-thread median",
        }
        return []


def run_base(store: Store, machine: Machine, options: Options) -> int:
    """Measure every variant with progress under one run; returns the run id."""
    benchmark = get("parbench.kernel")
    planned = [benchmark.resolve(raw, machine) for raw in plan(machine, options)]
    if not planned:
        raise UserError("no kernel variants to measure")
    sizes = ", ".join(f"{size / 1e6:.3g} MB" for size in volumes(machine, options.quick))
    console.print(
        f"parbench base: {len(planned)} kernel variants (working sets {sizes}), database "
        f"{store.path}"
    )
    return measure_variants(store, machine, planned)


def measure_variants(store: Store, machine: Machine, planned: list[dict[str, Any]]) -> int:
    """Measure these resolved parbench.kernel parameter sets in order, with progress, under one
    run of suite SUITE; a T > 1 variant whose 1-thread variant came before it also stores its
    parallel efficiency (Efficiency). Returns the run id."""
    benchmark = get("parbench.kernel")
    runner = Runner(store, machine)
    efficiency = Efficiency()
    with runner.run(SUITE, sys.argv):
        with progress_bar(len(planned)) as step:
            for params in planned:
                step(f"{benchmark.name} {benchmark.label(params)}")
                runner.measure(benchmark, params, annotate=efficiency)
    return runner.data


def base_table(results: list[Result]) -> list[dict[str, Any]]:
    """The base data of a run (its results), one row per variant: what synthesis chooses
    invocations from."""
    rows: dict[tuple, dict[str, Any]] = {}
    for result in results:
        if result.benchmark != "parbench.kernel":
            continue
        p = result.params
        key = (p["kernel"], p["bytes"], p["stride"], p["threads"])
        row = rows.setdefault(
            key,
            {
                "kernel": p["kernel"],
                "bytes": p["bytes"],
                "stride": p["stride"],
                "threads": p["threads"],
                "write_fraction": result.document["derived"].get("write_fraction"),
                "hardware_counters": result.document["derived"].get("hardware_counters"),
            },
        )
        row[result.metric] = result.median
    return list(rows.values())


def print_base(data: RunData) -> None:
    """A few lines: what was stored, where the counters stand, how to look at it."""
    from perfatlas.common.units import format_value

    run_id = data.run["id"]
    rows = base_table(data.launches)
    counters = {row["hardware_counters"] for row in rows if row.get("hardware_counters")}
    fastest = sorted(rows, key=lambda row: -(row.get("bandwidth_Bps") or 0))[:3]
    print(f"run {run_id}: {len(rows)} kernel variants stored in {data.source} (suite {SUITE})")
    for row in fastest:
        print(
            f"  {row['kernel']} {row['bytes'] / 1e6:.4g}MB stride {row['stride']} "
            f"{row['threads']} thread(s): {format_value(row.get('bandwidth_Bps'), 'byte/s')}, "
            f"{format_value(row.get('runtime_s'), 's')} per pass"
        )
    for line in sorted(counters):  # "no hardware counters: why", or what counted
        print(line if line.startswith("no hardware counters") else f"hardware counters: {line}")
    print(f"all of it: perfatlas show {run_id}")
