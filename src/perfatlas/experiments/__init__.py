"""perfatlas.experiments: experiments over stored runs: parameter sweeps (perfatlas sweep: speedup,
parallel efficiency, run-to-run variability) and the comparison of two runs (perfatlas compare),
with their report sections and terminal tables; the sweep grid itself is planned by
perfatlas.plan.sweep_grid. It may import every layer below the domains and no other domain.

  analysis_comparison.py   run B against run A: point and benchmark ratios with intervals
  analysis_param_sweep.py  a sweep's speedup, efficiency, variability; its terminal table
  section_comparison.py    section: two runs compared (perfatlas compare --report)
  section_param_sweep.py   section: sweeps
  views_comparison.py      terminal table of perfatlas compare
"""
