"""perfatlas.cli: the command line, the top layer: the parser assembled from the command groups
(the commands_*.py modules, each adding its own commands and options), the options several
commands share, `perfatlas doctor`, and main. It may import every subsystem; only
perfatlas.__main__ imports it.

  commands_interference.py  parbench and scenario: base data, scenarios, the matrix
  commands_machine.py       topo and doctor
  commands_measure.py       run, measure and sweep: measuring through the runner
  commands_profile.py       profile: a program run under perfatlas-ipm
  commands_regression.py    check and baseline
  commands_results.py       list, show, report, compare and export: reading the store
  doctor.py                 `perfatlas doctor`: what can be measured here, and why not
  entry.py                  the parser assembled from the command groups, and main
  options.py                shared options: the store, output files, launch, plan, remeasure
"""
