"""perfatlas.comm: MPI communication: the comm.* benchmarks (pingpong, allreduce, barrier, rma,
distance, complement, hotspot), the analysis of anomalous ranks, pairs and links and of how
collectives grow, their findings, report sections and terminal tables. It may import every
layer below the domains and no other domain (perfatlas.app uses its MPI benchmark base and
the comm atlas, perfatlas.profile the comm atlas).

  analysis_comm.py        anomalous ranks, pairs, senders and hosts; growth of collectives
  atlas_rows.py           the stored comm results an atlas is made of, the latest run each
  bench_collectives.py    comm.allreduce and comm.barrier against the process count
  bench_complement.py     comm.complement: rank i with rank np-1-i, all pairs at once
  bench_distance.py       comm.distance: rank 0 to every other rank, one pair at a time
  bench_hotspot.py        comm.hotspot: k senders stream to one receiver
  bench_pingpong.py       comm.pingpong: point-to-point latency and bandwidth by size
  bench_rma.py            comm.rma: MPI-3 one-sided get, put and shared-memory latency
  comm_atlas.py           a machine's stored comm figures per link class, interpolated: the
                          one module the models predicting communication time share
  curve_interpolation.py  a message's time off a measured curve (log-log, extrapolated)
  findings_comm.py        findings: ping-pong, anomalies, suspect hosts, collective growth
  host_links.py           pairs of hosts measured alone; a star model; slow hosts' links
  mpi.py                  what the MPI benchmarks share: MpiBenchmark, np, the mpirun launcher
  section_collectives.py  section: collectives against process count, growth check
  section_p2p.py          section: point-to-point latency and bandwidth
  section_patterns.py     section: distance, hotspot, complement and their anomalies
  section_rma.py          section: one-sided latency
  series_comm.py          a run's comm results as series and figures (sections and tables)
  summary_comm.py         terminal tables: latency, bandwidth, collectives, RMA, anomalies
"""
