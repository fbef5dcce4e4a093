/* MUMPS (Amestoy, Duff, L'Excellent and Koster, SIAM J. Matrix Anal. Appl. 23(1), 2001) through
 * its C API dmumps_c: multifrontal LL^T of a symmetric positive definite matrix (SYM=1), MPI
 * ranks of MPI_COMM_WORLD with the host working too (PAR=1), the matrix assembled and centralized
 * on rank 0 (ICNTL(5)=0, ICNTL(18)=0). The pivot order is computed on rank 0 (ordering.h: AMD or
 * METIS, as for CHOLMOD) and given to MUMPS (ICNTL(7)=1, PERM_IN): Debian's MUMPS is built
 * without METIS, and a given order times the ordering apart from the symbolic analysis (JOB=1)
 * and makes both solvers factor the same permuted matrix. Each phase is timed from a common
 * barrier to the end of the slowest rank. */
#include <dmumps_c.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ordering.h"
#include "solvers.h"
#include "timer.h"

/* The 1-based names of the MUMPS user guide. */
#define ICNTL(i)  icntl[(i)-1]
#define INFOG(i)  infog[(i)-1]
#define RINFOG(i) rinfog[(i)-1]

enum {
    JOB_INIT = -1,
    JOB_END = -2,
    JOB_ANALYSIS = 1,
    JOB_FACTORIZATION = 2,
    JOB_SOLVE = 3
};
enum {
    ORDERING_GIVEN = 1
};

static double run_phase(DMUMPS_STRUC_C *id, int job)
{
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = pa_ticks();
    id->job = job;
    dmumps_c(id);
    double seconds = pa_ticks_to_seconds(pa_ticks() - start);
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return seconds;
}

/* MUMPS gives large counts in millions as negative integers (user guide, INFOG). */
static double count(int value) { return value < 0 ? -1e6 * value : value; }

/* INFOG(1) < 0 is known on every rank alike: one sentence. */
static int failed(const DMUMPS_STRUC_C *id, const char *phase, char *error, size_t size)
{
    if (id->INFOG(1) == -10)
        snprintf(error, size,
                 "the matrix is not positive definite (MUMPS: INFOG(1)=-10 in the "
                 "factorization, a pivot that is not positive after %d eliminated pivots)",
                 id->INFOG(2));
    else if (id->INFOG(1) == -13)
        snprintf(error, size, "MUMPS ran out of memory in the %s (INFOG(1)=-13, INFOG(2)=%d)",
                 phase, id->INFOG(2));
    else
        snprintf(error, size,
                 "MUMPS failed in the %s: INFOG(1)=%d, INFOG(2)=%d (see the error "
                 "codes of the MUMPS user guide)",
                 phase, id->INFOG(1), id->INFOG(2));
    return 2;
}

/* Rank 0's share: the lower triangle as 1-based triplets, room for the pivot order, and b copied
 * into x (MUMPS overwrites its right-hand side with the solution). Returns 0, or -1 when memory
 * runs out. */
static int centralize(const pa_sparse *a, const double *b, double *x, DMUMPS_STRUC_C *id)
{
    long long lower = pa_sparse_nnz_lower(a), k = 0;
    id->irn = pa_alloc((size_t)lower, sizeof(MUMPS_INT), "MUMPS row indices");
    id->jcn = pa_alloc((size_t)lower, sizeof(MUMPS_INT), "MUMPS column indices");
    id->a = pa_alloc((size_t)lower, sizeof(double), "MUMPS values");
    id->perm_in = pa_alloc((size_t)a->n, sizeof(MUMPS_INT), "perm_in");
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            if (a->rowind[p] >= j) {
                id->irn[k] = a->rowind[p] + 1;
                id->jcn[k] = j + 1;
                id->a[k++] = a->values[p];
            }
    id->n = a->n;
    id->nnz = lower;
    memcpy(x, b, sizeof(double) * (size_t)a->n);
    id->rhs = x;
    id->nrhs = 1;
    id->lrhs = a->n;
    return 0;
}

/* The ordering phase: rank 0 computes the pivot order (PERM_IN(i) = the position of variable i,
 * 1-based: the inverse of perm), timed like the other phases. Returns 0 or -1 on every rank. */
static int order(const pa_sparse *a, const char *ordering, DMUMPS_STRUC_C *id, double *seconds,
                 char *error, size_t size)
{
    int rank, refused = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = pa_ticks();
    if (rank == 0) {
        int *perm = pa_alloc((size_t)a->n, sizeof(int), "the ordering");
        double call_seconds;
        refused = !perm || pa_fill_reducing_order(a, ordering, perm, &call_seconds, error, size);
        for (int k = 0; !refused && k < a->n; k++)
            id->perm_in[perm[k]] = k + 1;
        free(perm);
        if (!perm)
            snprintf(error, size, "out of memory for a permutation of order %d", a->n);
    }
    *seconds = pa_ticks_to_seconds(pa_ticks() - start);
    MPI_Allreduce(MPI_IN_PLACE, seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Bcast(&refused, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return refused ? -1 : 0;
}

int pa_mumps_solve(const pa_sparse *a, const double *b, double *x, const char *ordering,
                   pa_phase_times *times, pa_solver_stats *stats, char *error, size_t size)
{
    int rank, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    DMUMPS_STRUC_C id = {0};
    id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(MPI_COMM_WORLD);
    id.par = 1;
    id.sym = 1;
    id.job = JOB_INIT;
    dmumps_c(&id);
    if (id.INFOG(1) < 0)
        return failed(&id, "initialization", error, size);
    id.ICNTL(1) = id.ICNTL(2) = id.ICNTL(3) = -1; /* no printout: errors become our sentence */
    id.ICNTL(4) = 0;
    id.ICNTL(5) = 0;
    id.ICNTL(18) = 0;
    id.ICNTL(7) = ORDERING_GIVEN;
    snprintf(stats->ordering, sizeof stats->ordering, "%s, given to MUMPS (ICNTL(7)=1)",
             pa_ordering_name(ordering));
    snprintf(stats->version, sizeof stats->version, "MUMPS %s", id.version_number);
    int short_of_memory = rank == 0 && centralize(a, b, x, &id);
    MPI_Allreduce(MPI_IN_PLACE, &short_of_memory, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (short_of_memory) {
        snprintf(error, size, "out of memory for the matrix handed to MUMPS");
        status = 2;
        goto done;
    }

    if (order(a, ordering, &id, &times->reorder_s, error, size)) {
        status = 2;
        goto done;
    }
    times->symbolic_s = run_phase(&id, JOB_ANALYSIS);
    times->analysis_s = times->reorder_s + times->symbolic_s;
    if (id.INFOG(1) < 0) {
        status = failed(&id, "analysis", error, size);
        goto done;
    }
    times->numeric_s = run_phase(&id, JOB_FACTORIZATION);
    if (id.INFOG(1) < 0) {
        status = failed(&id, "factorization", error, size);
        goto done;
    }
    if (id.INFOG(12) > 0) { /* SYM=1 may still factor an indefinite front: count its pivots */
        snprintf(error, size,
                 "the matrix is not positive definite (MUMPS: %d negative pivots, "
                 "INFOG(12))",
                 id.INFOG(12));
        status = 2;
        goto done;
    }
    times->solve_s = run_phase(&id, JOB_SOLVE);
    if (id.INFOG(1) < 0) {
        status = failed(&id, "solve", error, size);
        goto done;
    }
    stats->nnz_L = stats->factor_entries = count(id.INFOG(29));
    stats->nnz_L_source = "INFOG(29): entries in the factors after the factorization, all ranks "
                          "(the dense triangles of the fronts included)";
    stats->flops = id.RINFOG(3);
    stats->flops_source = "RINFOG(3): flops of the elimination, all ranks";
    /* MUMPS counts memory in whole MB: below 1 MB it says 0, which the document leaves null. */
    stats->memory_bytes = id.INFOG(22) > 0 ? 1e6 * id.INFOG(22) : NAN;
    stats->memory_source = id.INFOG(22) > 0
                               ? "INFOG(22): MB (10^6 bytes) effectively used by the "
                                 "factorization, summed over the ranks"
                               : "INFOG(22) is 0: MUMPS used less than 1 MB (it counts whole MB)";
done:
    id.job = JOB_END;
    dmumps_c(&id);
    free(id.irn);
    free(id.jcn);
    free(id.a);
    free(id.perm_in);
    return status;
}
