/* Thread placement through hwloc, read back from the kernel after it is applied. */
#ifndef PA_AFFINITY_H
#define PA_AFFINITY_H

#include <hwloc.h>

/* The machine's topology, loaded once by whichever thread asks first; read-only after that. */
hwloc_topology_t pa_topology(void);
void pa_topology_load(void);

/* Line size of the first-level data cache (64 bytes where hwloc does not know). */
unsigned pa_cache_line_bytes(void);

/* Fails with status 2 and one sentence unless every cpu is a PU of this machine. */
void pa_cpus_validate(const int *cpus, int ncpus);

/* Binds the calling thread to the PU with OS index `cpu` (strictly), then writes the CPU set the
 * kernel actually applied to the thread as a list ("0", "0-1") into `applied`. */
void pa_pin_self(int cpu, char *applied, size_t size);

/* Inside an OpenMP parallel region meant to have `expected` threads: this thread's number, after
 * checking that OpenMP gave the team asked for (else status 2, naming OMP_THREAD_LIMIT). */
int pa_team_thread(int expected);

#endif
