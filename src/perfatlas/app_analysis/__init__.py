"""What the stored results of the application proxies say, computed once for the report sections
and the terminal summary: one module per proxy (spsolve, madbench, spmv, sweep) over the shared
grouping and phase stacking of points.py. Nothing here draws."""
