"""PARbench-style interference engine: the kernel catalog of native/parbench, its base data
(every kernel variant measured alone) and, later, synthesis and execution of programs."""
