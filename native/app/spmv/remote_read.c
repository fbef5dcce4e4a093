/* Remote read, y = A x, on libpa-smi (native/smi): x is a shared region of n doubles divided
 * blocked like the rows (each rank its block of x).
 *
 *   read_element    one pa_smi_get per remote nonzero, complete on return (MPI_Get +
 *                   MPI_Win_flush on an RMA-only region): the naive shared-memory way, every
 *                   remote load waits for its element (so that one access costs the measured
 *                   latency t_r of the model E1)
 *   read_replicate  x switched to replication once per product: a partial copy of my block and
 *                   the distinct remote columns (pa_smi_replicate with their ranges; one MPI_Get
 *                   per run of consecutive columns of one owner, one flush), a purely local
 *                   product on the copy, then pa_smi_release (model E2)
 *   read_shared     a node-aware region: on one node the parts are one span of an
 *                   MPI_Win_allocate_shared window (pa_smi_span), remote elements direct loads
 *
 * Every product ends with a barrier, the step an iterative solver needs before x changes; it is
 * not counted in the rank's own time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "pa_smi.h"
#include "spmv.h"
#include "timer.h"

typedef struct {
    const pa_block *b;
    pa_smi_region *x;
    const double *x_mine; /* my block of x, in the region */
    double *y;            /* rows */
    /* read_replicate: */
    int *compact; /* per nonzero: its place in the copy */
    int nranges;
    int64_t *range_lo, *range_hi; /* my block and the ghosts as runs of consecutive columns */
    long long transfers;          /* block transfers from other ranks per product */
    /* read_shared: */
    const double *x_shared; /* all of x, the node's parts end to end */
} read_state;

static void read_finish(void *state)
{
    read_state *s = state;
    if (s->x && pa_smi_free(&s->x))
        pa_comm_wrong("%s", pa_smi_error());
    free(s->y), free(s->compact), free(s->range_lo), free(s->range_hi);
    free(s);
}

/* x as a region, my block written, visible to every rank after the barrier. */
static read_state *region_setup(const pa_block *b, unsigned flags, const char **why)
{
    read_state *s = pa_calloc(1, sizeof *s, "the remote-read state");
    s->b = b;
    s->y = pa_calloc((size_t)b->rows + 1, sizeof(double), "the product vector");
    if (pa_spmv_region(b, flags, &s->x, why)) {
        read_finish(s);
        return NULL;
    }
    s->x_mine = pa_smi_local(s->x);
    if (b->rows)
        memcpy(pa_smi_local(s->x), b->x_mine, sizeof(double) * (size_t)b->rows);
    pa_spmv_smi(pa_smi_barrier(s->x));
    return s;
}

static const double *read_result(void *state) { return ((read_state *)state)->y; }

/* -- read_element ----------------------------------------------------------------------------- */

static void *element_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    return region_setup(b, PA_SMI_RMA_ONLY, why);
}

/* One remote element of x, checked. Out of line: with the get and its check inline, the
 * compiler laid the product loop out worse (the local path too), which cost read_element 8-11 %
 * against the hand-coded loop on jagmesh7; as a call the loop matches it (measured in one run,
 * same window: 1.01). */
static __attribute__((noinline)) double remote_x(pa_smi_region *x, int64_t column)
{
    double value;
    pa_spmv_smi(pa_smi_get(x, column, &value));
    return value;
}

static double element_product(void *state)
{
    read_state *s = state;
    const pa_block *b = s->b;
    uint64_t start = pa_ticks();
    for (int i = 0; i < b->rows; i++) {
        double sum = 0.0;
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            double x =
                b->owner[k] == b->rank ? s->x_mine[b->offset[k]] : remote_x(s->x, b->colind[k]);
            sum += b->values[k] * x;
        }
        s->y[i] = sum;
    }
    double seconds = pa_seconds_since(start);
    MPI_Barrier(MPI_COMM_WORLD);
    return seconds;
}

static long long element_operations(void *state)
{
    return ((read_state *)state)->b->remote_accesses;
}

const pa_variant pa_read_element = {
    .name = "read_element",
    .operation = "y = A x",
    .definition = "one pa_smi_get of one double per remote nonzero (MPI_Get + MPI_Win_flush on "
                  "an RMA-only libpa-smi region); local x read from my part of the region",
    .model = "E1",
    .latency = "get",
    .setup = element_setup,
    .product = element_product,
    .result = read_result,
    .remote_operations = element_operations,
    .finish = read_finish,
};

/* -- read_replicate --------------------------------------------------------------------------- */

/* The ranges of the copy, once: my block and the ghosts (increasing, outside my block) merged
 * into runs of consecutive columns; then each nonzero's place in the copy, from one replication
 * that also counts the block transfers of a product. */
static void replicate_index(read_state *s)
{
    const pa_block *b = s->b;
    size_t most = (size_t)b->nghosts + 2;
    s->range_lo = pa_alloc(most, sizeof(int64_t), "range_lo");
    s->range_hi = pa_alloc(most, sizeof(int64_t), "range_hi");
    s->compact = pa_alloc((size_t)(b->nnz ? b->nnz : 1), sizeof(int), "compact");
    int n = s->nranges = pa_spmv_runs(b, 1, s->range_lo, s->range_hi);
    pa_smi_counts before, after;
    pa_spmv_smi(pa_smi_counts_of(s->x, &before));
    pa_spmv_smi(pa_smi_replicate(s->x, n, s->range_lo, s->range_hi, PA_SMI_FETCH));
    for (long long k = 0; k < b->nnz; k++)
        s->compact[k] = (int)pa_smi_copy_index(s->x, b->colind[k]);
    pa_spmv_smi(pa_smi_release(s->x));
    pa_spmv_smi(pa_smi_counts_of(s->x, &after));
    s->transfers = after.transfers - before.transfers;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void *replicate_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    read_state *s = region_setup(b, PA_SMI_RMA_ONLY, why);
    if (s)
        replicate_index(s);
    return s;
}

static double replicate_product(void *state)
{
    read_state *s = state;
    uint64_t start = pa_ticks();
    pa_spmv_smi(pa_smi_replicate(s->x, s->nranges, s->range_lo, s->range_hi, PA_SMI_FETCH));
    pa_gather_rows(s->b, s->compact, pa_smi_copy(s->x), s->y);
    pa_spmv_smi(pa_smi_release(s->x));
    double seconds = pa_seconds_since(start);
    MPI_Barrier(MPI_COMM_WORLD);
    return seconds;
}

static long long replicate_operations(void *state) { return ((read_state *)state)->transfers; }

const pa_variant pa_read_replicate = {
    .name = "read_replicate",
    .operation = "y = A x",
    .definition = "x switched to replication once per product (pa_smi_replicate of my block and "
                  "the distinct remote columns: one MPI_Get per run of consecutive columns of "
                  "one owner, one flush), a local product on the copy, then pa_smi_release",
    .model = "E2",
    .latency = "get",
    .setup = replicate_setup,
    .product = replicate_product,
    .result = read_result,
    .remote_operations = replicate_operations,
    .finish = read_finish,
};

/* -- read_shared ------------------------------------------------------------------------------ */

static void *shared_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    read_state *s = region_setup(b, 0, why);
    if (!s)
        return NULL;
    s->x_shared = pa_smi_span(s->x, 0, b->n);
    int one_span = s->x_shared != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &one_span, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!one_span) {
        *why = "the ranks span more than one shared-memory node (MPI_Comm_split_type SHARED), "
               "and direct loads need every owner of x on the node; run all ranks on one host";
        read_finish(s);
        return NULL;
    }
    return s;
}

static double shared_product(void *state)
{
    read_state *s = state;
    uint64_t start = pa_ticks();
    pa_gather_rows(s->b, s->b->colind, s->x_shared, s->y);
    double seconds = pa_seconds_since(start);
    MPI_Barrier(MPI_COMM_WORLD);
    return seconds;
}

const pa_variant pa_read_shared = {
    .name = "read_shared",
    .operation = "y = A x",
    .definition = "x in a node-aware libpa-smi region: on one node its parts are one span of an "
                  "MPI_Win_allocate_shared window (MPI_Comm_split_type SHARED), remote elements "
                  "direct loads from the owner's part",
    .setup = shared_setup,
    .product = shared_product,
    .result = read_result,
    .remote_operations = pa_no_remote_operations,
    .finish = read_finish,
};
