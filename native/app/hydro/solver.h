/* One app.hydro run: the state of this process's slab, the cycle, and what it measures.
 *
 * A cycle (Kerbyson et al., SC2001: computation, boundary gather/scatter, global reductions):
 *   1. the time step: the fastest signal max_axes (|u_axis| + a) / h over this slab, one
 *      MPI_Allreduce (MIN of its negative and of the first non-physical cell found, so that one
 *      reduction carries both), dt = cfl / speed (trimmed to end at end_time);
 *   2. one MUSCL-Hancock sweep per axis longer than one cell (Strang's alternation: x y z on odd
 *      cycles, z y x on even), each a gather/scatter of the ghosts then the fluxes and update;
 *   3. with solver=cg, implicit heat conduction of the internal energy by conjugate gradients
 *      (conduction.h).
 * Each phase is an MPI_Pcontrol region ("compute", "gather_scatter", "reduction") and is timed
 * on each process. */
#ifndef PA_HYDRO_SOLVER_H
#define PA_HYDRO_SOLVER_H

#include <mpi.h>
#include <stdint.h>

#include "euler.h"
#include "slab.h"
#include "timer.h"

typedef enum {
    PA_PROBLEM_WAVE,
    PA_PROBLEM_SOD,
    PA_PROBLEM_EXPANSION
} pa_problem;
typedef enum {
    PA_PHASE_COMPUTE,
    PA_PHASE_EXCHANGE,
    PA_PHASE_REDUCTION,
    PA_PHASES
} pa_phase;

typedef struct {
    pa_slab slab;
    pa_gas gas;
    pa_problem problem;
    int axis; /* the shock tube's axis; the cell size is 1 / n[axis] */
    double h; /* cell size (cubic cells) */
    double cfl, end_time, speed, pressure_ratio;
    long cycles; /* fixed cycles when end_time is 0 */
    int cg;      /* implicit conduction on */
    double conductivity, cg_tolerance;
    int cg_max_iterations;
    long local; /* owned cells + ghosts */
    double *u, *w, *flux_left;
    double *x, *r, *p, *q, *b; /* conduction: x and p hold ghosts */
    /* the outcome of the last run */
    double time, dt;
    long cycle;
    double seconds[PA_PHASES]; /* this process, summed over the cycles */
    long exchanges, cg_exchanges, reductions, cg_iterations, cg_most, cg_unconverged;
    long bad_cell; /* global index of the first non-physical owned cell found, or -1 */
    long bad_cycle;
    double bad_rho, bad_p;
} pa_hydro;

static const char *const pa_phase_names[PA_PHASES] = {"compute", "gather_scatter", "reduction"};

/* A phase: its profiler region opened and its start time. */
static inline uint64_t pa_phase_begin(pa_phase phase)
{
    MPI_Pcontrol(1, pa_phase_names[phase]);
    return pa_ticks();
}

static inline void pa_phase_end(pa_hydro *hydro, pa_phase phase, uint64_t start)
{
    hydro->seconds[phase] += pa_ticks_to_seconds(pa_ticks() - start);
    MPI_Pcontrol(-1, pa_phase_names[phase]);
}

/* Allocates the fields (the slab built). */
void pa_hydro_alloc(pa_hydro *hydro);
void pa_hydro_free(pa_hydro *hydro);
/* The problem's initial state. */
void pa_hydro_initialize(pa_hydro *hydro);
/* Runs the cycles (collective); exits with status 3 naming the cycle and cell where the solution
 * goes non-physical. */
void pa_hydro_run(pa_hydro *hydro);

/* Sums over all processes of U (5 values) and of |U| (5 values), times the cell volume. */
void pa_hydro_totals(const pa_hydro *hydro, double totals[2 * PA_NVAR]);
/* L1 errors of density, velocity along the axis and pressure against the exact solution of the
 * shock tube at hydro->time (mean over cells), and the star pressure and velocity. */
void pa_hydro_shock_errors(const pa_hydro *hydro, double l1[3], double star[2]);
/* An XOR over cells of a hash of (global index, U): the same bits on any process count exactly
 * when every cell holds the same bits. */
uint64_t pa_hydro_checksum(const pa_hydro *hydro);

#endif
