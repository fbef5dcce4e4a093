"""perfatlas.launch: starting one native program: locating the executables, reading their
parameter tables, the launchers (local, mpirun, slurm), the documents of a launch as they
arrive, their validation against the contract (docs/contract.md), the ISA guard that explains
a SIGILL, and the optional parts of the native build. It imports perfatlas.common only.

  build_parts.py      the optional parts of this native build (MPI, CHOLMOD ...), and why not
  contract.py         validation of native result documents; warnings about their placement
  document_stream.py  the documents of a launch cut from its standard output as they arrive
  isa.py              this CPU's name and extensions, and what a SIGILL means
  launchers.py        the launchers registered by name (local, mpirun, slurm); launch options
  native.py           locating and running the native executables
  native_params.py    the parameter table an executable declares (`pa-x --params`)
  per_node.py         a node-level executable on every node at once, one document per host
  sbatch_values.py    checks and quoting of what reaches a batch script
"""
