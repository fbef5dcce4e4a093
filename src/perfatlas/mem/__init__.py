"""perfatlas.mem: memory, measured, analysed and drawn: the mem.* benchmarks (latency, bandwidth,
contention, loaded latency, the NUMA matrix), the probe of the effective last-level cache, their
analyses, findings, report sections and terminal tables. It may import every layer below the
domains and no other domain (perfatlas.cpu and perfatlas.export read its analyses).

  analysis_levels.py          cache levels from a latency curve (optimal partitioning, BIC)
  analysis_loaded_latency.py  loaded-latency curves and their saturation point
  analysis_numa.py            the NUMA matrix and each remote cell's penalty against local
  bench_bandwidth.py          mem.bandwidth: cachebench operations and STREAM, 1..N threads
  bench_contention.py         mem.contention: one task's figures while another core streams
  bench_latency.py            mem.latency: dependent-load pointer chase
  bench_loaded_latency.py     mem.loaded_latency: latency while other cores inject traffic
  bench_numa_matrix.py        mem.numa_matrix: latency and read bandwidth, every node pair
  cache_probe.py              the effective last-level cache, from a short latency probe
  findings_memory.py          findings: levels, peak bandwidth, contention, NUMA, loaded latency
  section_bandwidth.py        section: bandwidth, one panel per operation
  section_contention.py       section: contention against running alone
  section_latency.py          section: latency curves and the detected levels beside hwloc's
  section_loaded_latency.py   section: loaded latency against injected bandwidth
  section_numa_matrix.py      section: the NUMA matrix and its penalties
  series_memory.py            memory results as series and derived figures (sections and tables)
  summary_loaded_latency.py   terminal table: loaded latency per mix
  summary_memory.py           terminal tables: cache levels, peak bandwidth, contention
  summary_numa.py             terminal line: local NUMA figures and the worst remote penalty
"""
