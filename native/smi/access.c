/* Element and block access, fences and barriers. A piece of a block that lies in one process's
 * part is a memcpy where loads and stores reach that part (own part, same node), else one
 * MPI_Get or MPI_Put on the RMA window; accumulates always go through MPI_Accumulate, whose
 * per-element atomicity holds against every other accumulate (on the node too). Operations
 * complete at their target before the call returns (MPI_Win_flush). */
#include <limits.h>
#include <string.h>

#include "smi_internal.h"

static const MPI_Op mpi_ops[] = {[PA_SMI_SUM] = MPI_SUM,
                                 [PA_SMI_MAX] = MPI_MAX,
                                 [PA_SMI_MIN] = MPI_MIN,
                                 [PA_SMI_REPLACE] = MPI_REPLACE};

typedef enum {
    GET,
    PUT,
    ACCUMULATE
} direction;

/* One piece lo .. lo + count - 1 inside process p's part. Returns 1 when it went through RMA. */
static int piece(pa_smi_region *r, direction d, int p, int64_t lo, int count, void *buffer,
                 pa_smi_op op, int *rc)
{
    int64_t offset = lo - r->first[p];
    size_t bytes = (size_t)count * r->size;
    if (d != ACCUMULATE && r->direct[p]) {
        char *there = r->direct[p] + (size_t)offset * r->size;
        if (d == GET)
            memcpy(buffer, there, bytes);
        else
            memcpy(there, buffer, bytes);
        r->counts.direct++;
        return 0;
    }
    MPI_Datatype t = r->mpi_type;
    if (d == GET)
        *rc = MPI_Get(buffer, count, t, p, offset, count, t, r->rma), r->counts.gets++;
    else if (d == PUT)
        *rc = MPI_Put(buffer, count, t, p, offset, count, t, r->rma), r->counts.puts++;
    else
        *rc = MPI_Accumulate(buffer, count, t, p, offset, count, t, mpi_ops[op], r->rma),
        r->counts.accumulates++;
    return 1;
}

/* A block by pieces, issued; *remote counts the pieces that went through RMA and *target is
 * their one target (-2: several). */
static int issue(pa_smi_region *r, direction d, int64_t lo, int64_t count, void *buffer,
                 pa_smi_op op, int *remote, int *target, const char *call)
{
    int rc = MPI_SUCCESS;
    char *at = buffer;
    while (count > 0 && rc == MPI_SUCCESS) {
        int p = pa_smi_owner_of(r, lo);
        int64_t n = r->first[p + 1] - lo;
        n = n < count ? n : count;
        n = n < INT_MAX ? n : INT_MAX;
        if (piece(r, d, p, lo, (int)n, at, op, &rc))
            *target = (*remote)++ && *target != p ? -2 : p;
        lo += n, count -= n, at += (size_t)n * r->size;
    }
    return pa_smi_mpi(rc, call, d == GET ? "MPI_Get" : d == PUT ? "MPI_Put" : "MPI_Accumulate");
}

/* The issued pieces complete at their targets (one flush). */
static int complete(pa_smi_region *r, int remote, int target, const char *call)
{
    if (!remote)
        return PA_SMI_OK;
    int rc = target >= 0 ? MPI_Win_flush(target, r->rma) : MPI_Win_flush_all(r->rma);
    return pa_smi_mpi(rc, call, "MPI_Win_flush");
}

static int transfer(pa_smi_region *r, direction d, int64_t lo, int64_t count, void *buffer,
                    pa_smi_op op, const char *call)
{
    int remote = 0, target = -1;
    int status = issue(r, d, lo, count, buffer, op, &remote, &target, call);
    int completed = complete(r, remote, target, call);
    return status ? status : completed;
}

int pa_smi_fetch(pa_smi_region *r, const pa_smi_piece *pieces, int count, char *copy,
                 int64_t *others, const char *call)
{
    int rc = MPI_SUCCESS, remote = 0, target = -1;
    for (int k = 0; k < count && rc == MPI_SUCCESS; k++) {
        const pa_smi_piece *q = pieces + k;
        if (piece(r, GET, q->owner, q->lo, q->count, copy + (size_t)q->at * r->size, PA_SMI_SUM,
                  &rc))
            target = remote++ && target != q->owner ? -2 : q->owner;
        *others += q->owner != r->rank;
    }
    int status = pa_smi_mpi(rc, call, "MPI_Get");
    int completed = complete(r, remote, target, call);
    return status ? status : completed;
}

static int op_check(pa_smi_op op, const char *call)
{
    return pa_smi_op_valid(op) ? PA_SMI_OK
                               : pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                                             "the operation %d is not one of PA_SMI_SUM, "
                                             "PA_SMI_MAX, PA_SMI_MIN, PA_SMI_REPLACE",
                                             (int)op);
}

/* An element call's failed checks, in their order: the element, then the value's pointer (out
 * of line: the element calls' common path only tests). */
static __attribute__((noinline, cold)) int element_failure(const pa_smi_region *r, int64_t i,
                                                           const void *value, const char *call)
{
    int status = pa_smi_check_element(r, i, call);
    if (!status && !value)
        status = pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the value pointer is NULL");
    return status;
}

/* An element call's checks: one predicted branch when they pass. */
static inline int element_check(const pa_smi_region *r, int64_t i, const void *value,
                                const char *call)
{
    if (__builtin_expect(r && i >= 0 && i < r->n && value, 1))
        return PA_SMI_OK;
    return element_failure(r, i, value, call);
}

/* A failed element operation or flush: the MPI call that failed first. */
static __attribute__((noinline, cold)) int element_mpi_failure(int rc, int flushed, direction d,
                                                               const char *call)
{
    if (rc != MPI_SUCCESS)
        return pa_smi_mpi(rc, call, d == GET ? "MPI_Get" : d == PUT ? "MPI_Put" : "MPI_Accumulate");
    return pa_smi_mpi(flushed, call, "MPI_Win_flush");
}

/* One checked element i, the element calls' fast path: one owner lookup and no piece loop. A
 * load or store where it reaches (not for accumulates), else one RMA operation completed by
 * MPI_Win_flush of its one target: no more work than app.spmv's hand-coded MPI_Get or
 * MPI_Accumulate + MPI_Win_flush before it used the library (ce7d2ea), which the block path
 * (issue, piece, complete) made measurably slower per remote element. */
static inline int element(pa_smi_region *r, direction d, int64_t i, void *value, pa_smi_op op,
                          const char *call)
{
    int p = pa_smi_owner_of(r, i);
    int64_t offset = i - r->first[p];
    if (d != ACCUMULATE && r->direct[p]) {
        char *there = r->direct[p] + (size_t)offset * r->size;
        if (d == GET)
            pa_smi_copy_element(value, there, r->size);
        else
            pa_smi_copy_element(there, value, r->size);
        r->counts.direct++;
        return PA_SMI_OK;
    }
    MPI_Datatype t = r->mpi_type;
    int rc;
    if (d == GET)
        rc = MPI_Get(value, 1, t, p, offset, 1, t, r->rma), r->counts.gets++;
    else if (d == PUT)
        rc = MPI_Put(value, 1, t, p, offset, 1, t, r->rma), r->counts.puts++;
    else
        rc = MPI_Accumulate(value, 1, t, p, offset, 1, t, mpi_ops[op], r->rma),
        r->counts.accumulates++;
    int flushed = MPI_Win_flush(p, r->rma);
    if (__builtin_expect(rc != MPI_SUCCESS || flushed != MPI_SUCCESS, 0))
        return element_mpi_failure(rc, flushed, d, call);
    return PA_SMI_OK;
}

int pa_smi_get(pa_smi_region *region, int64_t i, void *value)
{
    static const char call[] = "pa_smi_get";
    int status = element_check(region, i, value, call);
    return status ? status : element(region, GET, i, value, PA_SMI_SUM, call);
}

int pa_smi_put(pa_smi_region *region, int64_t i, const void *value)
{
    static const char call[] = "pa_smi_put";
    int status = element_check(region, i, value, call);
    return status ? status : element(region, PUT, i, (void *)value, PA_SMI_SUM, call);
}

int pa_smi_accumulate(pa_smi_region *region, int64_t i, const void *value, pa_smi_op op)
{
    static const char call[] = "pa_smi_accumulate";
    int status = element_check(region, i, value, call);
    status = status ? status : op_check(op, call);
    return status ? status : element(region, ACCUMULATE, i, (void *)value, op, call);
}

int pa_smi_get_block(pa_smi_region *region, int64_t lo, int64_t count, void *buffer)
{
    static const char call[] = "pa_smi_get_block";
    int status = pa_smi_check_block(region, lo, count, buffer, call);
    return status ? status : transfer(region, GET, lo, count, buffer, PA_SMI_SUM, call);
}

int pa_smi_put_block(pa_smi_region *region, int64_t lo, int64_t count, const void *buffer)
{
    static const char call[] = "pa_smi_put_block";
    int status = pa_smi_check_block(region, lo, count, buffer, call);
    return status ? status : transfer(region, PUT, lo, count, (void *)buffer, PA_SMI_SUM, call);
}

int pa_smi_accumulate_block(pa_smi_region *region, int64_t lo, int64_t count, const void *buffer,
                            pa_smi_op op)
{
    static const char call[] = "pa_smi_accumulate_block";
    int status = pa_smi_check_block(region, lo, count, buffer, call);
    status = status ? status : op_check(op, call);
    return status ? status : transfer(region, ACCUMULATE, lo, count, (void *)buffer, op, call);
}

/* Every RMA operation of the library is complete at its target when its call returns (complete,
 * element), so a fence flushes nothing: it synchronizes each window's public and private copies
 * (MPI_Win_sync), which makes this process's loads and stores ordered with the RMA. A flush_all
 * here cost a round over every target twice per phase for nothing (app.spmv's write_element). */
static int fence(pa_smi_region *r, const char *call)
{
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    int rc = MPI_SUCCESS;
    if (r->shared != MPI_WIN_NULL)
        rc = MPI_Win_sync(r->shared);
    if (rc == MPI_SUCCESS && r->rma != r->shared)
        rc = MPI_Win_sync(r->rma);
    return pa_smi_mpi(rc, call, "MPI_Win_sync");
}

int pa_smi_fence(pa_smi_region *region) { return fence(region, "pa_smi_fence"); }

int pa_smi_barrier(pa_smi_region *region)
{
    static const char call[] = "pa_smi_barrier";
    int status = fence(region, call);
    if (status)
        return status;
    int rc = MPI_Barrier(region->comm);
    if (rc != MPI_SUCCESS)
        return pa_smi_mpi(rc, call, "MPI_Barrier");
    if (region->shared != MPI_WIN_NULL)
        MPI_Win_sync(region->shared); /* loads after the barrier see the others' stores */
    return PA_SMI_OK;
}
