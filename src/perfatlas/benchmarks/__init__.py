"""The benchmark registry: importing this package registers every benchmark module."""

from perfatlas.benchmarks import mem_bandwidth, mem_contention, mem_latency  # noqa: F401
from perfatlas.benchmarks.base import Benchmark, all_benchmarks, get, register  # noqa: F401
