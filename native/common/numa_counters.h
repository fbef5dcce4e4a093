/* Local and remote DRAM accesses of the whole process, from the CPU's hardware counters, for the
 * fraction of memory accesses that cross NUMA nodes (docs/contract.md, "execution").
 *
 * Which events count them depends on the CPU: one table in numa_counters.c, looked up by the
 * vendor, family and model of /proc/cpuinfo. They are counted through PAPI where the build found
 * it and PAPI's libpfm4 knows the events, otherwise through perf_event_open with the table's raw
 * encodings. Counting starts in pa_numa_counters_start on the calling thread with inheritance, so
 * every thread the process creates afterwards (OpenMP's team, MPI's progress threads) is counted
 * with it; threads that already exist then are not. Where nothing can be counted (no PMU in a VM,
 * an unknown CPU, perf_event_paranoid) the document says why instead of giving a number. */
#ifndef PA_NUMA_COUNTERS_H
#define PA_NUMA_COUNTERS_H

#include "json.h"

/* Starts counting. Call it early in main, before the first OpenMP parallel region and before
 * MPI_Init. It never fails: when counting is impossible it keeps the reason for the document. */
void pa_numa_counters_start(void);

/* Writes "numa_accesses": {"local": N, "remote": M, "source": ..., "counts": ...} with the counts
 * since pa_numa_counters_start, or {"available": false, "reason": ...}. */
void pa_numa_counters_json(pa_json *json);

#endif
