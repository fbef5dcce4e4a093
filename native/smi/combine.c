/* Combine: the switch back from replication that merges the copies into the region. Only the
 * touched elements travel: each process sorts its touched list by owner (a counting sort, the
 * order of first touch kept), the counts go by MPI_Alltoall and the (offset, value) records by
 * one MPI_Alltoallv; each owner applies what it receives in process order, its own records at its
 * own place, so that the result does not depend on timing. A process that cannot combine sends
 * the count -1 to every other, and every process returns an error without changing the region. */
#include <stdlib.h>
#include <string.h>

#include "smi_internal.h"

#define APPLY(T)                    \
    do {                            \
        T *a = inout;               \
        const T *b = in;            \
        switch (op) {               \
        case PA_SMI_SUM:            \
            *a += *b;               \
            break;                  \
        case PA_SMI_MAX:            \
            *a = *a < *b ? *b : *a; \
            break;                  \
        case PA_SMI_MIN:            \
            *a = *b < *a ? *b : *a; \
            break;                  \
        default:                    \
            *a = *b;                \
        }                           \
    } while (0)

static void apply(pa_smi_type type, pa_smi_op op, void *inout, const void *in)
{
    switch (type) {
    case PA_SMI_DOUBLE:
        APPLY(double);
        break;
    case PA_SMI_FLOAT:
        APPLY(float);
        break;
    case PA_SMI_INT32:
        APPLY(int32_t);
        break;
    default:
        APPLY(int64_t);
    }
}

typedef struct {
    pa_smi_op op;
    pa_smi_function function;
    int user; /* pa_smi_combine_function: apply `function`, not `op` */
} combiner;

static int check(const pa_smi_region *r, const combiner *c, pa_smi_type type)
{
    static const char call[] = "pa_smi_combine";
    if (!r->replicated)
        return pa_smi_fail(PA_SMI_ERR_STATE, call,
                           "the region is not replicated: a combine needs a pa_smi_replicate "
                           "before it");
    if (type != r->type)
        return pa_smi_fail(PA_SMI_ERR_TYPE, call,
                           "the copies are combined as %s but the region holds %s",
                           pa_smi_type_name(type), pa_smi_type_name(r->type));
    if (c->user && !c->function)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the combine function is NULL");
    if (!c->user && !pa_smi_op_valid(c->op))
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                           "the operation %d is not one of PA_SMI_SUM, PA_SMI_MAX, PA_SMI_MIN, "
                           "PA_SMI_REPLACE",
                           (int)c->op);
    return PA_SMI_OK;
}

/* One record: the element's offset in its owner's part, then its value. */
static size_t record_size(const pa_smi_region *r) { return sizeof(int64_t) + r->size; }

static void apply_records(pa_smi_region *r, const combiner *c, const char *records, int count)
{
    size_t size = record_size(r);
    for (int k = 0; k < count; k++, records += size) {
        int64_t offset;
        memcpy(&offset, records, sizeof offset);
        char *target = r->local + (size_t)offset * r->size;
        if (c->user)
            c->function(target, records + sizeof offset, 1);
        else
            apply(r->type, c->op, target, records + sizeof offset);
    }
}

/* The touched elements as records, grouped by owner; counts[p] and displs[p] in records. */
static char *pack(pa_smi_region *r, int *counts, int *displs)
{
    size_t size = record_size(r);
    int *owner = malloc(sizeof(int) * (size_t)(r->ntouched + 1));
    char *records = malloc(size * (size_t)(r->ntouched + 1));
    if (!owner || !records) {
        free(owner), free(records);
        return NULL;
    }
    memset(counts, 0, sizeof(int) * (size_t)r->np);
    for (int64_t t = 0; t < r->ntouched; t++)
        counts[owner[t] = pa_smi_owner_of(r, r->touched[t])]++;
    displs[0] = 0;
    for (int p = 1; p < r->np; p++)
        displs[p] = displs[p - 1] + counts[p - 1];
    int *cursor = calloc((size_t)r->np, sizeof(int));
    if (!cursor) {
        free(owner), free(records);
        return NULL;
    }
    for (int64_t t = 0; t < r->ntouched; t++) {
        int p = owner[t];
        char *at = records + size * (size_t)(displs[p] + cursor[p]++);
        int64_t i = r->touched[t], offset = i - r->first[p];
        memcpy(at, &offset, sizeof offset);
        memcpy(at + sizeof offset, r->copy + (size_t)pa_smi_copy_index(r, i) * r->size, r->size);
    }
    free(cursor), free(owner);
    return records;
}

static int combine(pa_smi_region *r, const combiner *c, pa_smi_type type)
{
    static const char call[] = "pa_smi_combine";
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    int np = r->np, me = r->rank;
    int *counts = calloc((size_t)np * 4, sizeof(int));
    if (!counts)
        return pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the counts");
    int *displs = counts + np, *in_counts = counts + 2 * np, *in_displs = counts + 3 * np;
    int status = check(r, c, type);
    char *records = status ? NULL : pack(r, counts, displs);
    if (!status && !records)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the touched records");
    int own = status ? 0 : counts[me], own_at = status ? 0 : displs[me];
    for (int p = 0; p < np; p++) /* own records are applied in place, not sent */
        counts[p] = status ? -1 : p == me ? 0 : counts[p];
    MPI_Alltoall(counts, 1, MPI_INT, in_counts, 1, MPI_INT, r->comm);
    int failed = -1;
    for (int p = 0; p < np; p++)
        failed = in_counts[p] < 0 && failed < 0 ? p : failed;
    if (status || failed >= 0) {
        free(counts), free(records);
        return status
                   ? status
                   : pa_smi_fail(PA_SMI_ERR_REMOTE, call, "the call failed on process %d", failed);
    }
    size_t size = record_size(r);
    int received = 0;
    for (int p = 0; p < np; p++) {
        in_displs[p] = received;
        received += in_counts[p];
    }
    char *incoming = malloc(size * (size_t)(received + 1));
    int ok = incoming != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, r->comm);
    if (!all_ok) {
        free(counts), free(records), free(incoming);
        return ok ? pa_smi_fail(PA_SMI_ERR_REMOTE, call, "another process ran out of memory")
                  : pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for %d records", received);
    }
    MPI_Datatype record;
    MPI_Type_contiguous((int)size, MPI_BYTE, &record);
    MPI_Type_commit(&record);
    int rc = MPI_Alltoallv(records, counts, displs, record, incoming, in_counts, in_displs, record,
                           r->comm);
    MPI_Type_free(&record);
    if (rc == MPI_SUCCESS) {
        for (int p = 0; p < np; p++)
            if (p == me)
                apply_records(r, c, records + size * (size_t)own_at, own);
            else
                apply_records(r, c, incoming + size * (size_t)in_displs[p], in_counts[p]);
        for (int p = 0; p < np; p++)
            r->counts.combined += counts[p];
        r->replicated = 0;
        if (r->shared != MPI_WIN_NULL)
            MPI_Win_sync(r->shared);
    }
    free(counts), free(records), free(incoming);
    return pa_smi_mpi(rc, call, "MPI_Alltoallv");
}

int pa_smi_combine(pa_smi_region *region, pa_smi_op op, pa_smi_type type)
{
    combiner c = {op, NULL, 0};
    return combine(region, &c, type);
}

int pa_smi_combine_function(pa_smi_region *region, pa_smi_function function, pa_smi_type type)
{
    combiner c = {PA_SMI_SUM, function, 1};
    return combine(region, &c, type);
}
