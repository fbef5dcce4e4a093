/* Implicit heat conduction by matrix-free conjugate gradients (conduction.h). */
#include "conduction.h"

#include <math.h>

/* sum over the faces of cell c of (f_neighbour - f_c), over the axes longer than one cell. */
static double face_differences(const pa_hydro *hy, const double *f, long c)
{
    double sum = 0;
    for (int axis = 0; axis < 3; axis++) {
        if (hy->slab.n[axis] == 1)
            continue;
        sum += f[pa_slab_neighbour(&hy->slab, c, axis, -1)] - f[c];
        sum += f[pa_slab_neighbour(&hy->slab, c, axis, +1)] - f[c];
    }
    return sum;
}

/* The sum over all processes of a.b over the owned cells, and of c.d when c is given (one
 * reduction for both): out[0], out[1]. */
static void dots(pa_hydro *hy, const double *a, const double *b, const double *c, const double *d,
                 double *out)
{
    uint64_t start = pa_phase_begin(PA_PHASE_COMPUTE);
    double ab = 0, cd = 0;
    const long cells = hy->slab.cells;
#pragma omp parallel for schedule(static) reduction(+ : ab, cd)
    for (long i = 0; i < cells; i++) {
        ab += a[i] * b[i];
        if (c)
            cd += c[i] * d[i];
    }
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
    start = pa_phase_begin(PA_PHASE_REDUCTION);
    double local[2] = {ab, cd};
    MPI_Allreduce(local, out, c ? 2 : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    hy->reductions++;
    pa_phase_end(hy, PA_PHASE_REDUCTION, start);
}

static void exchange(pa_hydro *hy, double *field)
{
    uint64_t start = pa_phase_begin(PA_PHASE_EXCHANGE);
    pa_slab_exchange(&hy->slab, field, 1, MPI_COMM_WORLD);
    hy->cg_exchanges++;
    pa_phase_end(hy, PA_PHASE_EXCHANGE, start);
}

/* q = (diag(rho) - sigma L) p on the owned cells (p's ghosts current). */
static void apply(pa_hydro *hy, double sigma, const double *p, double *q)
{
    uint64_t start = pa_phase_begin(PA_PHASE_COMPUTE);
    const long cells = hy->slab.cells;
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++)
        q[c] = hy->u[c * PA_NVAR] * p[c] - sigma * face_differences(hy, p, c);
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
}

void pa_conduction_step(pa_hydro *hy, double dt)
{
    const long cells = hy->slab.cells;
    const double sigma = dt * hy->conductivity / (hy->h * hy->h);
    double *x = hy->x, *r = hy->r, *p = hy->p, *q = hy->q, *b = hy->b;
    uint64_t start = pa_phase_begin(PA_PHASE_COMPUTE);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++) {
        const double *u = hy->u + c * PA_NVAR;
        b[c] = u[4] - 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0]; /* rho e */
        x[c] = b[c] / u[0];
    }
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
    exchange(hy, x);
    apply(hy, sigma, x, q);
    start = pa_phase_begin(PA_PHASE_COMPUTE);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++)
        p[c] = r[c] = b[c] - q[c];
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
    double sums[2];
    dots(hy, r, r, b, b, sums);
    double rr = sums[0];
    const double goal = hy->cg_tolerance * hy->cg_tolerance * sums[1];
    int k = 0;
    for (; k < hy->cg_max_iterations && rr > goal; k++) {
        exchange(hy, p);
        apply(hy, sigma, p, q);
        double pq;
        dots(hy, p, q, NULL, NULL, &pq);
        const double alpha = rr / pq;
        start = pa_phase_begin(PA_PHASE_COMPUTE);
#pragma omp parallel for schedule(static)
        for (long c = 0; c < cells; c++) {
            x[c] += alpha * p[c];
            r[c] -= alpha * q[c];
        }
        pa_phase_end(hy, PA_PHASE_COMPUTE, start);
        double next;
        dots(hy, r, r, NULL, NULL, &next);
        const double beta = next / rr;
        rr = next;
        start = pa_phase_begin(PA_PHASE_COMPUTE);
#pragma omp parallel for schedule(static)
        for (long c = 0; c < cells; c++)
            p[c] = r[c] + beta * p[c];
        pa_phase_end(hy, PA_PHASE_COMPUTE, start);
    }
    hy->cg_iterations += k;
    if (k > hy->cg_most)
        hy->cg_most = k;
    if (rr > goal)
        hy->cg_unconverged++;
    exchange(hy, x);
    start = pa_phase_begin(PA_PHASE_COMPUTE);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++)
        hy->u[c * PA_NVAR + 4] += sigma * face_differences(hy, x, c);
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
}
