/* Call sites (sites.c): the depth asked for, and the rank file's objects and sites. */
#ifndef PA_IPM_SITES_H
#define PA_IPM_SITES_H

#include "ipm.h"
#include "json.h"

/* At MPI_Init: $PERFATLAS_IPM_CALLSTACK, and MPICH's Fortran binding's bounds. */
void pa_ipm_sites_start(void);
/* The rank file's "objects": what its addresses are resolved against (docs/profile.md). */
void pa_ipm_write_objects(pa_json *json);
/* The rank file's "unwinder": "libunwind", "backtrace", or null where no stack is unwound. */
void pa_ipm_write_unwinder(pa_json *json);
/* A record's "site": its frames, the caller first ([] without sites). */
void pa_ipm_write_site(pa_json *json, const pa_ipm_site_t *site);

#endif
