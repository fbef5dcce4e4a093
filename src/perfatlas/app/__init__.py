"""perfatlas.app: the application proxies (app.spsolve, app.spmv, app.madbench, app.sweep,
app.hydro): their benchmarks, their models and analyses of the stored results, findings and
report sections. It may import every layer below the domains and, of the domains,
perfatlas.comm (the MPI proxies are MpiBenchmarks of perfatlas.comm.mpi; app.hydro's model
reads the stored comm atlas).

  analysis_hydro.py     app.hydro: the SAGE cycle-time model against measured weak scaling
  analysis_madbench.py  app.madbench: phases, share of the DGEMM rate, bytes, correctness
  analysis_points.py    results grouped into points; phase times stacked per point
  analysis_spmv.py      app.spmv: predicted (E1, E2) against measured efficiency; roofline
  analysis_spsolve.py   app.spsolve: phases per configuration, facts of the factorization
  analysis_sweep.py     app.sweep: KBA weak scaling against the pipeline model
  bench_hydro.py        app.hydro: a SAGE-style Eulerian hydrodynamics proxy
  bench_madbench.py     app.madbench: the MADbench CMB power-spectrum proxy
  bench_spmv.py         app.spmv: sparse matrix-vector products with remote access
  bench_spsolve.py      app.spsolve: a sparse SPD direct solve (CHOLMOD, MUMPS)
  bench_sweep.py        app.sweep: a Sweep3D-style discrete-ordinates wavefront sweep
  findings_apps.py      findings: the proxies' models against measurement
  proxy_figures.py      what the proxies' sections share: time cells, stacked phase bars
  section_hydro.py      section: app.hydro
  section_madbench.py   section: app.madbench
  section_spmv.py       section: app.spmv
  section_spsolve.py    section: app.spsolve
  section_sweep.py      section: app.sweep
  sparse_matrix.py      the sparse proxies' matrix (file or generated) and threads check
"""
