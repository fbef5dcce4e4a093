/* The SAGE-like decomposition of app.hydro: the cells of an nx x ny x nz grid ordered in one
 * dimension (x fastest, then y, then z: c = (k ny + j) nx + i) and cut into equal contiguous
 * slabs of `cells` cells, one per process (Kerbyson et al., "Predictive performance and
 * scalability modeling of a large-scale application", SC2001, sec. 3: SAGE's 1-D cell order and
 * its boundary gather/scatter).
 *
 * A slab's ghost cells are the cells of other slabs that its stencil reaches: +-1 and +-2 cells
 * along each axis (the MUSCL-Hancock interface needs two cells on each side). Along z these lie
 * +-nx ny and +-2 nx ny cells away in the order, so a slab shorter than two planes reaches
 * several processes on each side: its neighbours are every process that owns one of its ghosts.
 * Local storage: the owned cells first (local index = c - first), then the ghosts in increasing
 * global order, so that the ghosts owned by one process are contiguous and a message from it
 * lands in place. Boundaries: periodic (wrap) or outflow (the neighbour index clamped, i.e. a
 * zero-gradient ghost). */
#ifndef PA_HYDRO_SLAB_H
#define PA_HYDRO_SLAB_H

#include <mpi.h>
#include <stdint.h>

#define PA_GHOST_WIDTH 2 /* cells on each side of a cell along an axis that its update reads */

typedef struct {
    int rank;          /* the peer */
    long start, count; /* receive: ghost slots [start, start + count); send: into send_cells */
} pa_peer;

typedef struct {
    long n[3];          /* global extent along x, y, z */
    long total;         /* nx ny nz */
    long cells;         /* per process (the slab) */
    long first;         /* global index of this slab's first cell */
    int periodic;       /* else outflow */
    long ghosts;        /* ghost slots after the owned cells */
    long *ghost_global; /* the global index of each ghost, increasing */
    int32_t *neighbour; /* [cell][axis][4]: local index of the cells -2, -1, +1, +2 along axis */
    int nrecv, nsend;   /* peers to receive ghosts from and to send owned cells to */
    pa_peer *recv, *send;
    long *send_cells;    /* local indices of the owned cells sent, peer after peer */
    double *send_buffer; /* send_cells x the widest field */
    MPI_Request *requests;
    int width; /* doubles per cell of the widest field exchanged */
} pa_slab;

/* The neighbour of local cell c along `axis` at offset o in -2..2 (o != 0). */
static inline int32_t pa_slab_neighbour(const pa_slab *s, long c, int axis, int o)
{
    return s->neighbour[(c * 3 + axis) * 4 + (o < 0 ? o + 2 : o + 1)];
}

/* Builds this process's slab and the exchange lists (collective: each process tells the owners
 * which of their cells it needs, MPI_Alltoall + MPI_Alltoallv); `width`: doubles per cell of the
 * widest field it will exchange. */
void pa_slab_build(pa_slab *slab, const long n[3], long cells, int periodic, int width,
                   MPI_Comm comm);
void pa_slab_free(pa_slab *slab);

/* The boundary gather/scatter: every peer's owned cells of `field` (local cells x `width`
 * doubles, width <= slab->width) gathered into one message and received straight into the
 * ghost slots. Nonblocking sends and receives, then MPI_Waitall. */
void pa_slab_exchange(pa_slab *slab, double *field, int width, MPI_Comm comm);

/* (i, j, k) of global cell c. */
void pa_slab_coordinates(const pa_slab *slab, long c, long ijk[3]);

#endif
