/* perfatlas-ipm: an IPM-style PMPI profiler (shared between the generated shims and the core). */
#ifndef PA_IPM_H
#define PA_IPM_H

#include <mpi.h>
#include <stdint.h>

/* One id per wrapped call, in calls.def order. */
enum pa_ipm_call_id {
#define PA_IPM_CALL(ret, name, params, args, bytes, peer, comm) PA_IPM_ID_##name,
#include "calls.def"
#undef PA_IPM_CALL
    PA_IPM_NCALLS
};

/* The vocabulary of calls.def. */
#define PA_IPM_NO_PEER (-1)
#define PA_IPM_NO_BYTES ((uint64_t)0)
#define PA_IPM_BYTES(count, datatype) pa_ipm_bytes((count), (datatype))

/* count x the size of datatype, in bytes (0 for MPI_DATATYPE_NULL or a negative count). */
uint64_t pa_ipm_bytes(int count, MPI_Datatype datatype);

/* The one function every shim calls: one event of `call` that moved `bytes` with `peer` (a rank
 * of `comm`, or negative for none) and took `ticks` timer ticks. Safe from any thread. */
void pa_ipm_record(int call, uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks);

/* Lifecycle, called by the MPI_Init*, MPI_Pcontrol and MPI_Finalize wrappers. */
void pa_ipm_start(void);
void pa_ipm_region(int level, const char *name);
void pa_ipm_write(void);

#define PA_IPM_EXPORT __attribute__((visibility("default")))

#endif
