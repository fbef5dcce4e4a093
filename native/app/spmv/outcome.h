/* What pa-spmv measured, gathered on rank 0, and the document it becomes (document.c). */
#ifndef PA_SPMV_OUTCOME_H
#define PA_SPMV_OUTCOME_H

#include "args.h"
#include "comm.h"
#include "matrix_market.h"
#include "spmv.h"

/* One variant (or latency probe): every rank's samples, on rank 0. */
typedef struct {
    const pa_variant *variant; /* NULL for a latency probe */
    const char *name;
    const char *why; /* not measurable here, or NULL */
    int samples;     /* taken (the same on every rank) */
    int requested;
    long iterations;  /* products (or remote operations) per sample */
    double *per_rank; /* np x samples, rank-major: seconds per product (per operation) */
    double *slowest;  /* samples: the slowest rank's seconds per product */
    double *sample_s; /* samples: the slowest rank's seconds per sample */
    double *median;   /* np: each rank's median seconds per product (per operation) */
    long long *remote_operations; /* np: per product */
    double max_error;             /* against the reference, relative (document.c says how) */
    char layout[160];             /* the variant's layout(), or empty */
    double *y;                    /* n, the gathered result, when vectors=yes */
} pa_outcome;

/* The partition as rank 0 sees it: np entries each. */
typedef struct {
    int np, n;
    long long nnz;
    int *first_row;
    long long *rows, *nnz_of, *remote, *distinct, *touched; /* touched: distinct columns used */
} pa_partition;

/* Where the matrix came from. */
typedef struct {
    const char *path; /* NULL when generated */
    pa_mm_info file;
    const char *problem;
    int grid;
    const char *permutation; /* "none" or "random" */
    long long seed;
    int *pi; /* random: row and column i became pi[i] */
} pa_matrix_source;

typedef struct {
    const pa_args *args;
    const pa_world *world;
    const pa_timing *timing;
    const pa_matrix_source *source;
    const pa_partition *partition;
    pa_outcome *variants; /* local, local_transposed, csr, then the remote variants asked for */
    int nvariants;
    pa_outcome *get, *accumulate; /* the latency probes */
    const double *x;              /* n, when vectors=yes */
    int threads;
    double bandwidth_Bps; /* 0: not known */
    double error_limit;
} pa_spmv_result;

/* The reference products on rank 0, from the whole matrix (CSC), and sum_j |a_ij| |x_j| per
 * component, the scale of the summation error of any order (Higham, "Accuracy and Stability of
 * Numerical Algorithms", 2002, section 3.1): y_i may differ from the reference by at most
 * gamma_k sum_j |a_ij x_j| with k entries in the row. */
typedef struct {
    double *Ax, *abs_Ax, *ATx, *abs_ATx;
} pa_reference;

/* measure.c: one variant or latency probe, collective; the outcome is complete on rank 0. A
 * result that differs from the reference by more than `limit` ends the run (status 3). */
void pa_measure_variant(const pa_variant *variant, const pa_block *b, int threads,
                        const pa_timing *timing, const pa_reference *reference, double limit,
                        int keep_y, pa_outcome *out);
void pa_measure_latency(const pa_block *b, const pa_timing *timing, int accumulate,
                        pa_outcome *out);

/* Rank 0 writes the perfatlas.result/1 document; returns nonzero on a write error. */
int pa_spmv_write_document(const pa_spmv_result *result);

double pa_median(const double *values, int n);

#endif
