"""perfatlas.cpu: the cores: the peak floating-point rate (cpu.peakflops), core-to-core latency
(cpu.core_to_core) and the roofline drawn from stored results, with their findings, report
sections and terminal tables. It may import every layer below the domains and, of the domains,
perfatlas.mem (the memory plateau test) and perfatlas.app (the proxies' declared counts).

  analysis_core_to_core.py  the core-to-core matrix, its latency levels and CPU groups
  analysis_peakflops.py     peak rates per precision, ISA and thread count; nominal clock
  analysis_roofline.py      the roofline (Williams et al. 2009): ceilings, ridge, proxy points
  bench_core_to_core.py     cpu.core_to_core: one-way cache-line latency between CPU pairs
  bench_peakflops.py        cpu.peakflops: peak flop rate per precision and ISA, 1..N threads
  findings_cpu.py           findings: peak rates and core-to-core latency levels
  section_core_to_core.py   section: the core-to-core heatmap and its levels
  section_peakflops.py      section: flop rate against thread count, per-core rate
  section_roofline.py       section: the roofline plot and its tables
  summary_core_to_core.py   terminal table: core-to-core latency levels
  summary_peakflops.py      terminal table: peak flop rates
  summary_roofline.py       terminal table: peaks, bandwidth, ridge point, proxy points
"""
