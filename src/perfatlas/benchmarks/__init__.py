"""perfatlas.benchmarks: the Benchmark framework: what a benchmark declares (its executable, the
parameters built from the executable's own table, how it launches) and the registry. Benchmarks
are bench_*.py modules of the domain packages, placed by the first part of their name: mem.latency
in perfatlas.mem, app.sweep in perfatlas.app, noise in perfatlas.noise, example.sum in
perfatlas.example; get() and all_benchmarks() import them first (perfatlas.common.discovery).
It may import common, launch, machine and store, and no domain.

  benchmark.py       Benchmark, Param and the registry: @register, get, all_benchmarks
  prepare_launch.py  the one place a benchmark, its parameters and a placement become a launch
  result_label.py    a result's parameters as its benchmark labels them, for tables and plots
  time_model.py      the shapes of the benchmarks' time estimates (Benchmark.estimate)
"""

from perfatlas.benchmarks.benchmark import Benchmark, all_benchmarks, get, register  # noqa: F401
