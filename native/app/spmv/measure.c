/* Timing and checking one variant, and the remote access latency t_r of the models.
 *
 * A sample is a batch of products calibrated to last min_sample_time on the slowest rank
 * (pa_comm_measure: warm-up, calibration, samples bounded by time_limit). Each rank times its
 * own work; rank 0 gathers every rank's samples. After the samples the product's result is
 * gathered to rank 0 and compared with the reference computed there from the whole matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "outcome.h"
#include "timer.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pa_median(const double *values, int n)
{
    if (n <= 0)
        return NAN;
    double *sorted = pa_alloc((size_t)n, sizeof(double), "sorted");
    memcpy(sorted, values, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), compare_doubles);
    double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    free(sorted);
    return median;
}

/* Every rank's series on rank 0: seconds per product (or per operation) of each rank and
 * sample, the slowest rank per sample, and each rank's median. The sample count is the same on
 * every rank (pa_comm_measure agrees on it). */
static void gather_series(const pa_series *series, pa_outcome *out)
{
    int rank, np, count = series->count;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    out->samples = count;
    out->requested = series->requested;
    out->iterations = series->iterations;
    double *all = rank == 0
                      ? pa_alloc((size_t)np * (size_t)count, sizeof(double), "the gathered samples")
                      : NULL;
    MPI_Gather(series->seconds, count, MPI_DOUBLE, all, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    out->per_rank = pa_alloc((size_t)np * (size_t)count, sizeof(double), "per_rank");
    out->slowest = pa_calloc((size_t)count, sizeof(double), "slowest");
    out->sample_s = pa_calloc((size_t)count, sizeof(double), "sample_s");
    out->median = pa_alloc((size_t)np, sizeof(double), "median");
    for (int r = 0; r < np; r++) {
        for (int i = 0; i < count; i++) {
            double seconds = all[(size_t)r * (size_t)count + (size_t)i];
            out->per_rank[(size_t)r * (size_t)count + (size_t)i] =
                seconds / (double)series->iterations;
            out->slowest[i] = fmax(out->slowest[i], seconds / (double)series->iterations);
            out->sample_s[i] = fmax(out->sample_s[i], seconds);
        }
        out->median[r] = pa_median(out->per_rank + (size_t)r * (size_t)count, count);
    }
    free(all);
}

/* -- variants --------------------------------------------------------------------------------- */

typedef struct {
    const pa_variant *variant;
    void *state;
} product_batch;

static double product_batch_run(void *context, long iterations, uint64_t *laps)
{
    (void)laps;
    product_batch *p = context;
    if (p->variant->products)
        return p->variant->products(p->state, iterations);
    double own = 0.0;
    for (long i = 0; i < iterations; i++)
        own += p->variant->product(p->state);
    return own;
}

/* The relative error of component i: |y_i - ref_i| / sum_j |a_ij x_j| (the absolute difference
 * where that sum is 0; NaN counts as the worst). */
static double component_error(const double *y, const double *reference, const double *scale, int i)
{
    double difference = fabs(y[i] - reference[i]);
    double error = scale[i] > 0 ? difference / scale[i] : difference;
    return isnan(error) ? INFINITY : error;
}

/* The largest relative error, and the first component above `limit` (-1: none). */
static double relative_error(const double *y, const double *reference, const double *scale, int n,
                             double limit, int *first_wrong)
{
    double largest = 0.0;
    *first_wrong = -1;
    for (int i = 0; i < n; i++) {
        double error = component_error(y, reference, scale, i);
        largest = fmax(largest, error);
        if (*first_wrong < 0 && !(error <= limit))
            *first_wrong = i;
    }
    return largest;
}

/* The result on rank 0 (gathered rows, or the partial results summed), checked. */
static void check_result(const pa_variant *v, void *state, const pa_block *b,
                         const pa_reference *reference, double limit, int keep_y, pa_outcome *out)
{
    const double *y = v->result(state);
    double *full =
        b->rank == 0 ? pa_alloc((size_t)b->n, sizeof(double), "the whole product vector") : NULL;
    if (v->partial) {
        MPI_Reduce(y, full, b->n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else {
        int *counts = pa_alloc((size_t)b->np, sizeof(int), "counts");
        for (int p = 0; p < b->np; p++)
            counts[p] = b->first_row[p + 1] - b->first_row[p];
        MPI_Gatherv(y, b->rows, MPI_DOUBLE, full, counts, b->first_row, MPI_DOUBLE, 0,
                    MPI_COMM_WORLD);
        free(counts);
    }
    if (b->rank != 0)
        return;
    /* The tests plant a wrong result in the variant that PERFATLAS_SPMV_CORRUPT names. */
    const char *planted = getenv("PERFATLAS_SPMV_CORRUPT");
    if (planted && !strcmp(planted, v->name))
        full[b->n / 2] += 1.0;
    const double *ref = v->transposed ? reference->ATx : reference->Ax;
    const double *scale = v->transposed ? reference->abs_ATx : reference->abs_Ax;
    int wrong;
    out->max_error = relative_error(full, ref, scale, b->n, limit, &wrong);
    if (wrong >= 0)
        pa_comm_wrong("%s computed a wrong %s: component %d (the first wrong one) is %.17g, the "
                      "reference %.17g (a relative error of %.3g, above the limit %.0e)",
                      v->name, v->operation, wrong + 1, full[wrong], ref[wrong],
                      component_error(full, ref, scale, wrong), limit);
    if (keep_y)
        out->y = full;
    else
        free(full);
}

void pa_measure_variant(const pa_variant *variant, const pa_block *b, int threads,
                        const pa_timing *timing, const pa_reference *reference, double limit,
                        int keep_y, pa_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->variant = variant;
    out->name = variant->name;
    const char *why = NULL;
    void *state = variant->setup(b, threads, &why);
    int ok = state != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        out->why = why ? why : "out of memory on one of the ranks";
        return;
    }
    product_batch batch = {variant, state};
    pa_series series = {0};
    pa_comm_measure(MPI_COMM_WORLD, product_batch_run, &batch, timing, &series, NULL);
    gather_series(&series, out);
    pa_series_free(&series);
    check_result(variant, state, b, reference, limit, keep_y, out);
    long long operations = variant->remote_operations(state);
    if (b->rank == 0)
        out->remote_operations = pa_alloc((size_t)b->np, sizeof(long long), "remote_operations");
    MPI_Gather(&operations, 1, MPI_LONG_LONG, out->remote_operations, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (variant->layout && b->rank == 0)
        variant->layout(state, out->layout, sizeof out->layout);
    variant->finish(state);
}

/* -- the remote access latency t_r ------------------------------------------------------------ */

/* Every rank at once accesses one double of its successor (rank + 1 mod np): an MPI_Get, or an
 * MPI_Accumulate(MPI_SUM) of 1.0, each followed by MPI_Win_flush. Slot 0 of each window
 * collects the accumulates, slot 1 holds 1000 + rank for the gets. */
typedef struct {
    MPI_Win window;
    int target, accumulate;
    double fetched;
    long long issued;
} probe;

static double probe_batch(void *context, long iterations, uint64_t *laps)
{
    (void)laps;
    probe *p = context;
    const double one = 1.0;
    uint64_t start = pa_ticks();
    for (long i = 0; i < iterations; i++) {
        if (p->accumulate)
            MPI_Accumulate(&one, 1, MPI_DOUBLE, p->target, 0, 1, MPI_DOUBLE, MPI_SUM, p->window);
        else
            MPI_Get(&p->fetched, 1, MPI_DOUBLE, p->target, 1, 1, MPI_DOUBLE, p->window);
        MPI_Win_flush(p->target, p->window);
    }
    p->issued += iterations;
    return pa_seconds_since(start);
}

void pa_measure_latency(const pa_block *b, const pa_timing *timing, int accumulate, pa_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->name = accumulate ? "accumulate" : "get";
    if (b->np < 2) {
        out->why = "one rank has no remote element to access: t_r needs np of 2 or more";
        return;
    }
    probe p = {.target = (b->rank + 1) % b->np, .accumulate = accumulate};
    double *base;
    if (pa_open_window(2, &base, &p.window, &out->why))
        return;
    base[0] = 0.0;
    base[1] = 1000.0 + b->rank;
    MPI_Win_sync(p.window);
    MPI_Barrier(MPI_COMM_WORLD);
    pa_series series = {0};
    pa_comm_measure(MPI_COMM_WORLD, probe_batch, &p, timing, &series, NULL);
    gather_series(&series, out);
    pa_series_free(&series);
    MPI_Barrier(MPI_COMM_WORLD); /* every accumulate is complete at its target */
    MPI_Win_sync(p.window);
    if (!accumulate && p.fetched != 1000.0 + p.target)
        pa_comm_wrong("MPI_Get from rank %d fetched %g instead of %g", p.target, p.fetched,
                      1000.0 + p.target);
    long long received = 0;
    int source = (b->rank + b->np - 1) % b->np;
    MPI_Sendrecv(&p.issued, 1, MPI_LONG_LONG, p.target, 0, &received, 1, MPI_LONG_LONG, source, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (accumulate && base[0] != (double)received)
        pa_comm_wrong("rank %d received accumulates summing to %.17g, but rank %d issued %lld",
                      b->rank, base[0], source, received);
    pa_close_window(&p.window);
}
