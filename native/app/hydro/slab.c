/* The SAGE-like slab decomposition and its gather/scatter (slab.h). */
#include "slab.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void pa_slab_coordinates(const pa_slab *s, long c, long ijk[3])
{
    ijk[0] = c % s->n[0];
    ijk[1] = (c / s->n[0]) % s->n[1];
    ijk[2] = c / (s->n[0] * s->n[1]);
}

/* The global index of the cell `o` cells from global cell g along `axis`, through the
 * boundary: wrapped (periodic) or clamped (outflow). */
static long global_neighbour(const pa_slab *s, long g, const long ijk[3], int axis, int o)
{
    long stride = axis == 0 ? 1 : axis == 1 ? s->n[0] : s->n[0] * s->n[1];
    long q = ijk[axis] + o, n = s->n[axis];
    if (s->periodic)
        q = ((q % n) + n) % n;
    else
        q = q < 0 ? 0 : q >= n ? n - 1 : q;
    return g + (q - ijk[axis]) * stride;
}

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int owned(const pa_slab *s, long g) { return g >= s->first && g < s->first + s->cells; }

/* The ghosts: every neighbour of an owned cell that another slab owns, sorted, once each. */
static void find_ghosts(pa_slab *s)
{
    long *found = pa_alloc((size_t)s->cells * 12, sizeof(long), "the ghost candidates"), count = 0;
    for (long c = 0; c < s->cells; c++) {
        long g = s->first + c, ijk[3];
        pa_slab_coordinates(s, g, ijk);
        for (int axis = 0; axis < 3; axis++)
            for (int o = -PA_GHOST_WIDTH; o <= PA_GHOST_WIDTH; o++) {
                long h = o ? global_neighbour(s, g, ijk, axis, o) : g;
                if (!owned(s, h))
                    found[count++] = h;
            }
    }
    qsort(found, (size_t)count, sizeof(long), compare_long);
    long distinct = 0;
    for (long i = 0; i < count; i++)
        if (distinct == 0 || found[i] != found[distinct - 1])
            found[distinct++] = found[i];
    s->ghosts = distinct;
    s->ghost_global =
        pa_realloc(found, (size_t)(distinct ? distinct : 1), sizeof(long), "the ghost cells");
}

static int32_t local_index(const pa_slab *s, long g)
{
    if (owned(s, g))
        return (int32_t)(g - s->first);
    const long *slot = bsearch(&g, s->ghost_global, (size_t)s->ghosts, sizeof(long), compare_long);
    return (int32_t)(s->cells + (slot - s->ghost_global));
}

static void fill_neighbours(pa_slab *s)
{
    s->neighbour = pa_alloc((size_t)s->cells * 12, sizeof(int32_t), "the neighbour table");
    for (long c = 0; c < s->cells; c++) {
        long g = s->first + c, ijk[3];
        pa_slab_coordinates(s, g, ijk);
        for (int axis = 0; axis < 3; axis++)
            for (int o = -PA_GHOST_WIDTH; o <= PA_GHOST_WIDTH; o++)
                if (o)
                    s->neighbour[(c * 3 + axis) * 4 + (o < 0 ? o + 2 : o + 1)] =
                        local_index(s, global_neighbour(s, g, ijk, axis, o));
    }
}

/* Receive peers from the ghosts' owners; send peers from what each process asks of this one. */
static void build_peers(pa_slab *s, MPI_Comm comm)
{
    int np;
    MPI_Comm_size(comm, &np);
    int *need = pa_calloc((size_t)np, sizeof(int), "ghost counts");
    int *give = pa_calloc((size_t)np, sizeof(int), "send counts");
    int *need_at = pa_calloc((size_t)np, sizeof(int), "ghost offsets");
    int *give_at = pa_calloc((size_t)np, sizeof(int), "send offsets");
    s->recv = pa_alloc((size_t)np, sizeof(pa_peer), "the receive peers");
    s->send = pa_alloc((size_t)np, sizeof(pa_peer), "the send peers");
    s->nrecv = 0;
    for (long i = 0; i < s->ghosts; i++) {
        int owner = (int)(s->ghost_global[i] / s->cells);
        if (need[owner]++ == 0) {
            need_at[owner] = (int)i;
            s->recv[s->nrecv++] = (pa_peer){owner, i, 0};
        }
        s->recv[s->nrecv - 1].count++;
    }
    MPI_Alltoall(need, 1, MPI_INT, give, 1, MPI_INT, comm);
    long total = 0;
    s->nsend = 0;
    for (int r = 0; r < np; r++) {
        give_at[r] = (int)total;
        if (give[r])
            s->send[s->nsend++] = (pa_peer){r, total, give[r]};
        total += give[r];
    }
    long *asked = pa_alloc((size_t)(total ? total : 1), sizeof(long), "the cells asked for");
    MPI_Alltoallv(s->ghost_global, need, need_at, MPI_LONG, asked, give, give_at, MPI_LONG, comm);
    for (long i = 0; i < total; i++)
        asked[i] -= s->first; /* global to local: every cell asked for is owned here */
    s->send_cells = asked;
    free(need), free(give), free(need_at), free(give_at);
    s->send_buffer = pa_alloc((size_t)(total ? total : 1) * (size_t)s->width, sizeof(double),
                              "the gather buffer");
    s->requests = pa_alloc((size_t)(s->nrecv + s->nsend + 1), sizeof(MPI_Request), "requests");
}

void pa_slab_build(pa_slab *s, const long n[3], long cells, int periodic, int width, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    memset(s, 0, sizeof *s);
    memcpy(s->n, n, sizeof s->n);
    s->total = n[0] * n[1] * n[2];
    s->cells = cells;
    s->first = (long)rank * cells;
    s->periodic = periodic;
    s->width = width;
    find_ghosts(s);
    fill_neighbours(s);
    build_peers(s, comm);
}

void pa_slab_free(pa_slab *s)
{
    free(s->ghost_global), free(s->neighbour), free(s->recv), free(s->send);
    free(s->send_cells), free(s->send_buffer), free(s->requests);
}

void pa_slab_exchange(pa_slab *s, double *field, int width, MPI_Comm comm)
{
    enum {
        TAG = 17
    };
    int r = 0;
    for (int p = 0; p < s->nrecv; p++)
        MPI_Irecv(field + (s->cells + s->recv[p].start) * width, (int)(s->recv[p].count * width),
                  MPI_DOUBLE, s->recv[p].rank, TAG, comm, &s->requests[r++]);
    for (int p = 0; p < s->nsend; p++) {
        double *buffer = s->send_buffer + s->send[p].start * width;
        const long *cells = s->send_cells + s->send[p].start;
        for (long i = 0; i < s->send[p].count; i++) /* the gather */
            memcpy(buffer + i * width, field + cells[i] * width, sizeof(double) * (size_t)width);
        MPI_Isend(buffer, (int)(s->send[p].count * width), MPI_DOUBLE, s->send[p].rank, TAG, comm,
                  &s->requests[r++]);
    }
    MPI_Waitall(r, s->requests, MPI_STATUSES_IGNORE);
}
