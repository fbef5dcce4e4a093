"""Findings as data (schema perfatlas.findings/1): what each analysis concludes about a run, typed
(kind, subject, value with its interval, unit, method, the stored results it came from), stored
with the run, shown by `perfatlas show`, exported, printed by `perfatlas measure` and drawn by the
report (docs/guide/findings.md).

  model     the Finding and its Interval
  registry  @finding_source: each domain package's findings_*.py registers its adapters
  compute   a run's findings, from its stored results (deterministic), and their document
  render    the terminal table and the findings CSV
  findings.schema.json   the JSON Schema of the document
"""
