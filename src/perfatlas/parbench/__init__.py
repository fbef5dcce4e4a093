"""perfatlas.parbench: the PARbench-style kernel catalog of native/parbench (each kernel's bytes
and flops as kernels.def states them), the parbench.kernel benchmark that measures one variant
alone, and the base data: every variant measured alone, stored under suite "parbench-base",
from which perfatlas.scenario synthesizes programs. It may import every layer below the domains
and no other domain.

  base_data.py     the base data: variants measured alone, parallel efficiency, the table
  bench_kernel.py  parbench.kernel: one variant (kernel, working set, stride, threads)
  catalog.py       the kernel catalog, read from `pa-parbench mode=list`
"""
