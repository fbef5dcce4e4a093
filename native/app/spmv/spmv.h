/* pa-spmv: irregular sparse matrix-vector products with remote access, after the SCI-cluster study
 * of SpMV on distributed shared memory (remote read y = A x, remote write y = A^T x; element-wise
 * remote access against replication; f = fraction of nonzeros that touch a remote element,
 * r = reuse of each distinct remote element).
 *
 * The rows are partitioned across the ranks in contiguous blocks: rank p owns rows
 * floor(p n / np) .. floor((p + 1) n / np) - 1, and the same entries of x and y. A variant is one
 * way of computing the product on this partition (remote_read.c, remote_write.c, local.c). */
#ifndef PA_SPMV_H
#define PA_SPMV_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pa_smi.h"
#include "sparse.h"

/* This rank's rows in compressed sparse row form (global column indices, increasing within a
 * row), and what the partition says about the columns they touch. */
typedef struct {
    int n, np, rank;
    int *first_row; /* np + 1 entries: rank p owns rows first_row[p] .. first_row[p + 1] - 1 */
    int lo, rows;   /* my first row and my row count */
    int *rowptr;    /* rows + 1, from 0 */
    int *colind;    /* global column of each nonzero */
    double *values;
    long long nnz;
    double *x_mine; /* x at my rows (the input of y = A^T x, and my share of x in y = A x) */
    double *x_all;  /* all of x, replicated (the local-only baseline and its OpenMP kernel) */
    /* Set up once (pa_block_index), used by every variant: */
    int *owner;  /* per nonzero: the rank owning its column */
    int *offset; /* per nonzero: the column's place in its owner's block */
    int *ghosts; /* the distinct remote columns, increasing (so grouped by owner) */
    int nghosts;
    long long remote_accesses; /* nonzeros whose column is remote */
} pa_block;

/* The value x_j of the input vector: 1 + (37 j mod 101) / 128, exact in binary, so that every
 * product differs from the reference by summation order alone. */
double pa_x_value(int j);

/* Rank 0 holds the whole matrix `a` (CSC, both triangles; ignored elsewhere) of order n; every rank
 * receives its block of rows (collective). Returns 0, or -1 with a sentence in `error` on the
 * rank that ran out of memory (the caller makes every rank agree). */
int pa_block_scatter(const pa_sparse *a, int n, pa_block *b, char *error, size_t size);
/* The rank owning `column` (binary search over first_row). */
int pa_owner_of(const pa_block *b, int column);
/* owner, offset, ghosts and remote_accesses; returns 0 or -1 (out of memory). */
int pa_block_index(pa_block *b);
void pa_block_free(pa_block *b);

/* One way of computing a product on the partition. */
typedef struct {
    const char *name;
    const char *operation;  /* "y = A x" or "y = A^T x" */
    const char *definition; /* what one product does, one sentence */
    const char *model;      /* "E1" (element-wise), "E2" (replication) or NULL (no model) */
    const char *latency;    /* the remote operation the model's t_r is: "get", "accumulate" */
    int transposed;         /* computes y = A^T x */
    int partial;            /* its result is a full-length partial sum, to be summed over ranks */
    /* Collective. Returns its state, or NULL with `why` (not measurable here, one sentence). */
    void *(*setup)(const pa_block *b, int threads, const char **why);
    /* One product, collective: returns this rank's own time in seconds, synchronization that
     * only separates products (barriers before x or y may change) excluded. */
    double (*product)(void *state);
    /* Optional, node-level kernels: `count` products in a row, timed once (nothing to exclude
     * between them; a timer read per product would cost as much as a product of a small matrix).
     * Returns their seconds. */
    double (*products)(void *state, long count);
    /* After a product: y at my rows (or the full-length partial). */
    const double *(*result)(void *state);
    /* Remote operations this rank issues per product (gets, accumulates, pairs sent). */
    long long (*remote_operations)(void *state);
    /* Optional, on rank 0: the storage it chose for this matrix, one phrase (bcsr's block size
     * and fill ratio). */
    void (*layout)(void *state, char *text, size_t size);
    void (*finish)(void *state);
} pa_variant;

extern const pa_variant pa_local_gather, pa_local_scatter, pa_csr_threads;
/* The optional node-level kernels (fast.c, bcsr.c; kernels=): checked against the same
 * reference. */
extern const pa_variant pa_csr_unroll, pa_csr_simd, pa_sell, pa_bcsr;
/* x_loads= of the AVX-512 csr_simd and sell: "gather", "scalar", or "auto" (the gather on Intel);
 * set before they run. */
void pa_spmv_x_loads(const char *choice);

/* What they share (node_kernels.c): the threads a product of `stored` elements is worth
 * (`threads`, fewer on a small matrix); bounds[0..parts] cutting 0..count-1 into consecutive
 * ranges of about equal weight, the weight of index i being prefix[i + 1] - prefix[i] (a
 * nonzero count: rowptr, a chunk's or a block row's stored elements); and the seconds of
 * `count` products in a row, `once` computing one. */
int pa_threads_for(long long stored, int threads);
void pa_split_by_weight(const int *prefix, int count, int parts, int *bounds);
/* One product cut in `parts` (bounds: parts + 1): part t by thread t when the runtime gives all
 * `parts` threads, more parts per thread when it gives fewer; no parallel region for one part. */
void pa_run_parts(void (*part)(const void *state, int first, int last), const void *state,
                  int parts, const int *bounds);
double pa_timed_products(void (*once)(const void *state), const void *state, long count);

/* The local products the variants share (local.c), one thread:
 *   pa_gather_rows   y_i = sum_k a_ik x[column[k]] over my rows i (column: colind for a
 *                    full-length x, or indices into a compacted one)
 *   pa_scatter_add   y_j += a_ij x_i for my rows i into a full-length y
 *   pa_scatter_rows  the same after resetting only the entries it touches (my block and the
 *                    ghosts): the others keep the zeros of their setup */
void pa_gather_rows(const pa_block *b, const int *column, const double *x, double *y);
void pa_scatter_add(const pa_block *b, double *y);
void pa_scatter_rows(const pa_block *b, double *y);
/* The remote_operations of a variant without remote access: 0. */
long long pa_no_remote_operations(void *state);
extern const pa_variant pa_read_element, pa_read_replicate, pa_read_shared;
extern const pa_variant pa_write_element, pa_write_combine;

/* A window of `count` doubles on every rank of MPI_COMM_WORLD (MPI_Win_allocate), opened for
 * passive-target access (MPI_Win_lock_all). Returns 0, or -1 with a sentence in `why` when this
 * MPI cannot create one (Open MPI's osc/rdma over TCP). */
int pa_open_window(MPI_Aint count, double **base, MPI_Win *window, const char **why);
void pa_close_window(MPI_Win *window);

/* x or y as a libpa-smi region of n doubles divided blocked like the rows (flags: 0 or
 * PA_SMI_RMA_ONLY), collective. Returns 0, or -1 with a sentence in `why` when this MPI cannot
 * create its windows (Open MPI's osc/rdma over TCP). */
int pa_spmv_region(const pa_block *b, unsigned flags, pa_smi_region **region, const char **why);
/* The ghosts (increasing, outside my block), with my block when `with_block`, merged into runs of
 * consecutive columns lo[k] .. hi[k] - 1, increasing: the ranges a libpa-smi copy holds or a
 * product touches. lo and hi have room for nghosts + 1 runs; returns the count. */
int pa_spmv_runs(const pa_block *b, int with_block, int64_t *lo, int64_t *hi);
/* libpa-smi's last sentence and exit status 3. */
void pa_spmv_smi_failed(void);
/* A libpa-smi call that cannot fail on valid arguments: its sentence and exit status 3 if it
 * does. Inline: read_element and write_element check the call of every remote element, whose
 * hand-coded MPI versions they are compared with. */
static inline void pa_spmv_smi(int status)
{
    if (__builtin_expect(status != PA_SMI_OK, 0))
        pa_spmv_smi_failed();
}

/* Elapsed seconds since `start` (pa_ticks). */
double pa_seconds_since(uint64_t start);

#endif
