"""Estimated wall time of one launch (perfatlas run --plan): its start-up, and the points of its
measurement as the benchmark estimates them (Benchmark.estimate; the shapes they share are
perfatlas.benchmarks.time_model).

Every launch costs a fixed start-up (fork, exec, loading the hwloc topology, writing and
validating the JSON, storing it): LAUNCH_S, measured on the two-core development VM over the
quick suite's launches; an mpirun launch adds MPI start-up (MPI_Init of every rank), MPI_START_S.
A size series (bytes=A,B,...) is one launch: the start-up once, its points' estimates summed. A
launch the benchmark declares not measurable here (remote NUMA on one node) costs LAUNCH_S.
"""

from __future__ import annotations

from typing import Any

from perfatlas.benchmarks import get
from perfatlas.benchmarks.benchmark import series_points
from perfatlas.machine.topology import Machine

LAUNCH_S = 0.35  # per launch, measured here (see the module docstring)
MPI_START_S = 0.6  # mpirun + MPI_Init of a few ranks on one host, measured here


def launch_seconds(name: str, params: dict[str, Any], machine: Machine, mpi: bool) -> float:
    """The estimated wall time of one launch of benchmark `name` with resolved `params`."""
    benchmark = get(name)
    if benchmark.unmeasurable(params, machine):  # answered without running the executable
        return LAUNCH_S
    # a size series is one launch that measures every point in turn (docs/sizing.md)
    body = sum(benchmark.estimate(point, machine) for point in series_points(params, benchmark))
    return LAUNCH_S + (MPI_START_S if mpi else 0.0) + body
