"""perfatlas.run: the runner and its executors: a run opened and closed in the store, its planned
measurements handed to an executor that launches them and stores each document as it arrives,
and anomalous figures re-measured before they are reported. The executor registry imports no
domain: executor_*.py modules register with @register_executor (local here; hosts and slurm in
perfatlas.cluster). It may import every layer up to perfatlas.findings.

  executor.py             Executor, the executor registry and executor_for
  elsewhere.py            a command (scenario, profile) run on a node, its runs imported here
  executor_local.py       `local`: every measurement a process of this machine
  remeasure_anomalies.py  re-measurement of groups the anomaly rule leaves unsettled
  runner.py               Runner: opens the run, hands measurements to the executor, closes the run
  series_points.py        where one series launch stands, point by point, as documents arrive
"""
