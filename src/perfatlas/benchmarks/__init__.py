"""The benchmark framework (base.py) and its registry: each benchmark is a module bench_*.py in the
package of its domain (memory/, noise/, comm/, apps/, parbench/; bench_example_sum.py here) that
registers its classes with @register; get() and all_benchmarks() import them all first
(perfatlas.discovery), so there is no list to keep by hand."""

from perfatlas.benchmarks.base import Benchmark, all_benchmarks, get, register  # noqa: F401
