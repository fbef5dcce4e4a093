/* CHOLMOD (Chen, Davis, Hager and Rajamanickam, ACM TOMS 35(3), 2008) through its C API:
 * supernodal Cholesky, the fill-reducing ordering computed first (ordering.h) and handed to the
 * symbolic analysis as a given permutation, so that ordering and analysis are timed apart. The
 * dense kernels of the supernodes are BLAS/LAPACK (multithreaded OpenBLAS). */
#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ordering.h"
#include "solvers.h"
#include "timer.h"

static double since(uint64_t start) { return pa_ticks_to_seconds(pa_ticks() - start); }

static int failed(const cholmod_common *c, const char *call, char *error, size_t size)
{
    snprintf(error, size, "CHOLMOD failed in %s (status %d%s)", call, c->status,
             c->status == CHOLMOD_OUT_OF_MEMORY ? ": out of memory" : "");
    return 2;
}

int pa_cholmod_solve(const pa_sparse *a, const double *b, double *x, const char *ordering,
                     pa_phase_times *times, pa_solver_stats *stats, char *error, size_t size)
{
    cholmod_common c;
    cholmod_start(&c);
    c.print = 0; /* errors become our sentence, not CHOLMOD's printout */
    c.supernodal = CHOLMOD_SUPERNODAL;
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_GIVEN;
    c.postorder = 1;
    int status = 0;
    snprintf(stats->ordering, sizeof stats->ordering, "%s", pa_ordering_name(ordering));
    snprintf(stats->version, sizeof stats->version, "CHOLMOD %d.%d.%d", CHOLMOD_MAIN_VERSION,
             CHOLMOD_SUB_VERSION, CHOLMOD_SUBSUB_VERSION);
    cholmod_sparse view = pa_cholmod_lower_view(a);
    cholmod_dense rhs = {.nrow = (size_t)a->n,
                         .ncol = 1,
                         .nzmax = (size_t)a->n,
                         .d = (size_t)a->n,
                         .x = (void *)b,
                         .xtype = CHOLMOD_REAL,
                         .dtype = CHOLMOD_DOUBLE};
    cholmod_factor *factor = NULL;
    cholmod_dense *solution = NULL;
    int *perm = pa_alloc((size_t)a->n, sizeof(int), "the ordering");

    if (pa_fill_reducing_order(a, ordering, perm, &times->reorder_s, error, size)) {
        status = 2;
        goto done;
    }
    uint64_t start = pa_ticks();
    factor = cholmod_analyze_p(&view, perm, NULL, 0, &c);
    times->symbolic_s = since(start);
    times->analysis_s = times->reorder_s + times->symbolic_s;
    if (!factor) {
        status = failed(&c, "cholmod_analyze_p", error, size);
        goto done;
    }
    stats->nnz_L = c.lnz;
    stats->nnz_L_source = "Common->lnz after cholmod_analyze_p: entries of L (diagonal included), "
                          "without the zeros of supernodal amalgamation";
    stats->flops = c.fl;
    stats->flops_source = "Common->fl after cholmod_analyze_p: flops of a simplicial LL^T "
                          "factorization with this ordering";

    start = pa_ticks();
    int factorized = cholmod_factorize(&view, factor, &c);
    times->numeric_s = since(start);
    if (c.status == CHOLMOD_NOT_POSDEF) {
        snprintf(error, size,
                 "the matrix is not positive definite (CHOLMOD: not positive definite "
                 "at column %d of the reordered matrix)",
                 (int)factor->minor + 1);
        status = 2;
        goto done;
    }
    if (!factorized || c.status != CHOLMOD_OK) {
        status = failed(&c, "cholmod_factorize", error, size);
        goto done;
    }
    stats->factor_entries = (double)factor->xsize;

    start = pa_ticks();
    solution = cholmod_solve(CHOLMOD_A, factor, &rhs, &c);
    times->solve_s = since(start);
    if (!solution) {
        status = failed(&c, "cholmod_solve", error, size);
        goto done;
    }
    memcpy(x, solution->x, sizeof(double) * (size_t)a->n);
    stats->memory_bytes = (double)c.memory_usage;
    stats->memory_source = "Common->memory_usage: CHOLMOD's peak memory in bytes, this solve";
done:
    cholmod_free_dense(&solution, &c);
    cholmod_free_factor(&factor, &c);
    free(perm);
    cholmod_finish(&c);
    return status;
}
