/* Remote write, y = A^T x: rank p holds rows i of A and x_i, and its nonzero a_ij contributes
 * a_ij x_i to y_j, which the owner of row j holds: a remote write when j is not in p's block.
 *
 *   write_element  one MPI_Accumulate(MPI_SUM) of one double per remote contribution, each
 *                  followed by MPI_Win_flush (passive target, MPI_Win_lock_all once) into the
 *                  owner's block of y in a window; local contributions go to a private array
 *                  (a local store must not race with the accumulates into the same window)
 *                  and are added once every rank has flushed (model E1)
 *   write_combine  replicate-and-combine: a private full-length y, reset only where touched;
 *                  then each owner is sent the (index, value) pairs of its touched entries
 *                  (MPI_Alltoallv of MPI_DOUBLE_INT pairs, counts exchanged once at setup)
 *                  and adds them (model E2: each distinct remote entry written once) */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "spmv.h"
#include "timer.h"

typedef struct {
    double value;
    int index; /* the global row of y; the layout of MPI_DOUBLE_INT */
} pair;

typedef struct {
    const pa_block *b;
    double *y; /* rows: the result */
    /* write_element: */
    MPI_Win window;
    double *y_window, *y_local;
    /* write_combine: */
    double *y_full;
    pair *sent, *received;
    int *send_counts, *send_displs, *receive_counts, *receive_displs, received_count;
} write_state;

static void write_finish(void *state)
{
    write_state *s = state;
    pa_close_window(&s->window);
    free(s->y), free(s->y_local), free(s->y_full), free(s->sent), free(s->received);
    free(s->send_counts), free(s->send_displs), free(s->receive_counts), free(s->receive_displs);
    free(s);
}

static write_state *state_new(const pa_block *b)
{
    write_state *s = pa_calloc(1, sizeof *s, "the remote-write state");
    s->b = b;
    s->window = MPI_WIN_NULL;
    s->y = pa_calloc((size_t)b->rows + 1, sizeof(double), "the product vector");
    return s;
}

static const double *write_result(void *state) { return ((write_state *)state)->y; }

/* -- write_element ---------------------------------------------------------------------------- */

static void *element_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    write_state *s = state_new(b);
    s->y_local = pa_calloc((size_t)b->rows + 1, sizeof(double), "y_local");
    if (pa_open_window(b->rows, &s->y_window, &s->window, why)) {
        write_finish(s);
        return NULL;
    }
    return s;
}

static double element_product(void *state)
{
    write_state *s = state;
    const pa_block *b = s->b;
    size_t bytes = sizeof(double) * (size_t)b->rows;
    uint64_t start = pa_ticks();
    memset(s->y_window, 0, bytes);
    memset(s->y_local, 0, bytes);
    double seconds = pa_seconds_since(start);
    MPI_Win_sync(s->window); /* the zeros before anyone accumulates */
    MPI_Barrier(MPI_COMM_WORLD);
    start = pa_ticks();
    for (int i = 0; i < b->rows; i++) {
        double xi = b->x_mine[i];
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            double contribution = b->values[k] * xi;
            if (b->owner[k] == b->rank) {
                s->y_local[b->offset[k]] += contribution;
            } else {
                MPI_Accumulate(&contribution, 1, MPI_DOUBLE, b->owner[k], b->offset[k], 1,
                               MPI_DOUBLE, MPI_SUM, s->window);
                MPI_Win_flush(b->owner[k], s->window);
            }
        }
    }
    seconds += pa_seconds_since(start);
    MPI_Barrier(MPI_COMM_WORLD); /* every accumulate is complete at its target */
    MPI_Win_sync(s->window);
    start = pa_ticks();
    for (int i = 0; i < b->rows; i++)
        s->y[i] = s->y_window[i] + s->y_local[i];
    return seconds + pa_seconds_since(start);
}

static long long element_operations(void *state)
{
    return ((write_state *)state)->b->remote_accesses;
}

const pa_variant pa_write_element = {
    .name = "write_element",
    .operation = "y = A^T x",
    .definition = "one MPI_Accumulate(MPI_SUM) of one double per remote contribution, each "
                  "followed by MPI_Win_flush; local contributions into a private array added "
                  "after a barrier",
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

static void *combine_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    write_state *s = state_new(b);
    size_t np = (size_t)b->np;
    s->y_full = pa_calloc((size_t)b->n, sizeof(double), "y_full");
    s->sent = pa_alloc(((size_t)b->nghosts + 1), sizeof(pair), "sent");
    s->send_counts = pa_calloc(np, sizeof(int), "send_counts");
    s->send_displs = pa_calloc(np, sizeof(int), "send_displs");
    s->receive_counts = pa_calloc(np, sizeof(int), "receive_counts");
    s->receive_displs = pa_calloc(np, sizeof(int), "receive_displs");
    int ok = s->y_full && s->sent && s->send_counts && s->send_displs && s->receive_counts &&
             s->receive_displs;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        *why = "out of memory for a full-length private y";
        write_finish(s);
        return NULL;
    }
    for (int g = 0; g < b->nghosts; g++) /* ghosts increase, so they come grouped by owner */
        s->send_counts[pa_owner_of(b, b->ghosts[g])]++;
    MPI_Alltoall(s->send_counts, 1, MPI_INT, s->receive_counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (size_t p = 1; p < np; p++) {
        s->send_displs[p] = s->send_displs[p - 1] + s->send_counts[p - 1];
        s->receive_displs[p] = s->receive_displs[p - 1] + s->receive_counts[p - 1];
    }
    s->received_count = s->receive_displs[np - 1] + s->receive_counts[np - 1];
    s->received = pa_alloc(((size_t)s->received_count + 1), sizeof(pair), "received");
    return s;
}

static double combine_product(void *state)
{
    write_state *s = state;
    const pa_block *b = s->b;
    double *y = s->y_full;
    uint64_t start = pa_ticks();
    pa_scatter_rows(b, y);
    for (int g = 0; g < b->nghosts; g++)
        s->sent[g] = (pair){y[b->ghosts[g]], b->ghosts[g]};
    MPI_Alltoallv(s->sent, s->send_counts, s->send_displs, MPI_DOUBLE_INT, s->received,
                  s->receive_counts, s->receive_displs, MPI_DOUBLE_INT, MPI_COMM_WORLD);
    memcpy(s->y, y + b->lo, sizeof(double) * (size_t)b->rows);
    for (int q = 0; q < s->received_count; q++)
        s->y[s->received[q].index - b->lo] += s->received[q].value;
    return pa_seconds_since(start);
}

static long long combine_operations(void *state) { return ((write_state *)state)->b->nghosts; }

const pa_variant pa_write_combine = {
    .name = "write_combine",
    .operation = "y = A^T x",
    .definition = "private full-length y (reset only where touched), then each owner is sent "
                  "the (index, value) pairs of its touched entries by one MPI_Alltoallv of "
                  "MPI_DOUBLE_INT and adds them",
    .model = "E2",
    .latency = "accumulate",
    .transposed = 1,
    .setup = combine_setup,
    .product = combine_product,
    .result = write_result,
    .remote_operations = combine_operations,
    .finish = write_finish,
};
