"""Memory: latency, bandwidth, contention and the NUMA matrix, measured, analysed and drawn.

bench_latency, bench_bandwidth, bench_contention, bench_numa_matrix   the benchmarks (mem.*)
cache_probe       the effective last-level cache, from a short latency probe (sizes the suites)
analysis_levels   the cache levels a latency curve shows
analysis_numa     the NUMA matrix against the firmware's distances
series            a run's memory results as series and figures (sections and summary share it)
section_*         the report sections: latency, bandwidth, contention, numa_matrix
summary_*         the terminal tables: memory (levels, bandwidth, contention), numa
"""
