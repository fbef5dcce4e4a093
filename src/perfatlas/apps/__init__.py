"""The application proxies (app.*): benchmarks, what their stored results say, and their sections.

bench_*           the benchmarks: spsolve, spmv, madbench, sweep;  sparse_matrix  their inputs
analysis_*        one module per proxy (spsolve, madbench, spmv, sweep) over the shared grouping
                  and phase stacking of analysis_points; nothing there draws
figures           what the sections share: time and figure cells, the stacked phase bars
section_*         the report sections: spsolve, spmv, madbench, sweep
"""
