/* Source iteration and particle balance (solver.h). */
#include "solver.h"
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pa_solver_alloc(pa_solver *s)
{
    const pa_kba *g = &s->grid;
    s->cells = (long)g->it * g->jt * g->kt;
    s->phi = pa_alloc((size_t)s->cells, sizeof(double), "the scalar flux");
    s->phi_next = pa_alloc((size_t)s->cells, sizeof(double), "phi_next");
    s->source = pa_alloc((size_t)s->cells, sizeof(double), "source");
    s->changes = pa_calloc((size_t)s->max_iterations, sizeof(double), "changes");
    s->buffers = pa_kba_buffers_new(g);
    s->in_x = pa_calloc((size_t)g->it, 1, "in_x");
    s->in_y = pa_calloc((size_t)g->jt, 1, "in_y");
    s->in_z = pa_calloc((size_t)g->kt, 1, "in_z");
    if (s->phi && s->phi_next && s->source && s->changes && s->buffers && s->in_x && s->in_y &&
        s->in_z)
        return 0;
    pa_solver_free(s);
    return -1;
}

void pa_solver_free(pa_solver *s)
{
    free(s->phi);
    free(s->phi_next);
    free(s->source);
    free(s->changes);
    pa_kba_buffers_free(s->buffers);
    free(s->in_x);
    free(s->in_y);
    free(s->in_z);
    s->phi = s->phi_next = s->source = s->changes = NULL;
    s->buffers = NULL;
    s->in_x = s->in_y = s->in_z = NULL;
}

/* Marks the `local` cells from global index `first` on whose centres lie within the central
 * `fraction` of `global` cells (|c + 1/2 - global/2| <= fraction global / 2, symmetric under
 * c -> global - 1 - c); returns how many of the global cells do. */
static long axis_box(unsigned char *inside, long first, long local, long global, double fraction)
{
    long count = 0;
    for (long c = 0; c < global; c++) {
        int in = fabs((double)c + 0.5 - 0.5 * (double)global) <= 0.5 * fraction * (double)global;
        count += in;
        if (c >= first && c < first + local)
            inside[c - first] = (unsigned char)in;
    }
    return count;
}

long pa_solver_source_box(pa_solver *s, double fraction)
{
    const pa_kba *g = &s->grid;
    long nx = axis_box(s->in_x, (long)g->p * g->it, g->it, (long)g->px * g->it, fraction);
    long ny = axis_box(s->in_y, (long)g->q * g->jt, g->jt, (long)g->py * g->jt, fraction);
    long nz = axis_box(s->in_z, 0, g->kt, g->kt, fraction);
    s->source_cells = nx * ny * nz;
    return s->source_cells;
}

/* max|phi_next - phi| / max phi_next over all processes. */
static double relative_change(const pa_solver *s)
{
    double local[2] = {0.0, 0.0}, global[2];
    for (long c = 0; c < s->cells; c++) {
        local[0] = fmax(local[0], fabs(s->phi_next[c] - s->phi[c]));
        local[1] = fmax(local[1], fabs(s->phi_next[c]));
    }
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, s->grid.comm);
    return global[1] > 0 ? global[0] / global[1] : 0.0;
}

/* S = sigma_s phi + q, q inside the source box and 0 outside. */
static void update_source(pa_solver *s)
{
    const pa_kba *g = &s->grid;
    for (int k = 0; k < g->kt; k++)
        for (int j = 0; j < g->jt; j++) {
            const long row = ((long)k * g->jt + j) * g->it;
            const double q = s->in_z[k] && s->in_y[j] ? s->q : 0.0;
            for (int i = 0; i < g->it; i++)
                s->source[row + i] = s->sigma_s * s->phi[row + i] + (s->in_x[i] ? q : 0.0);
        }
}

void pa_solver_run(pa_solver *s)
{
    memset(s->phi, 0, sizeof(double) * (size_t)s->cells);
    s->iterations = 0;
    for (int l = 0; l < s->max_iterations; l++) {
        MPI_Pcontrol(1, "source");
        update_source(s);
        MPI_Pcontrol(-1, "source");

        MPI_Pcontrol(1, "sweep");
        memset(s->phi_next, 0, sizeof(double) * (size_t)s->cells);
        memset(&s->tally, 0, sizeof s->tally);
        pa_kba_sweep(&s->grid, &s->quadrature, s->buffers, s->source, s->phi_next, &s->tally);
        MPI_Pcontrol(-1, "sweep");

        MPI_Pcontrol(1, "convergence");
        s->changes[l] = relative_change(s);
        MPI_Pcontrol(-1, "convergence");
        double *swap = s->phi;
        s->phi = s->phi_next;
        s->phi_next = swap;
        s->iterations = l + 1;
        if (s->tolerance > 0 && s->changes[l] <= s->tolerance)
            break;
    }
}

void pa_solver_balance(const pa_solver *s, pa_balance *b)
{
    const pa_kba *g = &s->grid;
    const double volume = g->dx * g->dy * g->dz;
    /* local sums: source, flux, the 6 faces; then flux min and max; then counts */
    double sums[8] = {0}, extremes[2] = {INFINITY, INFINITY};
    for (long c = 0; c < s->cells; c++) {
        sums[0] += s->source[c];
        sums[1] += s->phi[c];
        extremes[0] = fmin(extremes[0], s->phi[c]);
        extremes[1] = fmin(extremes[1], -s->phi[c]);
    }
    memcpy(sums + 2, s->tally.leakage, sizeof s->tally.leakage);
    long counts[2] = {s->tally.negative, s->tally.messages};
    MPI_Allreduce(MPI_IN_PLACE, sums, 8, MPI_DOUBLE, MPI_SUM, g->comm);
    MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_DOUBLE, MPI_MIN, g->comm);
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, g->comm);

    b->source = volume * sums[0];
    b->collision = volume * g->sigma_t * sums[1];
    b->leakage = 0;
    for (int f = 0; f < 6; f++) {
        b->faces[f] = sums[2 + f];
        b->leakage += b->faces[f];
    }
    b->imbalance = fabs(b->source - b->collision - b->leakage) / b->source;
    b->external = volume * (double)s->source_cells * s->q;
    b->absorption = volume * (g->sigma_t - s->sigma_s) * sums[1];
    b->physical_imbalance = fabs(b->external - b->absorption - b->leakage) / b->external;
    b->flux_integral = volume * sums[1];
    b->flux_min = extremes[0];
    b->flux_max = -extremes[1];
    b->negative = counts[0];
    b->messages = counts[1];
}
