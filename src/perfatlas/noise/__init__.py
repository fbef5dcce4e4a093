"""perfatlas.noise: OS and machine noise: the noise benchmark (fixed work or fixed time quantum,
one pinned thread per PU), its analysis (slowdown, detours, spectrum, the bulk-synchronous cost
at scale), its findings, report section and terminal table. It may import every layer below
the domains and no other domain (perfatlas.cluster reads its figures).

  analysis_noise.py  slowdown, detours, Welch spectrum and the BSP model, from raw samples
  bench_noise.py     noise: the FWQ / FTQ benchmark
  findings_noise.py  findings: slowdown per PU, strongest spectral lines, BSP cost
  section_noise.py   section: slowdown, detours, spectrum, BSP cost, traces
  series_noise.py    a run's noise results as per-PU analyses (section and table)
  summary_noise.py   terminal table: slowdown, detours and BSP cost per PU
"""
