"""perfatlas.store: the SQLite store of runs, results, profiles and scenarios, and the result
model RunData: one run read once per command and handed to everything that reads it (findings,
terminal, report, cluster views, regression checks); nothing above reads a run's results
again. It may import perfatlas.common, perfatlas.launch and perfatlas.machine.

  database.py    Store: SQLite in WAL mode, read-only use, salvage of damaged files, queries
  schema.py      the tables, the schema version, the migrations from older databases
  result.py      Result: one metric of one measurement; a measurement's launches pooled
  run_data.py    RunData: one run as read from the store, once per command
  run_import.py  runs of another database (a compute node's copy) copied into this one
"""
