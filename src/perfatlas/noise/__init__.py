"""OS noise: the fixed-work-quantum benchmark, its analysis, its report section and summary table.

bench_noise     the benchmark (noise)
analysis        slowdown, detours, spectrum and the cost at scale, from the raw samples
series          a run's noise results as per-PU analyses (section and summary share it)
section_noise   the report section;  summary_noise  the terminal table
"""
