/* What the kernel says about this process when its measurement ends (Linux /proc): where each
 * thread last ran and may run, how often the scheduler migrated it, the process's memory policy,
 * on which NUMA nodes its pages landed, and its local and remote DRAM accesses where hardware
 * counters count them (numa_counters.h). Every result document carries it as "execution"
 * (docs/contract.md), so that a sweep over binding and memory policy records what was obtained,
 * never only what was asked. */
#ifndef PA_EXECUTION_H
#define PA_EXECUTION_H

#include "json.h"

/* Writes "execution": {...} (a key and its object) into the open document object. */
void pa_execution_json(pa_json *json);

#endif
