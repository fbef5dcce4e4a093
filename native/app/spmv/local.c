/* Products without remote access, x replicated on every rank: the local-only baselines of the
 * efficiency models (t_l, one thread per rank, like the remote variants) and the node-level CSR
 * kernel with OpenMP threads (the GFlop/s and roofline figure); and the row products the remote
 * variants share. */
#include <omp.h>
#include <stdlib.h>

#include "alloc.h"
#include "spmv.h"
#include "timer.h"

typedef struct {
    const pa_block *b;
    int threads;
    double *y; /* rows (gather) or n (scatter: the full-length private y) */
} local_state;

static void *local_setup(const pa_block *b, int threads, size_t length)
{
    local_state *s = pa_calloc(1, sizeof *s, "the local product state");
    s->b = b;
    s->threads = threads;
    s->y = pa_calloc(length ? length : 1, sizeof(double), "the product vector");
    return s;
}

static void *gather_setup(const pa_block *b, int threads, const char **why)
{
    (void)why;
    return local_setup(b, threads, (size_t)b->rows);
}

static void *scatter_setup(const pa_block *b, int threads, const char **why)
{
    (void)why;
    return local_setup(b, threads, (size_t)b->n);
}

void pa_gather_rows(const pa_block *b, const int *column, const double *x, double *y)
{
    for (int i = 0; i < b->rows; i++) {
        double sum = 0.0;
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++)
            sum += b->values[k] * x[column[k]];
        y[i] = sum;
    }
}

void pa_scatter_add(const pa_block *b, double *y)
{
    for (int i = 0; i < b->rows; i++) {
        double xi = b->x_mine[i];
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++)
            y[b->colind[k]] += b->values[k] * xi;
    }
}

void pa_scatter_rows(const pa_block *b, double *y)
{
    for (int i = 0; i < b->rows; i++)
        y[b->lo + i] = 0.0;
    for (int g = 0; g < b->nghosts; g++)
        y[b->ghosts[g]] = 0.0;
    pa_scatter_add(b, y);
}

long long pa_no_remote_operations(void *state)
{
    (void)state;
    return 0;
}

/* y_i = sum_k a_ik x_k over my rows, x replicated: one thread. */
static double gather_product(void *state)
{
    local_state *s = state;
    uint64_t start = pa_ticks();
    pa_gather_rows(s->b, s->b->colind, s->b->x_all, s->y);
    return pa_seconds_since(start);
}

/* The same with `threads` OpenMP threads, rows split statically: the reference kernel. */
static void threads_rows(const local_state *s)
{
    const pa_block *b = s->b;
    const int *rowptr = b->rowptr, *colind = b->colind;
    const double *values = b->values, *x = b->x_all;
    double *y = s->y;
#pragma omp parallel for schedule(static) num_threads(s->threads)
    for (int i = 0; i < b->rows; i++) {
        double sum = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
            sum += values[k] * x[colind[k]];
        y[i] = sum;
    }
}

static double threads_product(void *state)
{
    uint64_t start = pa_ticks();
    threads_rows(state);
    return pa_seconds_since(start);
}

static double threads_products(void *state, long count)
{
    uint64_t start = pa_ticks();
    for (long i = 0; i < count; i++)
        threads_rows(state);
    return pa_seconds_since(start);
}

/* The local part of y = A^T x into a full-length private y, no combination (the same scatter as
 * write_combine's, without its exchange). */
static double scatter_product(void *state)
{
    local_state *s = state;
    uint64_t start = pa_ticks();
    pa_scatter_rows(s->b, s->y);
    return pa_seconds_since(start);
}

static const double *local_result(void *state) { return ((local_state *)state)->y; }

static void local_finish(void *state)
{
    local_state *s = state;
    free(s->y);
    free(s);
}

const pa_variant pa_local_gather = {
    .name = "local",
    .operation = "y = A x",
    .definition = "my rows times a replicated x, one thread: no remote access (the baseline t_l "
                  "of the read models)",
    .setup = gather_setup,
    .product = gather_product,
    .result = local_result,
    .remote_operations = pa_no_remote_operations,
    .finish = local_finish,
};

const pa_variant pa_local_scatter = {
    .name = "local_transposed",
    .operation = "y = A^T x",
    .definition = "y_j += a_ij x_i for my rows into a full-length private y, one thread, no "
                  "combination (the baseline t_l of the write models; summed over the ranks it "
                  "is A^T x)",
    .transposed = 1,
    .partial = 1,
    .setup = scatter_setup,
    .product = scatter_product,
    .result = local_result,
    .remote_operations = pa_no_remote_operations,
    .finish = local_finish,
};

const pa_variant pa_csr_threads = {
    .name = "csr",
    .operation = "y = A x",
    .definition = "node-level CSR: my rows times a replicated x with `threads` OpenMP threads "
                  "(schedule static over rows)",
    .setup = gather_setup,
    .product = threads_product,
    .products = threads_products,
    .result = local_result,
    .remote_operations = pa_no_remote_operations,
    .finish = local_finish,
};
