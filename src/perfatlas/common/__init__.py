"""perfatlas.common, the lowest layer: what every subsystem shares: the user-facing error, units,
statistics, typed warnings, the one anomaly rule, safe names, the reader and writer of
user-named files, the progress console, work in the background, and the discovery of the
modules that register themselves. It imports no other subsystem (discovery imports the
registering modules by name at run time).

  anomaly.py       the one rule that makes a figure an anomaly, and how re-measurement settles it
  background.py    work in a thread while the caller waits, its output held, at low priority
  discovery.py     imports every <kind>_* module of perfatlas's packages so registries fill
  errors.py        UserError: one sentence to the user and a non-zero exit
  progress.py      the console on standard error and the progress bar of a run (rich)
  safe_names.py    checks of names and paths that become file names or script lines
  signal_names.py  the name of a signal number: SIGSEGV, SIGRTMIN+k, "signal N"
  stats.py         medians with order-statistic intervals, warnings, bootstrap ratios
  text_file.py     the reader of user-named text and TOML files; the writer of output files
  units.py         parsing and formatting of sizes, durations and CPU lists, with their limits
  warning.py       warnings as typed records: kind, metric, message and fix
"""
