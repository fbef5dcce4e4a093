/* Where a rank ran (placement.c): the CPUs it may run on and those it was seen on. */
#ifndef PA_IPM_PLACEMENT_H
#define PA_IPM_PLACEMENT_H

#include <stddef.h>

#include "json.h"

/* At MPI_Init, on the thread that called it: its allowed CPUs, a first sample, the countdown. */
void pa_ipm_placement_start(void);
/* Where the profile is written: a last sample of the thread that called MPI_Init (when it is the
 * writer); then the allowed CPUs as the kernel lists them ("0-3,8") and the CPU seen most (-1:
 * none seen). */
void pa_ipm_placement_end(char *cpus_allowed, size_t size, int *cpu);
/* The rank file's "placement" (docs/profile.md, Placement). */
void pa_ipm_write_placement(pa_json *json);

#endif
