/* Combine: the switch back from replication that merges the copies into the region. Only the
 * touched elements travel. Each process scans its copy's touch bitmap (untouched words skipped
 * 64 elements at a time): the runs of touched elements in its own part are applied straight from
 * the copy, the touched elements of other parts become (offset, value) records (elements
 * increase, so they come grouped by owner without sorting), one message per other process
 * (MPI_Isend, empty where it touched nothing there). Each owner takes one message from every other process (MPI_Mprobe: its size
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
/* The same for `count` (offset, value) records into my part `local`. */
typedef void (*records_applier)(const combiner *c, char *local, const char *records, int count);
struct combiner {
    pa_smi_op op;
    pa_smi_function function;
    int user;                      /* pa_smi_combine_function: apply `function`, not `op` */
    applier apply;                 /* chosen once per combine */
    records_applier apply_records; /* likewise */
    size_t size;                   /* bytes per element */
    size_t offset_bytes;           /* of a record's offset */
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
/* A record's offset, 4 or 8 bytes (the region's offset_bytes), unaligned. */
static inline __attribute__((always_inline)) int64_t load_offset(const char *record, size_t bytes)
{
    if (bytes == sizeof(uint32_t)) {
        uint32_t offset;
        memcpy(&offset, record, sizeof offset);
        return offset;
    }
    int64_t offset;
    memcpy(&offset, record, sizeof offset);
    return offset;
}

static inline void store_offset(char *record, int64_t offset, size_t bytes)
{
    if (bytes == sizeof(uint32_t)) {
        uint32_t narrow = (uint32_t)offset;
        memcpy(record, &narrow, sizeof narrow);
    } else {
        memcpy(record, &offset, sizeof offset);
    }
}

/* The records of another process, (offset, value) each, applied to my part: the applier `name`
 * called directly per record, so that it is inlined (a call through a pointer per record cost
 * more than the operation), in a loop for each offset width. */
#define RECORDS_APPLIER(T, name)                                                               \
    static inline __attribute__((always_inline)) void name##_records_of(                       \
        const combiner *c, char *local, const char *records, int count, size_t bytes)          \
    {                                                                                          \
        for (int k = 0; k < count; k++, records += bytes + sizeof(T)) {                        \
            T value; /* unaligned in the record (12 bytes for a double): copied out */         \
            memcpy(&value, records + bytes, sizeof value);                                     \
            name(c, local + (size_t)load_offset(records, bytes) * sizeof(T), &value, 1);       \
        }                                                                                      \
    }                                                                                          \
    static void name##_records(const combiner *c, char *local, const char *records, int count) \
    {                                                                                          \
        if (c->offset_bytes == sizeof(uint32_t))                                               \
            name##_records_of(c, local, records, count, sizeof(uint32_t));                     \
        else                                                                                   \
            name##_records_of(c, local, records, count, sizeof(int64_t));                      \
    }
#define APPLIERS(T, name)                             \
    APPLIER(T, name##_sum, a[k] + b[k])               \
    APPLIER(T, name##_max, a[k] < b[k] ? b[k] : a[k]) \
    APPLIER(T, name##_min, b[k] < a[k] ? b[k] : a[k]) \
    APPLIER(T, name##_replace, b[k])                  \
    RECORDS_APPLIER(T, name##_sum)                    \
    RECORDS_APPLIER(T, name##_max)                    \
    RECORDS_APPLIER(T, name##_min)                    \
    RECORDS_APPLIER(T, name##_replace)
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
static const records_applier records_appliers[][4] = {
    [PA_SMI_DOUBLE] = {double_sum_records, double_max_records, double_min_records,
                       double_replace_records},
    [PA_SMI_FLOAT] = {float_sum_records, float_max_records, float_min_records,
                      float_replace_records},
    [PA_SMI_INT32] = {int32_sum_records, int32_max_records, int32_min_records,
                      int32_replace_records},
    [PA_SMI_INT64] = {int64_sum_records, int64_max_records, int64_min_records,
                      int64_replace_records},
};

static void user_function(const combiner *c, void *a, const void *b, int64_t count)
{
    c->function(a, b, count);
}

/* One record: the element's offset in its owner's part (4 bytes where every part has fewer than
 * 2^32 elements, else 8), then its value, unpadded: 12 bytes for a double, not 16. */
static size_t record_size(const pa_smi_region *r) { return r->offset_bytes + r->size; }

/* The records for a user's function: one call per record, with the value copied out of the
 * record to a place aligned for its type. */
static void user_records(const combiner *c, char *local, const char *records, int count)
{
    size_t bytes = c->size, size = c->offset_bytes + bytes;
    for (int k = 0; k < count; k++, records += size) {
        union {
            double d;
            float f;
            int32_t i32;
            int64_t i64;
        } value;
        memcpy(&value, records + c->offset_bytes, bytes);
        c->function(local + (size_t)load_offset(records, c->offset_bytes) * bytes, &value, 1);
    }
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

/* The place in the copy of range k's elements within lo .. hi - 1: bits *begin .. *end - 1 (none:
 * *begin >= *end); element i is at bit i + *shift. */
static void range_bits(const pa_smi_region *r, int k, int64_t lo, int64_t hi, int64_t *begin,
                       int64_t *end, int64_t *shift)
{
    int64_t first = r->range_lo[k] > lo ? r->range_lo[k] : lo;
    int64_t last = r->range_hi[k] < hi ? r->range_hi[k] : hi;
    *shift = r->range_at[k] - r->range_lo[k];
    *begin = first + *shift, *end = last + *shift;
}

/* My own touched runs applied straight from the copy (a scan of my part's bits only). */
static void apply_mine(pa_smi_region *r, const combiner *c)
{
    int64_t lo = r->first[r->rank], hi = r->first[r->rank + 1];
    for (int k = 0; k < r->nranges; k++) {
        int64_t begin, end, shift, start, stop;
        range_bits(r, k, lo, hi, &begin, &end, &shift);
        for (int64_t from = begin; next_run(r->touched_bits, from, end, &start, &stop); from = stop)
            c->apply(c, r->local + (size_t)(start - shift - lo) * r->size,
                     r->copy + (size_t)start * r->size, stop - start);
    }
}

/* *buffer with room for `bytes`, its content kept, grown at least twofold and kept for the next
 * call: 0, or -1 out of memory (the buffer unchanged). */
static int grow(char **buffer, size_t *capacity, size_t bytes)
{
    if (bytes <= *capacity)
        return 0;
    size_t larger = bytes > 2 * *capacity ? bytes : 2 * *capacity;
    char *moved = realloc(*buffer, larger);
    if (!moved)
        return -1;
    *buffer = moved, *capacity = larger;
    return 0;
}

/* The records of range k's touched elements within lo .. hi - 1 (none of them mine), appended at
 * *used bytes, counted per owner; *owner, the owner so far, only advances. Bit by bit: a record
 * is per element anyway, and in a scattered pattern a run is one element, whose run search cost
 * more. The region's fields are read once into locals: the records' stores could alias them.
 * 0, or -1 out of memory. */
static int pack_range(pa_smi_region *r, int k, int64_t lo, int64_t hi, int *owner, int *counts,
                      size_t *used)
{
    pa_smi_combining *b = &r->combining;
    const int64_t *first = r->first;
    const uint64_t *touched = r->touched_bits;
    const char *copy = r->copy;
    size_t value = r->size, width = r->offset_bytes, size = width + value;
    int p = *owner, counted = 0; /* records for p not yet in counts[p] */
    int64_t begin, end, shift;
    range_bits(r, k, lo, hi, &begin, &end, &shift);
    for (int64_t word = begin >> 6; begin < end && word <= (end - 1) >> 6; word++) {
        uint64_t bits = touched[word];
        if (word == begin >> 6)
            bits &= ~UINT64_C(0) << (begin & 63);
        if (word == (end - 1) >> 6 && (end & 63))
            bits &= (UINT64_C(1) << (end & 63)) - 1;
        if (!bits)
            continue;
        if (grow(&b->records, &b->records_bytes, *used + 64 * size))
            return -1;
        char *record = b->records + *used;
        for (; bits; bits &= bits - 1, record += size, counted++) {
            int64_t at = word * 64 + __builtin_ctzll(bits), i = at - shift;
            while (first[p + 1] <= i) /* elements increase: the owner only advances */
                counts[p] += counted, counted = 0, p++;
            store_offset(record, i - first[p], width);
            pa_smi_copy_element(record + width, copy + (size_t)at * value, value);
        }
        *used = (size_t)(record - b->records);
    }
    counts[p] += counted;
    *owner = p;
    return 0;
}

/* The touched elements of other processes' parts as records, grouped by owner (the elements
 * increase, so their owners do): counts[p] and displs[p] in records (counts[me] = 0: mine are
 * applied in place). NULL out of memory. */
static char *pack(pa_smi_region *r, int *counts, int *displs)
{
    pa_smi_combining *b = &r->combining;
    memset(counts, 0, sizeof(int) * (size_t)r->np);
    if (grow(&b->records, &b->records_bytes, 1)) /* a buffer to send even when none is touched */
        return NULL;
    int owner = 0;
    size_t used = 0;
    int64_t mine_lo = r->first[r->rank], mine_hi = r->first[r->rank + 1];
    for (int k = 0; k < r->nranges; k++)
        if (pack_range(r, k, 0, mine_lo, &owner, counts, &used) ||
            pack_range(r, k, mine_hi, r->n, &owner, counts, &used))
            return NULL;
    displs[0] = 0;
    for (int p = 1; p < r->np; p++)
        displs[p] = displs[p - 1] + counts[p - 1];
    return b->records;
}

enum {
    COMBINE_TAG = 7301
};

/* One message from every other process: its bytes in *incoming[p], the first process that sent
 * the error byte in *failed (-1: none). Returns 0, or -1 out of memory. */
static int receive(pa_smi_region *r, size_t size, int *in_counts, int *failed)
{
    pa_smi_combining *b = &r->combining;
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
        if (grow(&b->incoming[p], &b->incoming_bytes[p], (size_t)bytes + 1)) {
            short_of_memory = 1; /* the message stays unreceived: this process fails */
            continue;
        }
        MPI_Mrecv(b->incoming[p], bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        in_counts[p] = (int)((size_t)bytes / size);
        if ((size_t)bytes % size && *failed < 0)
            *failed = p;
    }
    return short_of_memory ? -1 : 0;
}

/* The per-process arrays, on the first combine: 0, or -1 out of memory. */
static int combining_arrays(pa_smi_region *r)
{
    pa_smi_combining *b = &r->combining;
    size_t np = (size_t)r->np;
    if (b->counts && b->incoming && b->incoming_bytes && b->sends)
        return 0;
    pa_smi_combining_free(r);
    b->counts = calloc(np * 3, sizeof(int));
    b->incoming = calloc(np, sizeof(char *));
    b->incoming_bytes = calloc(np, sizeof(size_t));
    b->sends = malloc(sizeof(MPI_Request) * np);
    return b->counts && b->incoming && b->incoming_bytes && b->sends ? 0 : -1;
}

void pa_smi_combining_free(pa_smi_region *r)
{
    pa_smi_combining *b = &r->combining;
    for (int p = 0; b->incoming && p < r->np; p++)
        free(b->incoming[p]);
    free(b->counts), free(b->incoming), free(b->incoming_bytes), free(b->sends), free(b->records);
    memset(b, 0, sizeof *b);
}

/* My records to every other process, or the error byte when this process cannot combine. */
static void send_all(pa_smi_region *r, int status, const char *records, const int *counts,
                     const int *displs, int *nsends)
{
    static const char error_byte = 0;
    size_t size = record_size(r);
    *nsends = 0;
    for (int p = 0; p < r->np; p++)
        if (p != r->rank) {
            MPI_Request *request = &r->combining.sends[(*nsends)++];
            if (status)
                MPI_Isend(&error_byte, 1, MPI_BYTE, p, COMBINE_TAG, r->comm, request);
            else
                MPI_Isend(records + size * (size_t)displs[p], (int)(size * (size_t)counts[p]),
                          MPI_BYTE, p, COMBINE_TAG, r->comm, request);
        }
}

/* In process order: my own runs from the copy (a scan of my part's bits only), the others'
 * records. */
static void apply_all(pa_smi_region *r, const combiner *c, const int *in_counts)
{
    combiner chosen = *c;
    chosen.apply = c->user ? user_function : appliers[r->type][c->op];
    chosen.apply_records = c->user ? user_records : records_appliers[r->type][c->op];
    chosen.size = r->size;
    chosen.offset_bytes = r->offset_bytes;
    for (int p = 0; p < r->np; p++)
        if (p == r->rank)
            apply_mine(r, &chosen);
        else
            chosen.apply_records(&chosen, r->local, r->combining.incoming[p], in_counts[p]);
}

static int combine(pa_smi_region *r, const combiner *c, pa_smi_type type)
{
    static const char call[] = "pa_smi_combine";
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    if (combining_arrays(r)) /* cannot even tell the others: they wait for it */
        return pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the counts");
    int np = r->np, *counts = r->combining.counts;
    int *displs = counts + np, *in_counts = counts + 2 * np;
    int status = check(r, c, type);
    char *records = status ? NULL : pack(r, counts, displs);
    if (!status && !records)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the touched records");
    int nsends, failed;
    send_all(r, status, records, counts, displs, &nsends);
    int received = receive(r, record_size(r), in_counts, &failed);
    MPI_Waitall(nsends, r->combining.sends, MPI_STATUSES_IGNORE);
    if (!status && received)
        status = pa_smi_fail(PA_SMI_ERR_MEMORY, call,
                             "out of memory for the records of other "
                             "processes: this process's part misses their contributions");
    if (!status && failed >= 0)
        status = pa_smi_fail(PA_SMI_ERR_REMOTE, call, "the call failed on process %d", failed);
    if (status)
        return status;
    apply_all(r, c, in_counts);
    for (int p = 0; p < np; p++)
        r->counts.combined += counts[p];
    r->replicated = 0;
    if (r->shared != MPI_WIN_NULL)
        MPI_Win_sync(r->shared);
    return PA_SMI_OK;
}

int pa_smi_combine(pa_smi_region *region, pa_smi_op op, pa_smi_type type)
{
    combiner c = {op, NULL, 0, NULL, NULL, 0, 0};
    return combine(region, &c, type);
}

int pa_smi_combine_function(pa_smi_region *region, pa_smi_function function, pa_smi_type type)
{
    combiner c = {PA_SMI_SUM, function, 1, NULL, NULL, 0, 0};
    return combine(region, &c, type);
}
