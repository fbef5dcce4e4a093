"""The base data a scenario needs, measured first where this machine has none yet.

A job needs its kernel variants at its thread count: the kernels and working sets of its mix, or
its candidate kernels (default: the whole catalog) at its candidate working sets (default:
PARbench's 240 kB, 2.5 MB and 25 MB), stride 1. What no complete parbench-base run of this
machine holds is measured like `perfatlas parbench base --quick` measures (3 samples of at least
1 ms after warm-up), under a run of its own with suite "parbench-base".
"""

from __future__ import annotations

from perfatlas.benchmarks import get
from perfatlas.common.progress import console
from perfatlas.common.units import format_cpu_list
from perfatlas.machine.topology import Machine
from perfatlas.parbench.base_data import SUITE, measure_variants
from perfatlas.parbench.catalog import catalog
from perfatlas.scenario.scenario import DEFAULT_SIZES, Job, Scenario
from perfatlas.scenario.variants import stored_variants
from perfatlas.store.database import Store

QUICK = {"samples": "3", "min_sample_time": "1ms"}


def needed(job: Job) -> set[tuple[str, int, int, int]]:
    """(kernel, bytes, stride, threads) of every variant the job may be made of."""
    if job.mix:
        return {(part.kernel, part.bytes, part.stride, job.threads) for part in job.mix}
    kernels = job.kernels or tuple(k.name for k in catalog())
    sizes = job.sizes or DEFAULT_SIZES
    return {(kernel, size, 1, job.threads) for kernel in kernels for size in sizes}


def ensure_base(store: Store, machine: Machine, scenario: Scenario) -> int | None:
    """Measure the missing variants of the scenario's jobs; the new run's id, or None."""
    wanted = set().union(*(needed(job) for job in scenario.jobs))
    return ensure_variants(store, machine, wanted, list(scenario.cpus), f"scenario {scenario.name}")


def ensure_variants(
    store: Store, machine: Machine, wanted: set[tuple], cpus: list[int], what: str
) -> int | None:
    """Measure those of `wanted` (kernel, bytes, stride, threads) that no base run holds, the
    threads on the first PUs of `cpus`; the new run's id, or None when nothing was missing."""
    known = stored_variants(store, machine.fingerprint)
    missing = sorted(wanted - set(known), key=lambda key: (key[3], key[0], key[1], key[2]))
    if not missing:
        return None
    benchmark = get("parbench.kernel")
    planned = [
        benchmark.resolve(
            {
                "kernel": kernel,
                "bytes": str(size),
                "stride": str(stride),
                "threads": str(threads),
                "cpus": format_cpu_list(cpus[:threads]),
                **QUICK,
            },
            machine,
        )
        for kernel, size, stride, threads in missing
    ]
    console.print(
        f"{what}: measuring {len(planned)} missing kernel variants of the base data first "
        f"(suite {SUITE})"
    )
    return measure_variants(store, machine, planned)
