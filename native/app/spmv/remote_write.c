/* Remote write, y = A^T x, on libpa-smi (native/smi): rank p holds rows i of A and x_i, and its
 * nonzero a_ij contributes a_ij x_i to y_j, which the owner of row j holds: a remote write when
 * j is not in p's block. y is a shared region of n doubles divided blocked like the rows.
 *
 *   write_element  one pa_smi_accumulate(PA_SMI_SUM) of one double per remote contribution,
 *                  complete on return (MPI_Accumulate + MPI_Win_flush on an RMA-only region);
 *                  local contributions go to a private array (a local store must not race with
 *                  the accumulates into the same window) and are added once every rank's
 *                  accumulates are complete (model E1)
 *   write_combine  replicate-and-combine: y switched to replication with a zero-started full
 *                  copy, the product scattered into it, the ghosts touched (by runs of
 *                  consecutive rows), my block copied into my part, then
 *                  pa_smi_combine(PA_SMI_SUM): each owner receives the (offset, value) records
 *                  of the entries others touched in its block and adds them (model E2: each
 *                  distinct remote entry written once) */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "spmv.h"
#include "timer.h"

typedef struct {
    const pa_block *b;
    pa_smi_region *y_region;
    double *y_mine; /* my block of y, in the region: the result */
    /* write_element: */
    double *y_local;
    /* write_combine: */
    long long sent; /* touched entries sent to other ranks per product */
    int nruns;
    int64_t *run_lo, *run_hi; /* the ghosts as runs of consecutive rows: touched */
} write_state;

static void write_finish(void *state)
{
    write_state *s = state;
    if (s->y_region)
        pa_spmv_smi(pa_smi_free(&s->y_region));
    free(s->y_local), free(s->run_lo), free(s->run_hi);
    free(s);
}

static write_state *write_setup(const pa_block *b, unsigned flags, const char **why)
{
    write_state *s = pa_calloc(1, sizeof *s, "the remote-write state");
    s->b = b;
    if (pa_spmv_region(b, flags, &s->y_region, why)) {
        write_finish(s);
        return NULL;
    }
    s->y_mine = pa_smi_local(s->y_region);
    return s;
}

static const double *write_result(void *state) { return ((write_state *)state)->y_mine; }

/* -- write_element ---------------------------------------------------------------------------- */

static void *element_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    write_state *s = write_setup(b, PA_SMI_RMA_ONLY, why);
    if (s)
        s->y_local = pa_calloc((size_t)b->rows + 1, sizeof(double), "y_local");
    return s;
}

/* One remote contribution, checked. Out of line, as remote_read.c's remote_x: with the
 * accumulate and its check inline the compiler laid the product loop out worse (the local path
 * too). */
static __attribute__((noinline)) void remote_add(pa_smi_region *y, int64_t row, double value)
{
    pa_spmv_smi(pa_smi_accumulate(y, row, &value, PA_SMI_SUM));
}

static double element_product(void *state)
{
    write_state *s = state;
    const pa_block *b = s->b;
    size_t bytes = sizeof(double) * (size_t)b->rows;
    uint64_t start = pa_ticks();
    memset(s->y_mine, 0, bytes);
    memset(s->y_local, 0, bytes);
    double seconds = pa_seconds_since(start);
    pa_spmv_smi(pa_smi_barrier(s->y_region)); /* the zeros before anyone accumulates */
    start = pa_ticks();
    for (int i = 0; i < b->rows; i++) {
        double xi = b->x_mine[i];
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            double contribution = b->values[k] * xi;
            if (b->owner[k] == b->rank)
                s->y_local[b->offset[k]] += contribution;
            else
                remote_add(s->y_region, b->colind[k], contribution);
        }
    }
    seconds += pa_seconds_since(start);
    pa_spmv_smi(pa_smi_barrier(s->y_region)); /* every accumulate is complete at its target */
    start = pa_ticks();
    for (int i = 0; i < b->rows; i++)
        s->y_mine[i] += s->y_local[i];
    return seconds + pa_seconds_since(start);
}

static long long element_operations(void *state)
{
    return ((write_state *)state)->b->remote_accesses;
}

const pa_variant pa_write_element = {
    .name = "write_element",
    .operation = "y = A^T x",
    .definition = "one pa_smi_accumulate(PA_SMI_SUM) of one double per remote contribution "
                  "(MPI_Accumulate + MPI_Win_flush on an RMA-only libpa-smi region); local "
                  "contributions into a private array added after a barrier",
    .model = "E1",
    .latency = "accumulate",
    .transposed = 1,
    .setup = element_setup,
    .product = element_product,
    .result = write_result,
    .remote_operations = element_operations,
    .finish = write_finish,
};

/* -- write_combine ---------------------------------------------------------------------------- */

static double combine_product(void *state);

static void *combine_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    write_state *s = write_setup(b, 0, why);
    if (!s)
        return NULL;
    size_t most = (size_t)b->nghosts + 1;
    s->run_lo = pa_alloc(most, sizeof(int64_t), "run_lo");
    s->run_hi = pa_alloc(most, sizeof(int64_t), "run_hi");
    s->nruns = pa_spmv_runs(b, 0, s->run_lo, s->run_hi);
    pa_smi_counts before, after;
    pa_spmv_smi(pa_smi_counts_of(s->y_region, &before));
    combine_product(s);
    pa_spmv_smi(pa_smi_counts_of(s->y_region, &after));
    s->sent = after.combined - before.combined;
    return s;
}

static double combine_product(void *state)
{
    write_state *s = state;
    const pa_block *b = s->b;
    pa_smi_region *y = s->y_region;
    uint64_t start = pa_ticks();
    pa_spmv_smi(pa_smi_replicate(y, 0, NULL, NULL, PA_SMI_ZERO));
    double *copy = pa_smi_copy(y);
    pa_scatter_add(b, copy);           /* into the copy PA_SMI_ZERO started at zero */
    for (int k = 0; k < s->nruns; k++) /* a run at a time: consecutive ghosts touched at once */
        pa_spmv_smi(pa_smi_touch_range(y, s->run_lo[k], s->run_hi[k]));
    /* My block untouched, copied into my part, to which combine adds the others' entries: zeroing
     * my part and touching my block for combine to add it, and zeroing again in the scatter, made
     * write_combine 1.10-1.15x the hand-coded variant on jagmesh7 and 494_bus (one run, np=2),
     * 1.04 this way. */
    if (b->rows)
        memcpy(s->y_mine, copy + b->lo, sizeof(double) * (size_t)b->rows);
    pa_spmv_smi(pa_smi_combine(y, PA_SMI_SUM, PA_SMI_DOUBLE));
    return pa_seconds_since(start);
}

static long long combine_operations(void *state) { return ((write_state *)state)->sent; }

const pa_variant pa_write_combine = {
    .name = "write_combine",
    .operation = "y = A^T x",
    .definition = "y switched to replication (a zero-started full copy), the product scattered "
                  "into it, the ghosts touched (a run of consecutive rows at a time), my block "
                  "copied into my part, then pa_smi_combine(PA_SMI_SUM): each owner is sent the "
                  "(offset, value) records of the entries touched in its block (one message per "
                  "rank pair) and adds them",
    .model = "E2",
    .latency = "accumulate",
    .transposed = 1,
    .setup = combine_setup,
    .product = combine_product,
    .result = write_result,
    .remote_operations = combine_operations,
    .finish = write_finish,
};
