"""perfatlas.regression: perfatlas check and perfatlas baseline: a run's figures (results and
findings) held against a baseline run's with their intervals (docs/guide/regression-checks.md),
re-measurement of what regressed, and the verdicts as a table and as JUnit XML. It may import
every lower layer, the domains included, and is independent of perfatlas.export.

  check.py        perfatlas check: a run against a named baseline or a run id
  direction.py    which way a figure gets worse: by a metric's unit, a finding's kind
  junit.py        the verdicts as JUnit XML for CI systems
  remeasure.py    re-measurement of regressed figures into a new run (--remeasure)
  run_figures.py  the figures of a run that a check compares
  table.py        the verdict table in the terminal, and as words
  verdicts.py     each figure against its baseline: ratio, interval, verdict
"""
