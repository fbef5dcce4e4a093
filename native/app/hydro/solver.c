/* The cycle of app.hydro (solver.h). */
#include "solver.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "conduction.h"
#include "exact.h"

#define PA_PI 3.14159265358979323846

void pa_hydro_alloc(pa_hydro *hy)
{
    const pa_slab *s = &hy->slab;
    hy->local = s->cells + s->ghosts;
    hy->u = pa_alloc((size_t)hy->local * PA_NVAR, sizeof(double), "the conserved state");
    hy->w = pa_alloc((size_t)hy->local * PA_NVAR, sizeof(double), "the primitive state");
    hy->flux_left = pa_alloc((size_t)s->cells * PA_NVAR, sizeof(double), "the interface fluxes");
    if (hy->cg) {
        hy->x = pa_alloc((size_t)hy->local, sizeof(double), "the conduction solution");
        hy->p = pa_alloc((size_t)hy->local, sizeof(double), "the conduction search direction");
        hy->r = pa_alloc((size_t)s->cells, sizeof(double), "the conduction residual");
        hy->q = pa_alloc((size_t)s->cells, sizeof(double), "the conduction product");
        hy->b = pa_alloc((size_t)s->cells, sizeof(double), "the conduction right-hand side");
    }
}

void pa_hydro_free(pa_hydro *hy)
{
    free(hy->u), free(hy->w), free(hy->flux_left);
    free(hy->x), free(hy->p), free(hy->r), free(hy->q), free(hy->b);
}

/* -- initial states -------------------------------------------------------------------------- */

/* The shock tubes' two states along the axis, split at its middle. */
static pa_exact shock_tube(const pa_hydro *hy)
{
    if (hy->problem == PA_PROBLEM_SOD) /* Sod 1978: pressure ratio 10 */
        return (pa_exact){
            {1.0, 0.0, 1.0}, {0.125, 0.0, 1.0 / hy->pressure_ratio}, hy->gas.gamma, 0, 0};
    /* two rarefactions (Toro's test 2, "123", with speeds +-speed) */
    return (pa_exact){{1.0, -hy->speed, 0.4}, {1.0, hy->speed, 0.4}, hy->gas.gamma, 0, 0};
}

/* A smooth periodic 3-D flow (every axis of the box one period) that steepens into shocks. */
static void wave_state(const pa_hydro *hy, const long ijk[3], double w[PA_NVAR])
{
    double phase[3];
    for (int a = 0; a < 3; a++)
        phase[a] = 2.0 * PA_PI * ((double)ijk[a] + 0.5) / (double)hy->slab.n[a];
    w[0] = 1.0 + 0.2 * (sin(phase[0]) + sin(phase[1]) + sin(phase[2]));
    w[1] = 0.5 * sin(phase[1] + phase[2]);
    w[2] = 0.5 * sin(phase[2] + phase[0]);
    w[3] = 0.5 * sin(phase[0] + phase[1]);
    w[4] = 1.0 + 0.3 * cos(phase[0] + phase[1] + phase[2]);
}

void pa_hydro_initialize(pa_hydro *hy)
{
    const pa_slab *s = &hy->slab;
    const pa_exact tube = shock_tube(hy);
    const long cells = s->cells;
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++) {
        long ijk[3];
        pa_slab_coordinates(s, s->first + c, ijk);
        double w[PA_NVAR] = {0, 0, 0, 0, 0};
        if (hy->problem == PA_PROBLEM_WAVE)
            wave_state(hy, ijk, w);
        else {
            const int left = 2 * ijk[hy->axis] < s->n[hy->axis];
            const pa_state1d *side = left ? &tube.left : &tube.right;
            w[0] = side->rho, w[1 + hy->axis] = side->u, w[4] = side->p;
        }
        pa_conserved(&hy->gas, w, hy->u + c * PA_NVAR);
    }
    hy->time = hy->dt = 0;
    hy->cycle = 0;
    memset(hy->seconds, 0, sizeof hy->seconds);
    hy->exchanges = hy->cg_exchanges = hy->reductions = 0;
    hy->cg_iterations = hy->cg_most = hy->cg_unconverged = 0;
    hy->bad_cell = -1;
}

/* -- the cycle ------------------------------------------------------------------------------- */

/* A non-physical owned cell: the first found (lowest global index) is kept. */
static void found_bad(pa_hydro *hy, long c, const double *w)
{
    long g = hy->slab.first + c;
    if (hy->bad_cell < 0 || g < hy->bad_cell) {
        hy->bad_cell = g;
        hy->bad_cycle = hy->cycle;
        hy->bad_rho = w[0];
        hy->bad_p = w[4];
    }
}

/* W of `count` local cells; the first non-physical owned cell is kept (found_bad). */
static void primitives(pa_hydro *hy, long count)
{
    long bad = count;
    const long cells = hy->slab.cells;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (long c = 0; c < count; c++)
        if (pa_primitive(&hy->gas, hy->u + c * PA_NVAR, hy->w + c * PA_NVAR) && c < cells &&
            c < bad)
            bad = c;
    if (bad < cells)
        found_bad(hy, bad, hy->w + bad * PA_NVAR);
}

/* "pa-hydro: ..." on stderr. */
__attribute__((format(printf, 1, 2))) static void say(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    pa_vmessage(format, ap);
    va_end(ap);
}

/* A non-physical cell found on some process (`bad`, its global index): its owner sends what it
 * found to every process, rank 0 says where in one sentence, and every process finalizes MPI and
 * exits with status 3 (a condition all processes know of: no MPI_Abort needed). */
static noreturn void stop_non_physical(const pa_hydro *hy, long bad)
{
    double found[3] = {(double)hy->bad_cycle, hy->bad_rho, hy->bad_p};
    MPI_Bcast(found, 3, MPI_DOUBLE, (int)(bad / hy->slab.cells), MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        long ijk[3];
        pa_slab_coordinates(&hy->slab, bad, ijk);
        say("the solution went non-physical in cycle %ld at cell %ld (i=%ld, j=%ld, k=%ld): "
            "density %.6g, pressure %.6g; give a smaller cfl or a milder problem",
            (long)found[0], bad, ijk[0], ijk[1], ijk[2], found[1], found[2]);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(3);
}

/* Every process learns whether one found a non-physical cell (stop_non_physical). `speed`
 * rides along: the reduction returns its maximum. */
static double reduce_speed_and_check(pa_hydro *hy, double speed)
{
    uint64_t start = pa_phase_begin(PA_PHASE_REDUCTION);
    const double none = (double)hy->slab.total;
    double local[2] = {-speed, hy->bad_cell < 0 ? none : (double)hy->bad_cell}, all[2];
    MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    hy->reductions++;
    pa_phase_end(hy, PA_PHASE_REDUCTION, start);
    if (all[1] < none)
        stop_non_physical(hy, (long)all[1]);
    return -all[0];
}

/* The time step: cfl / max over owned cells and axes of (|u_axis| + a) / h. */
static double time_step(pa_hydro *hy)
{
    uint64_t start = pa_phase_begin(PA_PHASE_COMPUTE);
    primitives(hy, hy->slab.cells);
    double speed = 0;
    const long cells = hy->slab.cells;
#pragma omp parallel for schedule(static) reduction(max : speed)
    for (long c = 0; c < cells; c++) {
        const double *w = hy->w + c * PA_NVAR, a = pa_sound_speed(&hy->gas, w);
        for (int axis = 0; axis < 3; axis++)
            if (hy->slab.n[axis] > 1)
                speed = fmax(speed, (fabs(w[1 + axis]) + a) / hy->h);
    }
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
    speed = reduce_speed_and_check(hy, speed);
    double dt = hy->cfl / speed;
    if (hy->end_time > 0 && hy->time + dt > hy->end_time)
        dt = hy->end_time - hy->time;
    return dt;
}

/* One MUSCL-Hancock sweep along `axis`: each owned cell's left-face flux, then the update with
 * the right face taken from the next cell when this slab owns it (the same bits). */
static void sweep(pa_hydro *hy, int axis, double dt)
{
    const pa_slab *s = &hy->slab;
    uint64_t start = pa_phase_begin(PA_PHASE_EXCHANGE);
    pa_slab_exchange(&hy->slab, hy->u, PA_NVAR, MPI_COMM_WORLD);
    hy->exchanges++;
    pa_phase_end(hy, PA_PHASE_EXCHANGE, start);

    start = pa_phase_begin(PA_PHASE_COMPUTE);
    primitives(hy, hy->local);
    const double dt_dx = dt / hy->h;
    const double *w = hy->w;
    const long cells = s->cells;
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++)
        pa_interface_flux(&hy->gas, w + pa_slab_neighbour(s, c, axis, -2) * PA_NVAR,
                          w + pa_slab_neighbour(s, c, axis, -1) * PA_NVAR, w + c * PA_NVAR,
                          w + pa_slab_neighbour(s, c, axis, +1) * PA_NVAR, axis, dt_dx,
                          hy->flux_left + c * PA_NVAR);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < cells; c++) {
        const long next = pa_slab_neighbour(s, c, axis, +1);
        double own[PA_NVAR];
        const double *right = own;
        if (next < cells && next != c)
            right = hy->flux_left + next * PA_NVAR;
        else
            pa_interface_flux(&hy->gas, w + pa_slab_neighbour(s, c, axis, -1) * PA_NVAR,
                              w + c * PA_NVAR, w + next * PA_NVAR,
                              w + pa_slab_neighbour(s, c, axis, +2) * PA_NVAR, axis, dt_dx, own);
        const double *left = hy->flux_left + c * PA_NVAR;
        for (int v = 0; v < PA_NVAR; v++)
            hy->u[c * PA_NVAR + v] -= dt_dx * (right[v] - left[v]);
    }
    pa_phase_end(hy, PA_PHASE_COMPUTE, start);
}

void pa_hydro_run(pa_hydro *hy)
{
    for (;;) {
        if (hy->end_time > 0 ? hy->time >= hy->end_time : hy->cycle >= hy->cycles)
            break;
        hy->cycle++;
        const double dt = time_step(hy);
        for (int i = 0; i < 3; i++) {
            const int axis = hy->cycle % 2 ? i : 2 - i; /* Strang: x y z, then z y x */
            if (hy->slab.n[axis] > 1)
                sweep(hy, axis, dt);
        }
        if (hy->cg)
            pa_conduction_step(hy, dt);
        hy->time = hy->end_time > 0 && hy->time + dt >= hy->end_time ? hy->end_time : hy->time + dt;
        hy->dt = dt;
    }
    hy->cycle++; /* the last cycle's outcome, checked as a next cycle would */
    primitives(hy, hy->slab.cells);
    reduce_speed_and_check(hy, 0);
    hy->cycle--;
    hy->reductions--; /* that check is not part of a cycle */
}

/* -- what a run is checked by ---------------------------------------------------------------- */

void pa_hydro_totals(const pa_hydro *hy, double totals[2 * PA_NVAR])
{
    double local[2 * PA_NVAR] = {0};
    const double volume = hy->h * hy->h * hy->h;
    for (long c = 0; c < hy->slab.cells; c++)
        for (int v = 0; v < PA_NVAR; v++) {
            local[v] += hy->u[c * PA_NVAR + v] * volume;
            local[PA_NVAR + v] += fabs(hy->u[c * PA_NVAR + v]) * volume;
        }
    MPI_Allreduce(local, totals, 2 * PA_NVAR, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void pa_hydro_shock_errors(const pa_hydro *hy, double l1[3], double star[2])
{
    pa_exact tube = shock_tube(hy);
    pa_exact_solve(&tube); /* the problems' data generate no vacuum (checked at set-up) */
    star[0] = tube.p_star, star[1] = tube.u_star;
    double local[3] = {0, 0, 0};
    const long n = hy->slab.n[hy->axis];
    for (long c = 0; c < hy->slab.cells; c++) {
        long ijk[3];
        pa_slab_coordinates(&hy->slab, hy->slab.first + c, ijk);
        const double x = ((double)ijk[hy->axis] + 0.5) / (double)n - 0.5;
        const pa_state1d e = pa_exact_sample(&tube, x / hy->time);
        double w[PA_NVAR];
        pa_primitive(&hy->gas, hy->u + c * PA_NVAR, w);
        local[0] += fabs(w[0] - e.rho);
        local[1] += fabs(w[1 + hy->axis] - e.u);
        local[2] += fabs(w[4] - e.p);
    }
    MPI_Allreduce(local, l1, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        l1[i] /= (double)hy->slab.total;
}

/* FNV-1a, 64 bits (Fowler, Noll & Vo). */
static uint64_t fnv1a(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

uint64_t pa_hydro_checksum(const pa_hydro *hy)
{
    uint64_t local = 0, all;
    for (long c = 0; c < hy->slab.cells; c++) {
        const long g = hy->slab.first + c;
        uint64_t hash = fnv1a(0xcbf29ce484222325ull, &g, sizeof g);
        local ^= fnv1a(hash, hy->u + c * PA_NVAR, sizeof(double) * PA_NVAR);
    }
    MPI_Allreduce(&local, &all, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    return all;
}
