"""The benchmark registry: importing this package registers every benchmark module."""

from perfatlas.benchmarks import (  # noqa: F401
    app_spsolve,
    comm_collectives,
    comm_complement,
    comm_distance,
    comm_hotspot,
    comm_pingpong,
    comm_rma,
    mem_bandwidth,
    mem_contention,
    mem_latency,
    noise,
)
from perfatlas.benchmarks.base import Benchmark, all_benchmarks, get, register  # noqa: F401
