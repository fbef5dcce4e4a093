"""The benchmark registry: importing this package registers every benchmark module."""

from perfatlas.benchmarks import (  # noqa: F401
    app_madbench,
    app_spmv,
    app_spsolve,
    app_sweep,
    comm_collectives,
    comm_complement,
    comm_distance,
    comm_hotspot,
    comm_pingpong,
    comm_rma,
    mem_bandwidth,
    mem_contention,
    mem_latency,
    mem_numa_matrix,
    noise,
    parbench_kernel,
)
from perfatlas.benchmarks.base import Benchmark, all_benchmarks, get, register  # noqa: F401
