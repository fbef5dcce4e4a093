/* libpa-smi's insides: the region record and what the source files share. */
#ifndef PA_SMI_INTERNAL_H
#define PA_SMI_INTERNAL_H

#include <stddef.h>
#include <string.h>

#include "pa_smi.h"

/* combine's buffers, kept from one call to the next: an iterative code combines every step, its
 * messages much the same size each time, so after the first step no call allocates. */
typedef struct {
    int *counts;            /* 3 np: records sent to each process, their displacements, received */
    char **incoming;        /* np: the message from each process */
    size_t *incoming_bytes; /* np: their room */
    MPI_Request *sends;     /* np */
    char *records;          /* the records sent */
    size_t records_bytes;
} pa_smi_combining;

/* Division by a divisor fixed at region creation as a multiply and two shifts (Granlund &
 * Montgomery, "Division by invariant integers using multiplication", PLDI 1994, figure 4.1):
 * exact for every 64-bit dividend. A few cycles where a 64-bit divide takes about 14 since Ice
 * Lake and 42-95 on Skylake (Agner Fog's instruction tables), on every element access. */
typedef struct {
    uint64_t magic;
    int shift1, shift2;
} pa_smi_divider;

/* The divider of d >= 1: with l = ceil(log2 d), magic = floor(2^64 (2^l - d) / d) + 1, which
 * fits 64 bits. */
static inline pa_smi_divider pa_smi_divider_of(uint64_t d)
{
    int l = d > 1 ? 64 - __builtin_clzll(d - 1) : 0;
    unsigned __int128 excess = ((unsigned __int128)1 << l) - d; /* 2^l - d < d */
    pa_smi_divider v = {(uint64_t)((excess << 64) / d) + 1, l < 1 ? l : 1, l > 1 ? l - 1 : 0};
    return v;
}

/* x / d, d the divider's. */
static inline uint64_t pa_smi_divide(uint64_t x, pa_smi_divider v)
{
    uint64_t t = (uint64_t)(((unsigned __int128)x * v.magic) >> 64);
    return (t + ((x - t) >> v.shift1)) >> v.shift2;
}

/* A piece of a fetch: `count` elements from element lo on, in process `owner`'s part, to element
 * `at` of the copy. */
typedef struct {
    int64_t lo, at;
    int owner, count;
} pa_smi_piece;

struct pa_smi_region {
    MPI_Comm comm; /* a duplicate of the creator's communicator */
    int rank, np;
    int64_t n;
    pa_smi_type type;
    size_t size; /* bytes per element */
    /* bytes of a combine record's offset: 4 where every part has fewer than 2^32 elements */
    size_t offset_bytes;
    MPI_Datatype mpi_type;
    int64_t *first; /* np + 1: process p owns first[p] .. first[p + 1] - 1 */
    /* blocked, n > 0 and n np within int64_t: pa_smi_owner_of divides by n (by_n) */
    int owner_by_division;
    pa_smi_divider by_n;
    char *local;    /* my part */
    char **direct;  /* np: process p's part where loads and stores reach it, else NULL */
    MPI_Comm node;  /* the processes sharing memory with me (MPI_COMM_NULL: RMA only) */
    MPI_Win shared; /* MPI_Win_allocate_shared over node, or MPI_WIN_NULL */
    MPI_Win rma;    /* over comm, for RMA: the shared window itself when comm is one node */
    pa_smi_counts counts;
    /* replication */
    int replicated;
    int nranges, ranges_capacity;
    int64_t *range_lo, *range_hi, *range_at; /* range_at: where range k starts in the copy */
    pa_smi_piece *pieces; /* the ranges split at owners, for a fetch (when pieces_ready) */
    int npieces, pieces_capacity, pieces_ready;
    int64_t copy_count;
    char *copy;
    size_t copy_bytes;
    uint64_t *touched_bits; /* one bit per element of the copy: written (pa_smi_touch) */
    size_t bits_words;
    size_t bits_zero; /* the first words of touched_bits known to be zero (0 after a touch) */
    pa_smi_combining combining;
};

/* Sets this thread's message "CALL: ..." and returns `code`. */
int pa_smi_fail(int code, const char *call, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* PA_SMI_ERR_MPI with MPI's own words for a failed MPI call (rc is not MPI_SUCCESS). */
int pa_smi_mpi_failure(int rc, const char *call, const char *mpi_call);
/* PA_SMI_OK, or PA_SMI_ERR_MPI with MPI's own words for a failed MPI call: inline, since block
 * transfers ask after every piece. */
static inline int pa_smi_mpi(int rc, const char *call, const char *mpi_call)
{
    if (__builtin_expect(rc == MPI_SUCCESS, 1))
        return PA_SMI_OK;
    return pa_smi_mpi_failure(rc, call, mpi_call);
}
/* Collective: every process's status combined: this one's if it failed, else
 * PA_SMI_ERR_REMOTE when another process's failed, else PA_SMI_OK. */
int pa_smi_agree(MPI_Comm comm, int status, const char *call);

/* The owner of element i (0 <= i < n) by binary search of first[]: the last p with
 * first[p] <= i. */
int pa_smi_owner_search(const pa_smi_region *r, int64_t i);

/* The owner of element i (0 <= i < n): inline, since every element access asks. Blocked,
 * first[p] = floor(p n / np), and floor(p n / np) <= i holds exactly when p n < (i + 1) np, so
 * the owner, the last such p, is ((i + 1) np - 1) / n in integers: exact, no floating-point
 * guess to correct (owner_by_division says (i + 1) np cannot overflow). Otherwise a binary
 * search. */
static inline int pa_smi_owner_of(const pa_smi_region *r, int64_t i)
{
    if (__builtin_expect(r->owner_by_division, 1))
        return (int)pa_smi_divide((uint64_t)((i + 1) * r->np - 1), r->by_n);
    return pa_smi_owner_search(r, i);
}

/* One element's bytes (4 or 8: every pa_smi_type) as a fixed-size copy, which the compiler
 * inlines (a memcpy of r->size bytes is a library call per element). */
static inline void pa_smi_copy_element(void *to, const void *from, size_t size)
{
    if (size == 8)
        memcpy(to, from, 8);
    else
        memcpy(to, from, 4);
}

/* Element checks, naming `call`. */
int pa_smi_check_element(const pa_smi_region *r, int64_t i, const char *call);
int pa_smi_check_block(const pa_smi_region *r, int64_t lo, int64_t count, const void *buffer,
                       const char *call);
const char *pa_smi_type_name(pa_smi_type type);
static inline int pa_smi_op_valid(pa_smi_op op) { return op >= PA_SMI_SUM && op <= PA_SMI_REPLACE; }

/* combine's buffers freed (the region is). */
void pa_smi_combining_free(pa_smi_region *r);

/* The pieces into the copy (a memcpy where loads reach, else one MPI_Get each), all issued
 * before one flush; *others counts the pieces that came from other processes. */
int pa_smi_fetch(pa_smi_region *r, const pa_smi_piece *pieces, int count, char *copy,
                 int64_t *others, const char *call);

#endif
