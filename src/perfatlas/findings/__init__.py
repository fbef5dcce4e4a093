"""perfatlas.findings: the Finding framework: findings as data (schema perfatlas.findings/1), each
a typed conclusion of an analysis about a run with its interval, method and source results,
computed from the stored results, stored with the run, and rendered as text and CSV
(docs/guide/findings.md). It may import every layer up to perfatlas.plan, and no domain: domains
register their sources with @finding_source in findings_*.py modules, found by discovery.

  compute.py            a run's findings: computed by every source, or read back as stored
  finding_sources.py    @finding_source: the registry of the domains' finding sources
  model.py              Finding and Interval, and helpers that make them from results
  render.py             findings as text cells and as CSV
  findings.schema.json  the JSON Schema of the findings document
"""
