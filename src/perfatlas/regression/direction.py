"""Which way a figure gets worse: a result's metric by its unit (docs/contract.md: every metric
carries one), a finding by its kind (docs/guide/findings.md). None: no direction is worse (a
spectral line's frequency, a count of flagged hosts), so the figure is not compared."""

from __future__ import annotations

TIME_UNITS = frozenset({"s", "ms", "us", "ns", "cycle"})  # a duration: lower is better
# dimensionless metrics, by name: True where higher is better
DIMENSIONLESS = {
    "parallel_efficiency": True,  # parbench base
    "work_per_interval": True,  # noise: work done per quantum
    "comm_fraction": False,  # profile: share of the wall-clock time in MPI
    "runtime_extension": False,  # scenario job: wall / dedicated time
}
PERCENT_SUFFIXES = {"_percent_of_dgemm": True}  # madbench phases against DGEMM
# findings by kind: True where a higher value is better, False where lower is
FINDING_KINDS = {
    "memory.level": False,
    "memory.peak_bandwidth": True,
    "memory.contention": False,
    "memory.numa_penalty": False,
    "memory.loaded_latency": False,
    "cpu.core_to_core_level": False,
    "cpu.peakflops": True,
    "noise.slowdown": False,
    "noise.bsp_slowdown": False,
    "comm.pingpong_latency": False,
    "comm.pingpong_bandwidth": True,
    "cluster.node_slowdown": False,
    "app.spmv.efficiency": True,
    "app.spmv.roofline": True,
    "app.sweep.efficiency": True,
    "app.hydro.cycle": False,
    "scenario.extension": False,
    "scenario.interference": False,
}


def metric_higher_is_better(metric: str, unit: str) -> bool | None:
    """A result's metric: a duration is better lower, a rate (a unit per something: byte/s,
    flop/s, 1/s, instruction/cycle) higher; dimensionless ones by name."""
    if metric in DIMENSIONLESS:
        return DIMENSIONLESS[metric]
    for suffix, higher in PERCENT_SUFFIXES.items():
        if metric.endswith(suffix):
            return higher
    if unit in TIME_UNITS:
        return False
    if "/" in unit:
        return True
    return None


def finding_higher_is_better(kind: str) -> bool | None:
    """A finding's kind (None for a verdict or a frequency: comm.anomaly, noise.line ...)."""
    return FINDING_KINDS.get(kind)
