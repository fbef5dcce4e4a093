/* libpa-smi: shared regions over MPI, after SMI, the shared-memory interface of the SCI-cluster
 * study (distributed shared memory regions divided along the loop partitioning, switched
 * temporarily to replication and combined back). Built on MPI-3 one-sided communication:
 * processes of one node reach each other's parts with loads and stores in an
 * MPI_Win_allocate_shared window (MPI_Comm_split_type SHARED), the others through passive-target
 * RMA (MPI_Get, MPI_Put, MPI_Accumulate); the library picks per target.
 *
 * Every call returns PA_SMI_OK (0) or an error code, and pa_smi_error() then says in one sentence
 * which call failed and why (out-of-range element, release without replicate, combine with a
 * mismatched type, freeing a region in use, ...). Collective calls say so below; the others are
 * local. The guide: docs/guide/smi.md. */
#ifndef PA_SMI_H
#define PA_SMI_H

#include <mpi.h>
#include <stdint.h>

typedef enum {
    PA_SMI_OK = 0,
    PA_SMI_ERR_ARGUMENT, /* a null pointer, a negative count, an unknown type or operation */
    PA_SMI_ERR_RANGE,    /* an element outside the region or outside the replicated copy */
    PA_SMI_ERR_STATE,    /* a call out of order: release without replicate, unlock unheld */
    PA_SMI_ERR_TYPE,     /* a combine whose element type is not the region's */
    PA_SMI_ERR_BUSY,     /* freeing a region that is replicated or a mutex that is held */
    PA_SMI_ERR_MPI,      /* MPI failed (the message carries MPI's own) */
    PA_SMI_ERR_MEMORY,   /* out of memory */
    PA_SMI_ERR_REMOTE    /* a collective call failed on another process */
} pa_smi_status;

typedef enum {
    PA_SMI_DOUBLE,
    PA_SMI_FLOAT,
    PA_SMI_INT32,
    PA_SMI_INT64
} pa_smi_type;

/* How the elements are divided among the processes of the region's communicator. */
typedef enum {
    PA_SMI_BLOCKED,   /* process p owns floor(p n / np) .. floor((p + 1) n / np) - 1 */
    PA_SMI_PARTITION, /* process p owns first[p] .. first[p + 1] - 1 (given) */
    PA_SMI_UNDIVIDED  /* process `owner` holds all n elements */
} pa_smi_layout;

typedef struct {
    pa_smi_layout layout;
    const int64_t *first; /* PA_SMI_PARTITION: np + 1 starts, first[0] = 0, first[np] = n */
    int owner;            /* PA_SMI_UNDIVIDED */
    unsigned flags;       /* PA_SMI_RMA_ONLY */
} pa_smi_distribution;

/* Every access to another process through RMA, even on one node (the network path, measured). */
#define PA_SMI_RMA_ONLY 1u

typedef enum {
    PA_SMI_SUM,
    PA_SMI_MAX,
    PA_SMI_MIN,
    PA_SMI_REPLACE
} pa_smi_op;

/* A user's combine: inout[k] = f(inout[k], in[k]) for k < count. */
typedef void (*pa_smi_function)(void *inout, const void *in, int64_t count);

/* What this process did to a region since its creation (pa_smi_counts). */
typedef struct {
    int64_t direct;      /* element or block accesses by load/store (own or same-node part) */
    int64_t gets, puts;  /* MPI_Get / MPI_Put calls (one per block piece) */
    int64_t accumulates; /* MPI_Accumulate calls */
    int64_t transfers;   /* block transfers of replicate from other processes */
    int64_t combined;    /* touched elements sent to other processes by combine */
} pa_smi_counts;

typedef struct pa_smi_region pa_smi_region;
typedef struct pa_smi_mutex pa_smi_mutex;

/* The last error of this thread: one sentence naming the call ("" after none). */
const char *pa_smi_error(void);

/* -- regions ------------------------------------------------------------------------------ */

/* Collective over comm: a region of n elements of `type`, zero-filled, distributed as
 * `distribution` says (NULL: blocked). */
int pa_smi_create(MPI_Comm comm, int64_t n, pa_smi_type type,
                  const pa_smi_distribution *distribution, pa_smi_region **region);
/* Collective: PA_SMI_ERR_BUSY while any process holds it replicated (nothing freed then). */
int pa_smi_free(pa_smi_region **region);

int64_t pa_smi_size(const pa_smi_region *region);
int pa_smi_owner(const pa_smi_region *region, int64_t i, int *owner);
/* The elements process p owns: lo .. hi - 1. */
int pa_smi_range(const pa_smi_region *region, int p, int64_t *lo, int64_t *hi);
/* This process's part (element lo of pa_smi_range is local[0]); NULL if it owns none. */
void *pa_smi_local(const pa_smi_region *region);
/* A pointer to elements lo .. hi - 1 if this process reaches them all by loads and stores in one
 * contiguous piece of memory (its own part, or same-node parts that follow each other), else
 * NULL. */
void *pa_smi_span(const pa_smi_region *region, int64_t lo, int64_t hi);
/* The loop-splitting helper: this process's share lo .. hi - 1 of the index range
 * begin .. end - 1, the elements of it that the process owns (owner computes). */
int pa_smi_split(const pa_smi_region *region, int64_t begin, int64_t end, int64_t *lo, int64_t *hi);
int pa_smi_counts_of(const pa_smi_region *region, pa_smi_counts *counts);

/* -- access (complete at the target on return; visible to others after pa_smi_barrier) ------- */

int pa_smi_get(pa_smi_region *region, int64_t i, void *value);
int pa_smi_put(pa_smi_region *region, int64_t i, const void *value);
/* Atomic per element against other accumulates (MPI_Accumulate, also on the node). */
int pa_smi_accumulate(pa_smi_region *region, int64_t i, const void *value, pa_smi_op op);
int pa_smi_get_block(pa_smi_region *region, int64_t lo, int64_t count, void *buffer);
int pa_smi_put_block(pa_smi_region *region, int64_t lo, int64_t count, const void *buffer);
int pa_smi_accumulate_block(pa_smi_region *region, int64_t lo, int64_t count, const void *buffer,
                            pa_smi_op op);

/* -- synchronization ---------------------------------------------------------------------- */

/* Local: this process's stores to its own and same-node parts reach memory (MPI_Win_sync); its
 * RMA operations are already complete at their targets, each when its call returned. */
int pa_smi_fence(pa_smi_region *region);
/* Collective: a fence on every process, then every process sees every write of the phase. */
int pa_smi_barrier(pa_smi_region *region);

/* Collective over comm: a mutex (a ticket lock on RMA atomics at process 0 of comm). */
int pa_smi_mutex_create(MPI_Comm comm, pa_smi_mutex **mutex);
int pa_smi_mutex_lock(pa_smi_mutex *mutex);
int pa_smi_mutex_unlock(pa_smi_mutex *mutex);
/* Collective: PA_SMI_ERR_BUSY if this process holds it. */
int pa_smi_mutex_free(pa_smi_mutex **mutex);

/* -- replication -------------------------------------------------------------------------- */

/* How a copy starts: the region's values (fetched with block transfers: a memcpy from own and
 * same-node parts, one MPI_Get per piece of another process's part) or zero bits. */
#define PA_SMI_FETCH 0u
#define PA_SMI_ZERO  1u

/* Local: switch to replicated mode with a private copy of the `count` element ranges
 * lo[k] .. hi[k] - 1 (increasing, disjoint; count 0: the whole region), laid out one after the
 * other in the copy (pa_smi_copy_index). Call pa_smi_barrier first if others wrote the region. */
int pa_smi_replicate(pa_smi_region *region, int count, const int64_t *lo, const int64_t *hi,
                     unsigned start);
/* The copy (NULL when not replicated) and the place of element i in it (-1 when not there). */
void *pa_smi_copy(const pa_smi_region *region);
int64_t pa_smi_copy_index(const pa_smi_region *region, int64_t i);
/* Mark element i (or lo .. hi - 1) of the copy as written: combine sends exactly these. */
int pa_smi_touch(pa_smi_region *region, int64_t i);
int pa_smi_touch_range(pa_smi_region *region, int64_t lo, int64_t hi);
/* Local: switch back discarding the copy (read-only use). */
int pa_smi_release(pa_smi_region *region);
/* Collective: switch back combining the copies: for every touched element, in process order,
 * region[i] = op(region[i], copy[i]); untouched elements keep their value. Only touched
 * elements travel (one message per pair of processes), each owner applying what it receives.
 * `type` must be the region's.
 * A process's own part holds the result on return; others see it after pa_smi_barrier. */
int pa_smi_combine(pa_smi_region *region, pa_smi_op op, pa_smi_type type);
int pa_smi_combine_function(pa_smi_region *region, pa_smi_function function, pa_smi_type type);

#endif
