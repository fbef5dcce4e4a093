/* The KBA wavefront sweep (kba.h). */
#include "kba.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#include "block.h"

const int pa_octants[PA_OCTANTS][3] = {
    {-1, -1, -1}, {-1, -1, +1}, {-1, +1, -1}, {-1, +1, +1},
    {+1, +1, -1}, {+1, +1, +1}, {+1, -1, -1}, {+1, -1, +1},
};

enum {
    TAG_X = 11,
    TAG_Y = 12
};

struct pa_kba_buffers {
    double *face_x, *face_y, *face_z;
    long count_x, count_y, count_z; /* doubles per face */
};

pa_kba_buffers *pa_kba_buffers_new(const pa_kba *g)
{
    pa_kba_buffers *b = pa_calloc(1, sizeof *b, "the sweep buffers");
    b->count_x = (long)g->mmi * g->mk * g->jt;
    b->count_y = (long)g->mmi * g->mk * g->it;
    b->count_z = (long)g->mmi * g->jt * g->it;
    b->face_x = pa_calloc((size_t)b->count_x, sizeof(double), "face_x");
    b->face_y = pa_calloc((size_t)b->count_y, sizeof(double), "face_y");
    b->face_z = pa_calloc((size_t)b->count_z, sizeof(double), "face_z");
    return b;
}

void pa_kba_buffers_free(pa_kba_buffers *b)
{
    if (!b)
        return;
    free(b->face_x);
    free(b->face_y);
    free(b->face_z);
    free(b);
}

/* The rank at (p, q), or MPI_PROC_NULL outside the grid (a vacuum boundary). */
static int rank_at(const pa_kba *g, int p, int q)
{
    if (p < 0 || p >= g->px || q < 0 || q >= g->py)
        return MPI_PROC_NULL;
    return q * g->px + p;
}

/* An incoming face: from upstream, or zero on the global boundary. */
static void receive(double *face, long count, int from, int tag, MPI_Comm comm)
{
    if (from == MPI_PROC_NULL)
        memset(face, 0, sizeof(double) * (size_t)count);
    else
        MPI_Recv(face, (int)count, MPI_DOUBLE, from, tag, comm, MPI_STATUS_IGNORE);
}

/* An outgoing face: sent downstream, or (the caller) counted as leakage on the global boundary.
 * A blocking send, as Sweep3D's: it returns once the face has left (eager) or been taken
 * (rendezvous), so that the transfer needs no progress from this process while it sweeps the
 * next block. The schedule is acyclic (faces only flow downstream), so it cannot deadlock. */
static void send(const double *face, long count, int to, int tag, pa_tally *tally, MPI_Comm comm)
{
    if (to == MPI_PROC_NULL)
        return;
    MPI_Send(face, (int)count, MPI_DOUBLE, to, tag, comm);
    tally->messages++;
}

/* sum over the block's directions and the face's cells of w |cosine| area psi_out. `lines` face
 * cells per direction, `cosines` the block's cosines with the face normal. */
static double leakage(const double *face, int angles, long lines, const double *cosines,
                      double weight, double area)
{
    double sum = 0;
    for (int a = 0; a < angles; a++) {
        double directional = 0;
        for (long l = 0; l < lines; l++)
            directional += face[(long)a * lines + l];
        sum += weight * cosines[a] * area * directional;
    }
    return sum;
}

void pa_kba_sweep(const pa_kba *g, const pa_quadrature *quad, pa_kba_buffers *b,
                  const double *source, double *phi, pa_tally *tally)
{
    const int kblocks = g->kt / g->mk, ablocks = quad->per_octant / g->mmi;
    for (int o = 0; o < PA_OCTANTS; o++) {
        const int sx = pa_octants[o][0], sy = pa_octants[o][1], sz = pa_octants[o][2];
        const int from_x = rank_at(g, g->p - sx, g->q), to_x = rank_at(g, g->p + sx, g->q);
        const int from_y = rank_at(g, g->p, g->q - sy), to_y = rank_at(g, g->p, g->q + sy);
        /* leakage face index: x- 0, x+ 1, y- 2, y+ 3, z- 4, z+ 5 */
        const int out_x = sx > 0 ? 1 : 0, out_y = sy > 0 ? 3 : 2, out_z = sz > 0 ? 5 : 4;
        for (int ab = 0; ab < ablocks; ab++) {
            const int first = ab * g->mmi;
            pa_block block = {
                .it = g->it,
                .jt = g->jt,
                .mk = g->mk,
                .sx = sx,
                .sy = sy,
                .sz = sz,
                .angles = g->mmi,
                .mu = quad->mu + first,
                .eta = quad->eta + first,
                .xi = quad->xi + first,
                .weight = quad->weight,
                .sigma_t = g->sigma_t,
                .dx = g->dx,
                .dy = g->dy,
                .dz = g->dz,
                .fixup = g->fixup,
            };
            memset(b->face_z, 0, sizeof(double) * (size_t)b->count_z); /* vacuum below/above */
            for (int kb = 0; kb < kblocks; kb++) {
                block.k0 = sz > 0 ? kb * g->mk : g->kt - 1 - kb * g->mk;
                receive(b->face_x, b->count_x, from_x, TAG_X, g->comm);
                receive(b->face_y, b->count_y, from_y, TAG_Y, g->comm);
                tally->negative +=
                    pa_sweep_block(&block, source, phi, b->face_x, b->face_y, b->face_z);
                if (to_x == MPI_PROC_NULL)
                    tally->leakage[out_x] += leakage(b->face_x, g->mmi, (long)g->mk * g->jt,
                                                     block.mu, quad->weight, g->dy * g->dz);
                send(b->face_x, b->count_x, to_x, TAG_X, tally, g->comm);
                if (to_y == MPI_PROC_NULL)
                    tally->leakage[out_y] += leakage(b->face_y, g->mmi, (long)g->mk * g->it,
                                                     block.eta, quad->weight, g->dx * g->dz);
                send(b->face_y, b->count_y, to_y, TAG_Y, tally, g->comm);
            }
            tally->leakage[out_z] += leakage(b->face_z, g->mmi, (long)g->jt * g->it, block.xi,
                                             quad->weight, g->dx * g->dy);
        }
    }
}
