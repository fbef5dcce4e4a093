"""perfatlas.cluster: multi-host runs: the `hosts` (mpirun with a hostfile) and `slurm` executors,
Slurm allocations and batch scripts, commands run on a compute node, and the node asymmetry
analysis with its findings, report section and terminal view. Compute nodes leave files in a
shared job folder, never SQLite; the front end imports them into its store. It may import every
layer below the domains and, of the domains, perfatlas.noise (node asymmetry of noise figures).

  analysis_nodes.py      nodes that differ from the others: per-node slowdown, the rule
  collect.py             a finished step read back from its folder: documents, or why none
  command_job.py         one perfatlas command as a Slurm job of its own
  executor_hosts.py      `hosts`: mpirun with a hostfile, no scheduler
  executor_slurm.py      `slurm`: every measurement a step of one Slurm job
  findings_nodes.py      findings: each node's slowdown and verdict; the nodes' judge
  front_end.py           the front end of a Slurm run: submit, watch, import, mark the run
  hosts.py               node-level benchmarks on every host of a hostfile, through mpirun
  job.py                 the steps of a run in one allocation, and their batch script
  section_nodes.py       section: per-node figures, slowdown, MPI results by link
  slurm.py               the scheduler's commands: sinfo, sbatch, squeue, scontrol, sacct, scancel
  views_nodes.py         terminal view: per-node figures and the nodes that differ
"""
