/* Remote read, y = A x: x lives distributed in an MPI window (each rank its block), read by
 * passive-target one-sided access (MPI_Win_lock_all, once, for the whole run).
 *
 *   read_element    one MPI_Get per remote nonzero, each followed by MPI_Win_flush: the naive
 *                   shared-memory way, every remote load waits for its element (flush per get,
 *                   so that one access costs the measured latency t_r of the model E1)
 *   read_replicate  the distinct remote elements fetched once per product into a ghost buffer
 *                   (one MPI_Get per run of consecutive columns of one owner, one
 *                   MPI_Win_flush_all), then a purely local product (model E2)
 *   read_shared     an MPI_Win_allocate_shared window over the node (MPI_Comm_split_type
 *                   SHARED): remote elements are direct loads
 *
 * Every product ends with a barrier, the step an iterative solver needs before x changes; it is
 * not counted in the rank's own time. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "spmv.h"
#include "timer.h"

typedef struct {
    const pa_block *b;
    MPI_Win window;
    double *x_window; /* my block of x, in the window */
    double *y;        /* rows */
    /* read_replicate: */
    int *compact; /* per nonzero: its column in x_extended = [my block | ghosts] */
    double *x_extended;
    int runs, *run_owner, *run_offset, *run_count, *run_start;
    /* read_shared: */
    MPI_Comm node;
    const double *x_shared; /* all of x, the node's segments end to end */
} read_state;

static read_state *state_new(const pa_block *b)
{
    read_state *s = pa_calloc(1, sizeof *s, "the remote-read state");
    s->b = b;
    s->window = MPI_WIN_NULL;
    s->node = MPI_COMM_NULL;
    s->y = pa_calloc((size_t)b->rows + 1, sizeof(double), "the product vector");
    return s;
}

static void read_finish(void *state)
{
    read_state *s = state;
    pa_close_window(&s->window);
    if (s->node != MPI_COMM_NULL)
        MPI_Comm_free(&s->node);
    free(s->y), free(s->compact), free(s->x_extended);
    free(s->run_owner), free(s->run_offset), free(s->run_count), free(s->run_start);
    free(s);
}

/* The window of x: my block written, visible to every rank after the barrier. */
static void *window_setup(const pa_block *b, const char **why)
{
    read_state *s = state_new(b);
    if (pa_open_window(b->rows, &s->x_window, &s->window, why)) {
        read_finish(s);
        return NULL;
    }
    memcpy(s->x_window, b->x_mine, sizeof(double) * (size_t)b->rows);
    MPI_Win_sync(s->window);
    MPI_Barrier(MPI_COMM_WORLD);
    return s;
}

static const double *read_result(void *state) { return ((read_state *)state)->y; }

/* -- read_element ----------------------------------------------------------------------------- */

static void *element_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    return window_setup(b, why);
}

static double element_product(void *state)
{
    read_state *s = state;
    const pa_block *b = s->b;
    uint64_t start = pa_ticks();
    for (int i = 0; i < b->rows; i++) {
        double sum = 0.0;
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            double x;
            if (b->owner[k] == b->rank) {
                x = s->x_window[b->offset[k]];
            } else {
                MPI_Get(&x, 1, MPI_DOUBLE, b->owner[k], b->offset[k], 1, MPI_DOUBLE, s->window);
                MPI_Win_flush(b->owner[k], s->window);
            }
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
    .definition = "one MPI_Get of one double per remote nonzero, each followed by MPI_Win_flush "
                  "(flush per get); local x read from my window block",
    .model = "E1",
    .latency = "get",
    .setup = element_setup,
    .product = element_product,
    .result = read_result,
    .remote_operations = element_operations,
    .finish = read_finish,
};

/* -- read_replicate --------------------------------------------------------------------------- */

static int position(const int *sorted, int count, int value)
{
    int lo = 0, hi = count - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sorted[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The inspector, once: compact column numbers, and the runs of consecutive ghost columns of one
 * owner (each one MPI_Get). */
static int replicate_index(read_state *s)
{
    const pa_block *b = s->b;
    size_t nnz = (size_t)(b->nnz ? b->nnz : 1), ghosts = (size_t)b->nghosts + 1;
    s->compact = pa_alloc(nnz, sizeof(int), "compact");
    s->x_extended = pa_alloc(((size_t)b->rows + ghosts), sizeof(double), "x_extended");
    s->run_owner = pa_alloc(ghosts, sizeof(int), "run_owner");
    s->run_offset = pa_alloc(ghosts, sizeof(int), "run_offset");
    s->run_count = pa_alloc(ghosts, sizeof(int), "run_count");
    s->run_start = pa_alloc(ghosts, sizeof(int), "run_start");
    for (long long k = 0; k < b->nnz; k++)
        s->compact[k] = b->owner[k] == b->rank
                            ? b->offset[k]
                            : b->rows + position(b->ghosts, b->nghosts, b->colind[k]);
    s->runs = 0;
    for (int g = 0; g < b->nghosts; g++) {
        int column = b->ghosts[g], owner = pa_owner_of(b, column);
        int r = s->runs - 1;
        if (r >= 0 && s->run_owner[r] == owner && b->ghosts[g - 1] == column - 1) {
            s->run_count[r]++;
            continue;
        }
        s->run_owner[s->runs] = owner;
        s->run_offset[s->runs] = column - b->first_row[owner];
        s->run_count[s->runs] = 1;
        s->run_start[s->runs++] = g;
    }
    return 0;
}

static void *replicate_setup(const pa_block *b, int threads, const char **why)
{
    (void)threads;
    read_state *s = window_setup(b, why);
    if (s && replicate_index(s)) {
        *why = "out of memory for the ghost buffer";
        read_finish(s);
        return NULL;
    }
    return s;
}

static double replicate_product(void *state)
{
    read_state *s = state;
    const pa_block *b = s->b;
    double *x = s->x_extended, *ghost = s->x_extended + b->rows;
    uint64_t start = pa_ticks();
    memcpy(x, s->x_window, sizeof(double) * (size_t)b->rows);
    for (int r = 0; r < s->runs; r++)
        MPI_Get(ghost + s->run_start[r], s->run_count[r], MPI_DOUBLE, s->run_owner[r],
                s->run_offset[r], s->run_count[r], MPI_DOUBLE, s->window);
    MPI_Win_flush_all(s->window);
    pa_gather_rows(b, s->compact, x, s->y);
    double seconds = pa_seconds_since(start);
    MPI_Barrier(MPI_COMM_WORLD);
    return seconds;
}

static long long replicate_operations(void *state) { return ((read_state *)state)->runs; }

const pa_variant pa_read_replicate = {
    .name = "read_replicate",
    .operation = "y = A x",
    .definition = "each distinct remote element fetched once per product into a ghost buffer "
                  "(one MPI_Get per run of consecutive columns of one owner, then one "
                  "MPI_Win_flush_all), then a local product over [my block | ghosts]",
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
    read_state *s = state_new(b);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &s->node);
    int node_size, one_node;
    MPI_Comm_size(s->node, &node_size);
    one_node = node_size == b->np;
    MPI_Allreduce(MPI_IN_PLACE, &one_node, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!one_node) {
        *why = "the ranks span more than one shared-memory node (MPI_Comm_split_type SHARED), "
               "and direct loads need every owner of x on the node; run all ranks on one host";
        read_finish(s);
        return NULL;
    }
    double *mine = NULL;
    MPI_Comm_set_errhandler(s->node, MPI_ERRORS_RETURN);
    int ok =
        MPI_Win_allocate_shared((MPI_Aint)b->rows * (MPI_Aint)sizeof(double), (int)sizeof(double),
                                MPI_INFO_NULL, s->node, &mine, &s->window) == MPI_SUCCESS;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        *why = "this MPI could not create a shared-memory window (MPI_Win_allocate_shared)";
        s->window = MPI_WIN_NULL; /* a failed allocation leaves no window to free */
        read_finish(s);
        return NULL;
    }
    /* The segments are contiguous in rank order (the default of MPI_Win_allocate_shared), so
     * rank 0's base is x_0 and column j is x_shared[j]. */
    MPI_Aint size;
    int unit;
    double *first;
    MPI_Win_shared_query(s->window, 0, &size, &unit, &first);
    s->x_shared = first;
    int contiguous = mine == first + b->lo;
    MPI_Allreduce(MPI_IN_PLACE, &contiguous, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->window);
    if (!contiguous) {
        *why = "this MPI's shared-memory window is not contiguous across the ranks";
        read_finish(s);
        return NULL;
    }
    memcpy(mine, b->x_mine, sizeof(double) * (size_t)b->rows);
    MPI_Win_sync(s->window);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(s->window);
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
    .definition = "x in an MPI_Win_allocate_shared window over the node (MPI_Comm_split_type "
                  "SHARED): remote elements are direct loads from the owner's segment",
    .setup = shared_setup,
    .product = shared_product,
    .result = read_result,
    .remote_operations = pa_no_remote_operations,
    .finish = read_finish,
};
