"""perfatlas.plan: what a run will measure, decided before anything runs: suites, plans of every
launch checked against the machine, their wall-time estimates, planned measurements, and the
sweep grid of thread counts x binding x memory policy. It may import common, launch, machine,
store and benchmarks. The shipped suites are the TOML files of perfatlas/suites/.

  measurement_plan.py  Plan: every launch of a run or sweep, checked to fit (--plan)
  planned.py           Planned: one measurement, wherever it runs; pooling of repeated launches
  suite.py             suites: TOML files of benchmarks and parameter grids, checked and expanded
  sweep_grid.py        perfatlas sweep: threads x binding x memory policy, launches interleaved
  time_estimate.py     the estimated wall time of one launch: start-up and points' estimates
"""
