"""perfatlas.machine: this machine: its hwloc topology (read through the pa-topology program),
run context and fingerprint, its caches, the orders in which threads take PUs, and placement:
the thread binding and memory policy of a launch and what the process obtained. It may import
perfatlas.common and perfatlas.launch.

  caches.py     the caches hwloc reports, one per level as one thread sees them
  cpu_order.py  the close and spread orders of PUs, from the topology document alone
  graph_partition.py a graph cut into parts of given sizes (METIS, libmetis)
  link_class.py a CPU's place (core group, package, NUMA node), the link class of two places
  placement.py  thread binding and memory policy of a launch, and what it obtained
  topology.py   Machine: the hwloc topology, run context and fingerprint
"""
