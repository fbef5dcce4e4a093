"""perfatlas characterizes parallel machines and profiles parallel programs, in subsystems layered
lowest first: common < launch < machine < store < benchmarks < plan < findings < run < report,
terminal < the domains < regression, export < cli. A module imports its own subsystem and lower
layers only; one layer's subsystems are independent but for the domain peers cpu->mem, cpu->app,
app->comm, cluster->noise, scenario->parbench. Frameworks import no domain: the domains register
their bench_*, section_*, summary_*, findings_*, executor_* modules (perfatlas.common.discovery).

  __main__.py   `python -m perfatlas`: runs perfatlas.cli.entry.main
  common/       errors, units, statistics, warnings, the anomaly rule, discovery, console
  launch/       starting one native program: executables, parameters, launchers, documents
  machine/      this machine: topology, caches, CPU orders, binding and memory policy
  store/        the SQLite store and the result model RunData
  benchmarks/   the Benchmark framework and its registry
  plan/         suites, plans, time estimates, planned measurements, sweep grids
  findings/     the Finding framework: conclusions of analyses as data
  run/          the runner, its executors, re-measurement of anomalies
  report/       the HTML report framework (one self-contained file)
  terminal/     the terminal framework: tables and the summary after a run
  mem/          domain: memory latency, bandwidth, contention, loaded latency, NUMA matrix
  cpu/          domain: peak flop rate, core-to-core latency, the roofline
  noise/        domain: OS and machine noise
  comm/         domain: MPI communication
  app/          domain: the application proxies (spsolve, spmv, madbench, sweep, hydro)
  parbench/     domain: the PARbench kernel catalog and its base data
  example/      domain: the template benchmark example.sum
  profile/      domain: `perfatlas profile` under libperfatlas-ipm.so
  scenario/     domain: multiprogramming scenarios and the interference matrix
  cluster/      domain: multi-host runs (hostfile, Slurm) and node asymmetry
  experiments/  domain: parameter sweeps and the comparison of two runs
  regression/   perfatlas check and baseline: a run against a baseline
  export/       a run as JSON or CSV, and a calibrated hwloc topology
  cli/          the command line
  suites/       the shipped suites (TOML), read by perfatlas.plan.suite
  scenarios/    the shipped scenarios (TOML), read by perfatlas.scenario.scenario
"""

__version__ = "0.1.0"
