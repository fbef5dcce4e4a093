/* Source iteration of app.sweep and its particle balance.
 *
 * One-group transport with isotropic scattering and an isotropic source q, uniform in a box
 * centred in the domain (the whole domain by default), psi per unit normalized solid angle
 * (phi = sum_directions w psi, sum w = 1):
 *     Omega . grad psi + sigma_t psi = sigma_s phi + q,   sigma_s = c sigma_t.
 * Source iteration (Lewis & Miller, sec. 3-3): phi_0 = 0; S_l = sigma_s phi_l + q;
 * phi_{l+1} = sweep(S_l), for a fixed count or until max|phi_{l+1} - phi_l| <= tolerance max phi.
 *
 * Particle balance of the last sweep, exact for diamond differencing (block.h) with or without
 * the fixup, whatever the iteration count (sums over all cells, V the cell volume):
 *     V sum S_l  =  V sigma_t sum phi_{l+1}  +  leakage          (source = collision + leakage)
 * and of the physical problem, which holds once the iteration has converged (N_q: source cells):
 *     V N_q q  =  V sigma_a sum phi  +  leakage,   sigma_a = sigma_t - sigma_s. */
#ifndef PA_SWEEP_SOLVER_H
#define PA_SWEEP_SOLVER_H

#include "kba.h"
#include "quadrature.h"

typedef struct {
    pa_kba grid;
    pa_quadrature quadrature;
    double sigma_s, q;                 /* 1/cm; particles / (cm^3 s) */
    unsigned char *in_x, *in_y, *in_z; /* this process's cells inside the source box, per axis */
    long source_cells;                 /* of the global grid */
    int max_iterations;
    double tolerance; /* 0: always max_iterations */
    long cells;       /* of this process */
    double *phi, *phi_next, *source;
    pa_kba_buffers *buffers;
    /* the outcome of the last solve */
    int iterations;
    double *changes; /* max|phi_{l+1} - phi_l| / max phi_{l+1}, per iteration */
    pa_tally tally;  /* of the last sweep, this process */
} pa_solver;

/* Allocates the arrays; returns -1 when memory is short. */
int pa_solver_alloc(pa_solver *solver);
/* The source box: the cells whose centres lie in the central `fraction` of the global extent
 * along every axis. Returns the number of source cells of the global grid (0: none). */
long pa_solver_source_box(pa_solver *solver, double fraction);
void pa_solver_free(pa_solver *solver);
/* One solve from phi = 0 (collective): MPI_Pcontrol regions "source", "sweep", "convergence". */
void pa_solver_run(pa_solver *solver);

/* The balance of the last solve, summed over all processes (collective). */
typedef struct {
    double source;             /* V sum S of the last sweep, particles / s */
    double collision;          /* V sigma_t sum phi */
    double leakage;            /* through all 6 faces */
    double faces[6];           /* x-, x+, y-, y+, z-, z+ */
    double imbalance;          /* |source - collision - leakage| / source */
    double external;           /* V N q */
    double absorption;         /* V sigma_a sum phi */
    double physical_imbalance; /* |external - absorption - leakage| / external */
    double flux_integral;      /* V sum phi, particles cm / s */
    double flux_min, flux_max; /* over cells, particles / (cm^2 s) */
    long negative, messages;   /* of the last sweep, all processes */
} pa_balance;

void pa_solver_balance(const pa_solver *solver, pa_balance *balance);

#endif
