/* Regions: creation over one shared-memory window per node (MPI_Comm_split_type SHARED) and one
 * RMA window over the whole communicator, their distribution, and the queries. */
#include <stdlib.h>
#include <string.h>

#include "smi_internal.h"

static const struct {
    const char *name;
    size_t size;
} types[] = {
    [PA_SMI_DOUBLE] = {"double", sizeof(double)},
    [PA_SMI_FLOAT] = {"float", sizeof(float)},
    [PA_SMI_INT32] = {"int32", sizeof(int32_t)},
    [PA_SMI_INT64] = {"int64", sizeof(int64_t)},
};

static int type_valid(pa_smi_type type) { return type >= PA_SMI_DOUBLE && type <= PA_SMI_INT64; }

const char *pa_smi_type_name(pa_smi_type type)
{
    return type_valid(type) ? types[type].name : "an unknown type";
}

static MPI_Datatype mpi_type_of(pa_smi_type type)
{
    switch (type) {
    case PA_SMI_DOUBLE:
        return MPI_DOUBLE;
    case PA_SMI_FLOAT:
        return MPI_FLOAT;
    case PA_SMI_INT32:
        return MPI_INT32_T;
    default:
        return MPI_INT64_T;
    }
}

/* first[] of the distribution, checked (the same on every process: the caller agrees). */
static int distribute(pa_smi_region *r, const pa_smi_distribution *d)
{
    static const char call[] = "pa_smi_create";
    pa_smi_layout layout = d ? d->layout : PA_SMI_BLOCKED;
    int np = r->np;
    if (layout == PA_SMI_BLOCKED) {
        for (int p = 0; p <= np; p++) /* floor(p n / np) without overflow */
            r->first[p] = r->n / np * p + r->n % np * p / np;
        r->owner_by_division = r->n > 0 && r->n <= INT64_MAX / np;
        if (r->owner_by_division)
            r->by_n = pa_smi_divider_of((uint64_t)r->n);
        return PA_SMI_OK;
    }
    if (layout == PA_SMI_UNDIVIDED) {
        if (d->owner < 0 || d->owner >= np)
            return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                               "the undivided region's owner %d is not a process of the "
                               "communicator (0 .. %d)",
                               d->owner, np - 1);
        for (int p = 0; p <= np; p++)
            r->first[p] = p <= d->owner ? 0 : r->n;
        return PA_SMI_OK;
    }
    if (layout != PA_SMI_PARTITION)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                           "the layout %d is not one of "
                           "PA_SMI_BLOCKED, PA_SMI_PARTITION, PA_SMI_UNDIVIDED",
                           (int)layout);
    if (!d->first)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "PA_SMI_PARTITION needs first[]");
    if (d->first[0] != 0 || d->first[np] != r->n)
        return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                           "the partition must start at 0 and end at n = %lld (first[0] = %lld, "
                           "first[%d] = %lld)",
                           (long long)r->n, (long long)d->first[0], np, (long long)d->first[np]);
    for (int p = 0; p < np; p++)
        if (d->first[p + 1] < d->first[p])
            return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                               "the partition decreases at process %d (first[%d] = %lld > "
                               "first[%d] = %lld)",
                               p, p, (long long)d->first[p], p + 1, (long long)d->first[p + 1]);
    memcpy(r->first, d->first, sizeof(int64_t) * (size_t)(np + 1));
    return PA_SMI_OK;
}

/* A combine record's offset (combine.c): 4 bytes where every part has fewer than 2^32 elements,
 * else 8. PA_SMI_RECORD_OFFSET_BYTES=8 in the environment forces 8, the tests' way to the wide
 * records (a part of 2^32 elements is 16 GiB). Collective: the largest of the processes', so that
 * a setting some processes lack cannot make them read each other's records differently. */
static size_t record_offset_bytes(const pa_smi_region *r)
{
    int bytes = sizeof(uint32_t), agreed;
    for (int p = 0; p < r->np; p++)
        if (r->first[p + 1] - r->first[p] > (int64_t)UINT32_MAX)
            bytes = sizeof(int64_t);
    const char *forced = getenv("PA_SMI_RECORD_OFFSET_BYTES");
    if (forced && strcmp(forced, "8") == 0)
        bytes = sizeof(int64_t);
    if (MPI_Allreduce(&bytes, &agreed, 1, MPI_INT, MPI_MAX, r->comm) != MPI_SUCCESS)
        agreed = sizeof(int64_t); /* wide records hold any offset */
    return (size_t)agreed;
}

static void release_windows(pa_smi_region *r)
{
    if (r->rma != MPI_WIN_NULL && r->rma != r->shared) {
        MPI_Win_unlock_all(r->rma);
        MPI_Win_free(&r->rma);
    }
    if (r->shared != MPI_WIN_NULL) {
        MPI_Win_unlock_all(r->shared);
        MPI_Win_free(&r->shared);
    }
    r->rma = r->shared = MPI_WIN_NULL;
}

static void destroy(pa_smi_region *r)
{
    if (r->comm != MPI_COMM_NULL)
        MPI_Comm_free(&r->comm);
    if (r->node != MPI_COMM_NULL)
        MPI_Comm_free(&r->node);
    free(r->first), free(r->direct), free(r->range_lo), free(r->range_hi), free(r->range_at);
    free(r->pieces);
    free(r->copy), free(r->touched_bits);
    pa_smi_combining_free(r);
    free(r);
}

/* RMA only: MPI_Win_allocate, each part rounded to 64 bytes (MPICH 4.0.2 shifts a rank's
 * targets by 8 bytes when the part before it on the node is not a multiple of 16 bytes). */
static int rma_window(pa_smi_region *r, MPI_Aint bytes)
{
    int rc = MPI_Win_allocate((bytes + 63) / 64 * 64, (int)r->size, MPI_INFO_NULL, r->comm,
                              &r->local, &r->rma);
    if (rc != MPI_SUCCESS) {
        r->rma = MPI_WIN_NULL;
        return pa_smi_mpi(rc, "pa_smi_create", "MPI_Win_allocate");
    }
    MPI_Win_lock_all(0, r->rma);
    r->direct[r->rank] = r->local;
    return PA_SMI_OK;
}

/* Node-aware: the node's parts in one MPI_Win_allocate_shared window (contiguous in rank order),
 * every part of the node reached by loads and stores; an MPI_Win_create over comm on the same
 * memory for the other nodes (the shared window itself when comm is one node). */
static int node_windows(pa_smi_region *r, MPI_Aint bytes)
{
    static const char call[] = "pa_smi_create";
    int rc = MPI_Comm_split_type(r->comm, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &r->node);
    if (rc != MPI_SUCCESS)
        return pa_smi_mpi(rc, call, "MPI_Comm_split_type");
    MPI_Comm_set_errhandler(r->node, MPI_ERRORS_RETURN);
    rc =
        MPI_Win_allocate_shared(bytes, (int)r->size, MPI_INFO_NULL, r->node, &r->local, &r->shared);
    if (rc != MPI_SUCCESS) {
        r->shared = MPI_WIN_NULL;
        return pa_smi_mpi(rc, call, "MPI_Win_allocate_shared");
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, r->shared);
    int node_size;
    MPI_Comm_size(r->node, &node_size);
    MPI_Group node_group, group;
    MPI_Comm_group(r->node, &node_group);
    MPI_Comm_group(r->comm, &group);
    for (int q = 0; q < node_size; q++) {
        int p;
        MPI_Group_translate_ranks(node_group, 1, &q, group, &p);
        MPI_Aint size;
        int unit;
        char *base;
        MPI_Win_shared_query(r->shared, q, &size, &unit, &base);
        r->direct[p] = base;
    }
    MPI_Group_free(&node_group), MPI_Group_free(&group);
    r->direct[r->rank] = r->local;
    if (node_size == r->np) {
        r->rma = r->shared;
        return PA_SMI_OK;
    }
    rc = MPI_Win_create(r->local, bytes, (int)r->size, MPI_INFO_NULL, r->comm, &r->rma);
    if (rc != MPI_SUCCESS) {
        r->rma = MPI_WIN_NULL;
        return pa_smi_mpi(rc, call, "MPI_Win_create");
    }
    MPI_Win_lock_all(0, r->rma);
    return PA_SMI_OK;
}

int pa_smi_create(MPI_Comm comm, int64_t n, pa_smi_type type,
                  const pa_smi_distribution *distribution, pa_smi_region **region)
{
    static const char call[] = "pa_smi_create";
    if (!region)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region pointer is NULL");
    *region = NULL;
    pa_smi_region *r = calloc(1, sizeof *r);
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the region");
    r->comm = r->node = MPI_COMM_NULL;
    r->rma = r->shared = MPI_WIN_NULL;
    int status = MPI_Comm_dup(comm, &r->comm) == MPI_SUCCESS
                     ? PA_SMI_OK
                     : pa_smi_fail(PA_SMI_ERR_MPI, call, "MPI_Comm_dup failed");
    if (status) {
        r->comm = MPI_COMM_NULL;
        destroy(r);
        return status;
    }
    MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(r->comm, &r->rank);
    MPI_Comm_size(r->comm, &r->np);
    r->n = n, r->type = type;
    r->first = calloc((size_t)r->np + 1, sizeof(int64_t));
    r->direct = calloc((size_t)r->np, sizeof(char *));
    if (!r->first || !r->direct)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the distribution");
    else if (!type_valid(type))
        status = pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                             "the element type %d is not one of "
                             "PA_SMI_DOUBLE, PA_SMI_FLOAT, PA_SMI_INT32, PA_SMI_INT64",
                             (int)type);
    else if (n < 0)
        status = pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region's size %lld is negative",
                             (long long)n);
    else
        status = distribute(r, distribution);
    status = pa_smi_agree(r->comm, status, call);
    if (status) {
        destroy(r);
        return status;
    }
    r->size = types[type].size;
    r->offset_bytes = record_offset_bytes(r);
    r->mpi_type = mpi_type_of(type);
    MPI_Aint bytes = (MPI_Aint)((r->first[r->rank + 1] - r->first[r->rank]) * (int64_t)r->size);
    int rma_only = distribution && (distribution->flags & PA_SMI_RMA_ONLY);
    status = rma_only ? rma_window(r, bytes) : node_windows(r, bytes);
    status = pa_smi_agree(r->comm, status, call);
    if (status) {
        if (r->rma != MPI_WIN_NULL || r->shared != MPI_WIN_NULL)
            release_windows(r);
        destroy(r);
        return status;
    }
    MPI_Win_set_errhandler(r->rma, MPI_ERRORS_RETURN);
    if (r->shared != MPI_WIN_NULL)
        MPI_Win_set_errhandler(r->shared, MPI_ERRORS_RETURN);
    memset(r->local, 0, (size_t)bytes);
    *region = r;
    return pa_smi_barrier(r);
}

int pa_smi_free(pa_smi_region **region)
{
    static const char call[] = "pa_smi_free";
    if (!region || !*region)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    pa_smi_region *r = *region;
    int status = r->replicated ? pa_smi_fail(PA_SMI_ERR_BUSY, call,
                                             "the region is in use: it is replicated on this "
                                             "process (pa_smi_release or pa_smi_combine first)")
                               : PA_SMI_OK;
    status = pa_smi_agree(r->comm, status, call);
    if (status)
        return status;
    MPI_Barrier(r->comm);
    release_windows(r);
    destroy(r);
    *region = NULL;
    return PA_SMI_OK;
}

int pa_smi_owner_search(const pa_smi_region *r, int64_t i)
{
    int lo = 0, hi = r->np - 1;
    while (lo < hi) { /* the last p with first[p] <= i: the one whose part holds i */
        int mid = lo + (hi - lo + 1) / 2;
        if (r->first[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int pa_smi_check_element(const pa_smi_region *r, int64_t i, const char *call)
{
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    if (i < 0 || i >= r->n)
        return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                           "element %lld is outside the region of %lld elements", (long long)i,
                           (long long)r->n);
    return PA_SMI_OK;
}

int pa_smi_check_block(const pa_smi_region *r, int64_t lo, int64_t count, const void *buffer,
                       const char *call)
{
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    if (count < 0)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the count %lld is negative",
                           (long long)count);
    if (count > 0 && !buffer)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the buffer is NULL");
    if (lo < 0 || lo > r->n - count)
        return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                           "elements %lld .. %lld are outside the region of %lld elements",
                           (long long)lo, (long long)(lo + count - 1), (long long)r->n);
    return PA_SMI_OK;
}

int64_t pa_smi_size(const pa_smi_region *region) { return region ? region->n : -1; }

int pa_smi_owner(const pa_smi_region *region, int64_t i, int *owner)
{
    int status = pa_smi_check_element(region, i, "pa_smi_owner");
    if (status)
        return status;
    if (!owner)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, "pa_smi_owner", "the owner pointer is NULL");
    *owner = pa_smi_owner_of(region, i);
    return PA_SMI_OK;
}

int pa_smi_range(const pa_smi_region *region, int p, int64_t *lo, int64_t *hi)
{
    static const char call[] = "pa_smi_range";
    if (!region || !lo || !hi)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region, lo or hi is NULL");
    if (p < 0 || p >= region->np)
        return pa_smi_fail(PA_SMI_ERR_RANGE, call, "process %d is not one of the region's %d", p,
                           region->np);
    *lo = region->first[p], *hi = region->first[p + 1];
    return PA_SMI_OK;
}

void *pa_smi_local(const pa_smi_region *region)
{
    return region && region->first[region->rank + 1] > region->first[region->rank] ? region->local
                                                                                   : NULL;
}

void *pa_smi_span(const pa_smi_region *region, int64_t lo, int64_t hi)
{
    if (!region || lo < 0 || hi > region->n || lo >= hi)
        return NULL;
    const pa_smi_region *r = region;
    int p = pa_smi_owner_of(r, lo);
    if (!r->direct[p])
        return NULL;
    char *start = r->direct[p] + (size_t)(lo - r->first[p]) * r->size;
    while (r->first[p + 1] < hi) { /* the next non-empty part must follow this one in memory */
        char *end = r->direct[p] + (size_t)(r->first[p + 1] - r->first[p]) * r->size;
        do
            p++;
        while (r->first[p + 1] == r->first[p]);
        if (r->direct[p] != end)
            return NULL;
    }
    return start;
}

int pa_smi_split(const pa_smi_region *region, int64_t begin, int64_t end, int64_t *lo, int64_t *hi)
{
    static const char call[] = "pa_smi_split";
    if (!region || !lo || !hi)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region, lo or hi is NULL");
    if (begin < 0 || end > region->n || begin > end)
        return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                           "the index range %lld .. %lld is not within the region of %lld "
                           "elements",
                           (long long)begin, (long long)end - 1, (long long)region->n);
    int64_t mine_lo = region->first[region->rank], mine_hi = region->first[region->rank + 1];
    *lo = begin > mine_lo ? begin : mine_lo;
    *hi = end < mine_hi ? end : mine_hi;
    if (*hi < *lo)
        *hi = *lo;
    return PA_SMI_OK;
}

int pa_smi_counts_of(const pa_smi_region *region, pa_smi_counts *counts)
{
    if (!region || !counts)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, "pa_smi_counts_of", "the region or counts is NULL");
    *counts = region->counts;
    return PA_SMI_OK;
}
