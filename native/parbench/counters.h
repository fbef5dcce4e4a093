/* Hardware counters through perf_event_open(2): cycles and instructions of the calling thread,
 * user space only. Where the machine exposes none (a VM without a virtual PMU, a container
 * without the capability, perf_event_paranoid too high) opening fails and says why. */
#ifndef PB_COUNTERS_H
#define PB_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int group; /* leader: cycles; -1 when closed */
    int instructions;
} pb_counters;

/* 0, or -1 and one sentence in `why` (the counters are then unavailable, not an error). */
int pb_counters_open(pb_counters *counters, char *why, size_t size);
/* Cycles and instructions counted so far. */
void pb_counters_read(const pb_counters *counters, uint64_t *cycles, uint64_t *instructions);
void pb_counters_close(pb_counters *counters);

#endif
