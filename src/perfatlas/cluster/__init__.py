"""Cluster execution: Slurm allocations and multi-host runs (docs/architecture.md, Launchers).

Compute nodes write JSON files into a job folder the front end can read; the front end imports
them into SQLite as they arrive (never SQLite from compute nodes).

  per_node.py   a node-level executable on every node at once, one document per host
  hosts.py      the same through mpirun with a hostfile (sites without Slurm)
  slurm.py      the scheduler's commands: sinfo, sbatch, squeue/scontrol/sacct, scancel
  job.py        the steps of a run and the batch script that runs them in one allocation
  collect.py    reading a step's folder back: documents, or why they are missing
  front_end.py  submit (or run inside an allocation), show progress, import, mark the run
"""
