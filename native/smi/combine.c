/* Combine: the switch back from replication that merges the copies into the region. Only the
 * touched elements travel. Each process scans its copy's touch bitmap for runs of touched
 * elements (untouched words skipped 64 elements at a time; runs increase, so they come grouped
 * by owner without sorting): its own runs are applied straight from the copy, the others become
 * (offset, value) records, one message per other process (MPI_Isend, empty where it touched
 * nothing there). Each owner takes one message from every other process (MPI_Mprobe: its size
 * is the count, so no count exchange precedes it) and applies them in process order, its own
 * runs at its own place, so that the result does not depend on timing. One round of
 * point-to-point messages and no collective: processes synchronize only pairwise. A process that
 * cannot combine sends a one-byte message instead (no whole number of records), and every
 * process then returns an error without changing the region. */
#include <stdlib.h>
#include <string.h>

#include "smi_internal.h"

typedef struct combiner combiner;
/* a[k] = op(a[k], b[k]) for k < count. */
typedef void (*applier)(const combiner *c, void *a, const void *b, int64_t count);
struct combiner {
    pa_smi_op op;
    pa_smi_function function;
    int user;      /* pa_smi_combine_function: apply `function`, not `op` */
    applier apply; /* chosen once per combine */
};

#define APPLIER(T, name, expression)                                                \
    static void name(const combiner *c, void *inout, const void *in, int64_t count) \
    {                                                                               \
        (void)c;                                                                    \
        T *a = inout;                                                               \
        const T *b = in;                                                            \
        for (int64_t k = 0; k < count; k++)                                         \
            a[k] = (expression);                                                    \
    }
#define APPLIERS(T, name)                             \
    APPLIER(T, name##_sum, a[k] + b[k])               \
    APPLIER(T, name##_max, a[k] < b[k] ? b[k] : a[k]) \
    APPLIER(T, name##_min, b[k] < a[k] ? b[k] : a[k]) \
    APPLIER(T, name##_replace, b[k])
APPLIERS(double, double)
APPLIERS(float, float)
APPLIERS(int32_t, int32)
APPLIERS(int64_t, int64)

static const applier appliers[][4] = {
    [PA_SMI_DOUBLE] = {double_sum, double_max, double_min, double_replace},
    [PA_SMI_FLOAT] = {float_sum, float_max, float_min, float_replace},
    [PA_SMI_INT32] = {int32_sum, int32_max, int32_min, int32_replace},
    [PA_SMI_INT64] = {int64_sum, int64_max, int64_min, int64_replace},
};

static void user_function(const combiner *c, void *a, const void *b, int64_t count)
{
    c->function(a, b, count);
}
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
        c->apply(c, r->local + (size_t)offset * r->size, records + sizeof offset, 1);
    }
}

/* The next run of set bits at or after `from`, before `end`: [*start, *stop); 0 when none. */
static int next_run(const uint64_t *bits, int64_t from, int64_t end, int64_t *start, int64_t *stop)
{
    int64_t at = from;
    while (at < end) { /* the first set bit */
        uint64_t word = bits[at >> 6] >> (at & 63);
        if (word) {
            at += __builtin_ctzll(word);
            break;
        }
        at = (at | 63) + 1;
    }
    if (at >= end)
        return 0;
    *start = at;
    while (at < end) { /* the first clear bit after it */
        uint64_t word = ~bits[at >> 6] >> (at & 63);
        if (word && (at & 63) + __builtin_ctzll(word) < 64) {
            at += __builtin_ctzll(word);
            break;
        }
        at = (at | 63) + 1;
    }
    *stop = at < end ? at : end;
    return 1;
}

/* Visit every touched run of the copy, in increasing element order, split at owners:
 * visit(r, owner, first element, place in the copy, count, context). */
typedef void (*run_visitor)(pa_smi_region *r, int owner, int64_t i, int64_t at, int64_t count,
                            void *context);
static void each_run(pa_smi_region *r, run_visitor visit, void *context)
{
    int p = 0;
    for (int k = 0; k < r->nranges; k++) {
        int64_t begin = r->range_at[k], end = begin + r->range_hi[k] - r->range_lo[k];
        int64_t start, stop;
        for (int64_t from = begin; next_run(r->touched_bits, from, end, &start, &stop);
             from = stop) {
            int64_t i = r->range_lo[k] + start - begin, count = stop - start, at = start;
            while (count > 0) {
                while (r->first[p + 1] <= i) /* elements increase: the owner only advances */
                    p++;
                int64_t piece = r->first[p + 1] - i < count ? r->first[p + 1] - i : count;
                visit(r, p, i, at, piece, context);
                i += piece, at += piece, count -= piece;
            }
        }
    }
}

static void count_run(pa_smi_region *r, int owner, int64_t i, int64_t at, int64_t count,
                      void *context)
{
    (void)i, (void)at;
    if (owner != r->rank)
        ((int *)context)[owner] += (int)count;
}

typedef struct {
    char *records;
    size_t size;
} packing;

static void pack_run(pa_smi_region *r, int owner, int64_t i, int64_t at, int64_t count,
                     void *context)
{
    packing *p = context;
    if (owner == r->rank)
        return;
    for (int64_t k = 0; k < count; k++, p->records += p->size) {
        int64_t offset = i + k - r->first[owner];
        memcpy(p->records, &offset, sizeof offset);
        memcpy(p->records + sizeof offset, r->copy + (size_t)(at + k) * r->size, r->size);
    }
}

static void apply_run(pa_smi_region *r, int owner, int64_t i, int64_t at, int64_t count,
                      void *context)
{
    if (owner == r->rank)
        ((const combiner *)context)
            ->apply(context, r->local + (size_t)(i - r->first[owner]) * r->size,
                    r->copy + (size_t)at * r->size, count);
}

/* The touched elements of other processes' parts as records, grouped by owner: counts[p] and
 * displs[p] in records (counts[me] = 0: mine are applied in place). */
static char *pack(pa_smi_region *r, int *counts, int *displs)
{
    memset(counts, 0, sizeof(int) * (size_t)r->np);
    each_run(r, count_run, counts);
    displs[0] = 0;
    for (int p = 1; p < r->np; p++)
        displs[p] = displs[p - 1] + counts[p - 1];
    packing packed = {malloc(record_size(r) * (size_t)(displs[r->np - 1] + counts[r->np - 1] + 1)),
                      record_size(r)};
    char *records = packed.records;
    if (records)
        each_run(r, pack_run, &packed);
    return records;
}

enum {
    COMBINE_TAG = 7301
};

/* One message from every other process: its bytes in *incoming[p] (NULL: none), the first
 * process that sent the error byte in *failed (-1: none). Returns 0, or -1 out of memory. */
static int receive(pa_smi_region *r, size_t size, char **incoming, int *in_counts, int *failed)
{
    int short_of_memory = 0;
    *failed = -1;
    for (int p = 0; p < r->np; p++) {
        if (p == r->rank)
            continue;
        MPI_Message message;
        MPI_Status status;
        int bytes;
        MPI_Mprobe(p, COMBINE_TAG, r->comm, &message, &status);
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        incoming[p] = malloc((size_t)bytes + 1);
        if (!incoming[p]) { /* the message stays unreceived: this process fails */
            short_of_memory = 1;
            continue;
        }
        MPI_Mrecv(incoming[p], bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        in_counts[p] = (int)((size_t)bytes / size);
        if ((size_t)bytes % size && *failed < 0)
            *failed = p;
    }
    return short_of_memory ? -1 : 0;
}

static int combine(pa_smi_region *r, const combiner *c, pa_smi_type type)
{
    static const char call[] = "pa_smi_combine";
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    int np = r->np, me = r->rank;
    int *counts = calloc((size_t)np * 3, sizeof(int));
    char **incoming = calloc((size_t)np, sizeof(char *));
    MPI_Request *sends = malloc(sizeof(MPI_Request) * (size_t)np);
    int status = counts && incoming && sends
                     ? check(r, c, type)
                     : pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the counts");
    int *displs = counts ? counts + np : NULL, *in_counts = counts ? counts + 2 * np : NULL;
    char *records = status ? NULL : pack(r, counts, displs);
    if (!status && !records)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the touched records");
    if (!counts || !incoming || !sends) { /* cannot even tell the others: they wait for it */
        free(counts), free(incoming), free(sends);
        return status;
    }
    size_t size = record_size(r);
    char error_byte = 0;
    int nsends = 0;
    for (int p = 0; p < np; p++)
        if (p != me) {
            if (status)
                MPI_Isend(&error_byte, 1, MPI_BYTE, p, COMBINE_TAG, r->comm, &sends[nsends++]);
            else
                MPI_Isend(records + size * (size_t)displs[p], (int)(size * (size_t)counts[p]),
                          MPI_BYTE, p, COMBINE_TAG, r->comm, &sends[nsends++]);
        }
    int failed;
    int received = receive(r, size, incoming, in_counts, &failed);
    MPI_Waitall(nsends, sends, MPI_STATUSES_IGNORE);
    if (!status && received)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call,
                             "out of memory for the records of other "
                             "processes: this process's part misses their contributions");
    if (!status && failed >= 0)
        status = pa_smi_fail(PA_SMI_ERR_REMOTE, call, "the call failed on process %d", failed);
    if (!status) {
        combiner chosen = *c;
        chosen.apply = c->user ? user_function : appliers[r->type][c->op];
        for (int p = 0; p < np; p++)
            if (p == me)
                each_run(r, apply_run, &chosen);
            else
                apply_records(r, &chosen, incoming[p], in_counts[p]);
        for (int p = 0; p < np; p++)
            r->counts.combined += counts[p];
        r->replicated = 0;
        if (r->shared != MPI_WIN_NULL)
            MPI_Win_sync(r->shared);
    }
    for (int p = 0; p < np; p++)
        free(incoming[p]);
    free(counts), free(incoming), free(sends), free(records);
    return status;
}

int pa_smi_combine(pa_smi_region *region, pa_smi_op op, pa_smi_type type)
{
    combiner c = {op, NULL, 0, NULL};
    return combine(region, &c, type);
}

int pa_smi_combine_function(pa_smi_region *region, pa_smi_function function, pa_smi_type type)
{
    combiner c = {PA_SMI_SUM, function, 1, NULL};
    return combine(region, &c, type);
}
