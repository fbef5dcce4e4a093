"""PARbench-style multiprogramming scenarios (issue 7): programs synthesized from the parbench base
data (synthesis), scenarios declared in TOML (scenario), run with every job its own process and
measured from /proc (execute, monitor), accounted and summarized like PARbench (accounting),
stored (storage) and the pairwise interference matrix of kernel classes (matrix)."""
