"""Which way a figure gets worse: a result's metric by its unit (docs/contract.md: every metric
carries one), a finding by what its source declares for its kind (docs/guide/findings.md). None:
no direction is worse (a spectral line's frequency, a count of flagged hosts), so the figure is
not compared."""

from __future__ import annotations

from perfatlas.findings.finding_sources import Better

TIME_UNITS = frozenset({"s", "ms", "us", "ns", "cycle"})  # a duration: lower is better
# dimensionless metrics, by name: True where higher is better
DIMENSIONLESS = {
    "parallel_efficiency": True,  # parbench base
    "work_per_interval": True,  # noise: work done per quantum
    "comm_fraction": False,  # profile: share of the wall-clock time in MPI
    "runtime_extension": False,  # scenario job: wall / dedicated time
}
PERCENT_SUFFIXES = {"_percent_of_dgemm": True}  # madbench phases against DGEMM


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


class UnknownKind(LookupError):
    """A stored finding of a kind no source of this perfatlas declares (another version's)."""


def finding_higher_is_better(kind: str, declared: dict[str, Better]) -> bool | None:
    """A finding's kind, as its source declares it (`declared`: finding_sources.declared_kinds):
    None for a verdict, a count or a frequency (comm.anomaly, noise.line ...)."""
    better = declared.get(kind)
    if better is None:
        raise UnknownKind(kind)
    return {Better.HIGHER: True, Better.LOWER: False, Better.NEITHER: None}[better]
