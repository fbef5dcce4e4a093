/* The sparse direct solvers pa-spsolve drives, one file each, behind one interface.
 *
 * A solve is one repetition of the whole pipeline: fill-reducing ordering, symbolic analysis,
 * numeric factorization A = L L^T, triangular solves; each phase timed on its own with the
 * project's timer. A solver that cannot time the ordering apart from the symbolic analysis (MUMPS
 * orders inside its analysis phase, JOB=1) leaves reorder_s and symbolic_s NAN and gives only
 * analysis_s. */
#ifndef PA_SOLVERS_H
#define PA_SOLVERS_H

#include <stddef.h>

#include "sparse.h"

typedef struct {
    double reorder_s, symbolic_s, analysis_s, numeric_s, solve_s;
} pa_phase_times;

/* What the solver itself reports about its factorization. */
typedef struct {
    double nnz_L;             /* entries of L, diagonal included */
    const char *nnz_L_source; /* which count of the solver this is */
    double factor_entries;    /* entries the factor actually stores (supernodes, fronts) */
    double flops;             /* factorization flops, the solver's own count */
    const char *flops_source;
    double memory_bytes; /* the solver's own figure; NAN where it gives none */
    const char *memory_source;
    char ordering[96]; /* the ordering as the solver names it */
    char version[64];
} pa_solver_stats;

/* One solve of A x = b. `a` and `b` are needed on the rank that holds the matrix (rank 0; the
 * only one without MPI); x is written there. Returns 0, or 2 with one sentence in `error` (not
 * positive definite, out of memory, a library error): the same on every rank. */
typedef int pa_solve_fn(const pa_sparse *a, const double *b, double *x, const char *ordering,
                        pa_phase_times *times, pa_solver_stats *stats, char *error, size_t size);

pa_solve_fn pa_cholmod_solve;
#ifdef PA_HAVE_MUMPS
pa_solve_fn pa_mumps_solve;
#endif

#endif
