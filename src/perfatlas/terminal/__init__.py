"""perfatlas.terminal: the terminal framework: the console, tables of runs, results, warnings and
findings, and the summary printed after a run, made of the tables the domains register with
@summary_table in summary_*.py modules (perfatlas.common.discovery finds them). It may import
every layer up to perfatlas.run, is independent of perfatlas.report, and imports no domain.

  findings_table.py    a run's findings as a terminal table
  run_summary.py       the summary after a run (the registered tables), and the topology
  run_views.py         the console; tables of results, warnings and runs
  summary_registry.py  @summary_table: the registry of the domains' terminal tables
"""
