"""perfatlas.scenario: PARbench-style multiprogramming scenarios, declared in TOML: programs
synthesized from the parbench base data, every job run as its own process and watched through
/proc, accounted and summarized like PARbench and stored; and the pairwise interference matrix
of kernel classes. It may import every layer below the domains and, of the domains,
perfatlas.parbench (catalog, base data). The shipped scenarios are perfatlas/scenarios/*.toml.

  accounting.py         per-job figures, the accounting check and the PARbench summary
  cell_verdicts.py      the verdict of an interference-matrix cell, without the measuring code
  ensure_base.py        the base data a scenario needs, measured first where missing
  execute.py            `perfatlas scenario run`: synthesis, dedicated runs, jobs side by side
  findings_scenario.py  findings: runtime extensions and interference-matrix cells
  locate.py             the line a TOML key is written on, for errors about its value
  matrix.py             the interference matrix: pairwise co-run slowdown of kernel classes
  monitor.py            a running job's schedstat and CPU times, sampled from /proc
  nnls.py               non-negative least squares (Lawson and Hanson's active-set method)
  scenario.py           scenarios in TOML, parsed and checked before anything runs
  section_scenario.py   section: Gantt timelines, summary, jobs, programs, the matrix
  side_by_side.py       job processes run side by side, each measured while it runs
  synthesis.py          program synthesis: kernel lines reaching a target runtime and behaviour
  variants.py           kernel variants as synthesis sees them, from the stored base data
  views_scenario.py     terminal output of `scenario run` and `scenario matrix`
"""
