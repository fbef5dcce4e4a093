"""MPI communication: the comm.* benchmarks, their analysis, report sections and summary tables.

mpi             what the MPI benchmarks share: np, the mpirun launcher, labels
bench_*         the benchmarks: pingpong, collectives, rma, distance, complement, hotspot
analysis        links, anomalies and growth from the stored results
series          a run's comm results as series and figures (sections and summary share it)
section_*       the report sections: p2p, collectives, rma, patterns
summary_comm    the terminal tables
"""
