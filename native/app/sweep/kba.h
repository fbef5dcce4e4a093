/* The KBA wavefront sweep of app.sweep (Baker & Alcouffe, "Parallel 3-D S_N performance for
 * DANTSYS/MPI on the Cray T3D", 1997; Hoisie, Lubeck & Wasserman, "Performance and Scalability
 * Analysis of Teraflop-Scale Parallel Architectures Using Multidimensional Wavefront
 * Applications", IJHPCA 14(4), 2000; the Sweep3D code).
 *
 * The global grid (px it) x (py jt) x kt is cut over a px x py process grid in x and y; z stays
 * whole. For each octant, each process sweeps its cells in blocks of mmi directions x mk
 * k-planes (angle blocks outer, k-blocks inner, as Sweep3D): it receives the incoming x- and
 * y-faces of the block from its upstream neighbours, sweeps, and sends the outgoing faces
 * downstream, so that a diagonal wavefront of blocks crosses the process grid and the processes
 * work at once once the pipeline is filled. The z-face of an angle block is carried from
 * k-block to k-block within the process. The octants go from the corner (-x, -y) to (-x, +y),
 * (+x, +y), (+x, -y), the two z directions of a corner one after the other: each next sweep
 * starts where the last one ended or one grid edge away, so that consecutive octants overlap in
 * the pipeline. Boundaries are vacuum (no incoming flux). */
#ifndef PA_SWEEP_KBA_H
#define PA_SWEEP_KBA_H

#include <mpi.h>

#include "quadrature.h"

#define PA_OCTANTS 8

typedef struct {
    MPI_Comm comm;
    int px, py;        /* process grid: rank = q px + p */
    int p, q;          /* this process's position */
    int it, jt, kt;    /* cells of this process */
    int mk, mmi;       /* k-planes and directions per block */
    double sigma_t;    /* 1/cm */
    double dx, dy, dz; /* cm */
    int fixup;
} pa_kba;

/* What one sweep tallies on this process. */
typedef struct {
    double leakage[6]; /* outgoing particles per unit time through the faces x-, x+, y-, y+, z-,
                          z+ of the global domain (sum of w |cosine| area psi_out) */
    long negative;     /* outgoing face fluxes that came out negative (before any fixup) */
    long messages;     /* messages this process sent */
} pa_tally;

/* The octants in sweep order: {sx, sy, sz}. */
extern const int pa_octants[PA_OCTANTS][3];

/* The face buffers of one process (allocated once). */
typedef struct pa_kba_buffers pa_kba_buffers;
pa_kba_buffers *pa_kba_buffers_new(const pa_kba *grid);
void pa_kba_buffers_free(pa_kba_buffers *buffers);

/* One transport sweep over all 8 octants: phi (zeroed by the caller) gains the scalar flux of the
 * directional fluxes from `source` (per cell, ((k jt + j) it + i)). Collective over grid->comm. */
void pa_kba_sweep(const pa_kba *grid, const pa_quadrature *quadrature, pa_kba_buffers *buffers,
                  const double *source, double *phi, pa_tally *tally);

#endif
