/* The peers of app.spmv's node-level kernels in bench/spmv_compare.py, each called as an
 * application would: Intel MKL's inspector-executor SpMV (mkl_sparse_d_create_csr,
 * mkl_sparse_set_mv_hint, mkl_sparse_optimize, then mkl_sparse_d_mv; libmkl_rt opened at run time
 * from the path given, so that nothing here links MKL) and librsb's rsb_spmv (recursive sparse
 * blocks, Martone 2014, after rsb_tune_spmm).
 *
 *     spmv-peers write OUT.csr matrix=FILE.mtx | problem=elasticity3d n=N
 *         reads or generates the matrix exactly as pa-spmv does (app.spsolve's Matrix Market
 *         reader and generators) and writes it in CSR: int64 n, int64 nnz, int32 rowptr[n + 1],
 *         int32 colind[nnz], float64 values[nnz]
 *     spmv-peers time IN.csr mkl|rsb THREADS SAMPLES [LIBMKL_RT]
 *         one JSON line: seconds per product of SAMPLES batches (each calibrated to last at
 *         least 10 ms), and the largest relative error against a plain CSR product (exit 3 and
 *         the first wrong component when it is above 1e-12) */
#include <dlfcn.h>
#include <math.h>
#include <rsb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matrix_market.h"
#include "problems.h"

typedef struct {
    int64_t n, nnz;
    int *rowptr, *colind;
    double *values;
} csr;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "spmv-peers: out of memory\n");
        exit(2);
    }
    return p;
}

/* x_j of pa-spmv (pa_x_value): 1 + (37 j mod 101) / 128. */
static double x_value(int64_t j) { return 1.0 + (double)((37 * j) % 101) / 128.0; }

/* -- write ------------------------------------------------------------------------------------ */

/* CSR of A from its CSC (a counting sort by row keeps the columns of each row increasing). */
static void write_csr(const pa_sparse *a, const char *path)
{
    int64_t n = a->n, nnz = a->colptr[a->n];
    int *rowptr = must(calloc((size_t)n + 1, sizeof(int)));
    int *colind = must(malloc((size_t)nnz * sizeof(int) + 1));
    double *values = must(malloc((size_t)nnz * sizeof(double) + 1));
    for (int64_t p = 0; p < nnz; p++)
        rowptr[a->rowind[p] + 1]++;
    for (int64_t i = 0; i < n; i++)
        rowptr[i + 1] += rowptr[i];
    int *next = must(malloc(((size_t)n + 1) * sizeof(int)));
    memcpy(next, rowptr, ((size_t)n + 1) * sizeof(int));
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            int k = next[a->rowind[p]]++;
            colind[k] = j;
            values[k] = a->values[p];
        }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&n, sizeof n, 1, f) != 1 || fwrite(&nnz, sizeof nnz, 1, f) != 1 ||
        fwrite(rowptr, sizeof(int), (size_t)n + 1, f) != (size_t)n + 1 ||
        fwrite(colind, sizeof(int), (size_t)nnz, f) != (size_t)nnz ||
        fwrite(values, sizeof(double), (size_t)nnz, f) != (size_t)nnz || fclose(f)) {
        fprintf(stderr, "spmv-peers: cannot write %s\n", path);
        exit(2);
    }
    free(next), free(rowptr), free(colind), free(values);
}

static int write_mode(int argc, char **argv)
{
    char error[512] = "";
    pa_sparse a = {0};
    int status;
    if (argc == 4 && !strncmp(argv[3], "matrix=", 7)) {
        pa_mm_budget budget = {(size_t)1 << 40, 0, 0};
        pa_mm_info info;
        status = pa_mm_read(argv[3] + 7, &budget, &a, &info, error, sizeof error);
    } else if (argc == 5 && !strcmp(argv[3], "problem=elasticity3d") &&
               !strncmp(argv[4], "n=", 2)) {
        status = pa_elasticity3d(atoi(argv[4] + 2), 1.0, 0.3, &a, error, sizeof error);
    } else {
        fprintf(stderr, "spmv-peers: write OUT.csr matrix=FILE | problem=elasticity3d n=N\n");
        return 2;
    }
    if (status) {
        fprintf(stderr, "spmv-peers: %s\n", error);
        return 2;
    }
    write_csr(&a, argv[2]);
    pa_sparse_free(&a);
    return 0;
}

/* -- time ------------------------------------------------------------------------------------- */

static void read_csr(const char *path, csr *m)
{
    FILE *f = fopen(path, "rb");
    int ok = f && fread(&m->n, sizeof m->n, 1, f) == 1 && fread(&m->nnz, sizeof m->nnz, 1, f) == 1;
    if (ok) {
        m->rowptr = must(malloc(((size_t)m->n + 1) * sizeof(int)));
        m->colind = must(malloc((size_t)m->nnz * sizeof(int) + 1));
        m->values = must(malloc((size_t)m->nnz * sizeof(double) + 1));
        ok = fread(m->rowptr, sizeof(int), (size_t)m->n + 1, f) == (size_t)m->n + 1 &&
             fread(m->colind, sizeof(int), (size_t)m->nnz, f) == (size_t)m->nnz &&
             fread(m->values, sizeof(double), (size_t)m->nnz, f) == (size_t)m->nnz;
    }
    if (!ok) {
        fprintf(stderr, "spmv-peers: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
}

/* One peer: its state, one product y = A x. */
typedef struct {
    void (*product)(void *state, const double *x, double *y);
    void *state;
} peer;

/* Intel MKL, LP64 interface (MKL_INT is int); enum values of mkl_spblas.h. */
typedef struct {
    int type, mode, diag;
} mkl_descr;
enum {
    MKL_INDEX_ZERO = 0,
    MKL_NON_TRANSPOSE = 10,
    MKL_GENERAL = 20,
    MKL_FILL_LOWER = 40,
    MKL_DIAG_NON_UNIT = 50
};
typedef struct {
    void *handle;
    mkl_descr descr;
    int (*mv)(int, double, void *, mkl_descr, const double *, double, double *);
} mkl_state;

static void *mkl_symbol(void *library, const char *name)
{
    void *symbol = dlsym(library, name);
    if (!symbol) {
        fprintf(stderr, "spmv-peers: MKL lacks %s\n", name);
        exit(2);
    }
    return symbol;
}

static void mkl_product(void *state, const double *x, double *y)
{
    mkl_state *s = state;
    if (s->mv(MKL_NON_TRANSPOSE, 1.0, s->handle, s->descr, x, 0.0, y)) {
        fprintf(stderr, "spmv-peers: mkl_sparse_d_mv failed\n");
        exit(1);
    }
}

static peer mkl_peer(csr *m, int threads, const char *path)
{
    void *library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!library) {
        fprintf(stderr, "spmv-peers: cannot open %s: %s\n", path, dlerror());
        exit(2);
    }
    int (*set_layer)(int) = (int (*)(int))mkl_symbol(library, "MKL_Set_Threading_Layer");
    /* mkl_service.h: MKL_THREADING_SEQUENTIAL 1, MKL_THREADING_GNU 3 (libgomp, the OpenMP of the
     * rest of the machine). MKL's best at each count: its threaded layer costs a tiny product
     * 0.33 us where the sequential one takes 0.10 (bcsstk01, 1 thread). */
    set_layer(threads == 1 ? 1 : 3);
    void (*set_threads)(int) = (void (*)(int))mkl_symbol(library, "MKL_Set_Num_Threads");
    set_threads(threads);
    int (*create)(void **, int, int, int, int *, int *, int *, double *) =
        (int (*)(void **, int, int, int, int *, int *, int *, double *))mkl_symbol(
            library, "mkl_sparse_d_create_csr");
    int (*hint)(void *, int, mkl_descr, int) =
        (int (*)(void *, int, mkl_descr, int))mkl_symbol(library, "mkl_sparse_set_mv_hint");
    int (*optimize)(void *) = (int (*)(void *))mkl_symbol(library, "mkl_sparse_optimize");
    mkl_state *s = must(calloc(1, sizeof *s));
    s->descr = (mkl_descr){MKL_GENERAL, MKL_FILL_LOWER, MKL_DIAG_NON_UNIT};
    s->mv = (int (*)(int, double, void *, mkl_descr, const double *, double, double *))mkl_symbol(
        library, "mkl_sparse_d_mv");
    if (create(&s->handle, MKL_INDEX_ZERO, (int)m->n, (int)m->n, m->rowptr, m->rowptr + 1,
               m->colind, m->values) ||
        hint(s->handle, MKL_NON_TRANSPOSE, s->descr, 1000000) || optimize(s->handle)) {
        fprintf(stderr, "spmv-peers: MKL's inspector failed\n");
        exit(1);
    }
    return (peer){mkl_product, s};
}

static void rsb_product(void *state, const double *x, double *y)
{
    const double one = 1.0, zero = 0.0;
    if (rsb_spmv(RSB_TRANSPOSITION_N, &one, state, x, 1, &zero, y, 1) != RSB_ERR_NO_ERROR) {
        fprintf(stderr, "spmv-peers: rsb_spmv failed\n");
        exit(1);
    }
}

static peer rsb_peer(csr *m, int threads, const double *x, double *y)
{
    rsb_err_t error = rsb_lib_init(RSB_NULL_INIT_OPTIONS);
    rsb_int_t wanted = threads;
    if (!error)
        error = rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &wanted);
    struct rsb_mtx_t *a =
        error ? NULL
              : rsb_mtx_alloc_from_csr_const(m->values, m->rowptr, m->colind, (rsb_nnz_idx_t)m->nnz,
                                             RSB_NUMERICAL_TYPE_DOUBLE, (rsb_coo_idx_t)m->n,
                                             (rsb_coo_idx_t)m->n, 1, 1, RSB_FLAG_NOFLAGS, &error);
    const double one = 1.0, zero = 0.0;
    if (a) /* the blocking is tuned; the thread count stays ours (NULL) */
        error = rsb_tune_spmm(&a, NULL, NULL, 0, 0.0, RSB_TRANSPOSITION_N, &one, NULL, 1,
                              RSB_FLAG_WANT_COLUMN_MAJOR_ORDER, x, (rsb_nnz_idx_t)m->n, &zero, y,
                              (rsb_nnz_idx_t)m->n);
    if (!a || error) {
        fprintf(stderr, "spmv-peers: librsb could not build or tune the matrix\n");
        exit(1);
    }
    return (peer){rsb_product, a};
}

static double batch_seconds(const peer *p, long count, const double *x, double *y)
{
    double start = now();
    for (long i = 0; i < count; i++)
        p->product(p->state, x, y);
    return now() - start;
}

/* The largest |y_i - ref_i| / sum_j |a_ij x_j| against a plain CSR product (exit 3 above 1e-12). */
static double check(const csr *m, const double *x, const double *y, const char *name)
{
    double largest = 0.0;
    for (int64_t i = 0; i < m->n; i++) {
        double sum = 0.0, scale = 0.0;
        for (int k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
            sum += m->values[k] * x[m->colind[k]];
            scale += fabs(m->values[k] * x[m->colind[k]]);
        }
        double error = fabs(y[i] - sum) / (scale > 0 ? scale : 1.0);
        if (!(error <= 1e-12)) {
            fprintf(stderr,
                    "spmv-peers: %s computed a wrong y = A x: component %lld is %.17g, "
                    "the reference %.17g\n",
                    name, (long long)i + 1, y[i], sum);
            exit(3);
        }
        largest = fmax(largest, error);
    }
    return largest;
}

static int time_mode(int argc, char **argv)
{
    if (argc < 6 || (strcmp(argv[3], "mkl") && strcmp(argv[3], "rsb")) ||
        (!strcmp(argv[3], "mkl") && argc != 7)) {
        fprintf(stderr, "spmv-peers: time IN.csr mkl|rsb THREADS SAMPLES [LIBMKL_RT]\n");
        return 2;
    }
    csr m;
    read_csr(argv[2], &m);
    int threads = atoi(argv[4]), samples = atoi(argv[5]);
    double *x = must(malloc((size_t)m.n * sizeof(double) + 1));
    double *y = must(calloc((size_t)m.n + 1, sizeof(double)));
    for (int64_t j = 0; j < m.n; j++)
        x[j] = x_value(j);
    peer p = !strcmp(argv[3], "mkl") ? mkl_peer(&m, threads, argv[6]) : rsb_peer(&m, threads, x, y);
    long count = 1;
    batch_seconds(&p, 3, x, y); /* warm-up */
    while (batch_seconds(&p, count, x, y) < 0.01)
        count *= 2;
    memset(y, 0, (size_t)m.n * sizeof(double));
    printf("{\"peer\": \"%s\", \"threads\": %d, \"products_per_sample\": %ld, "
           "\"seconds_per_product\": [",
           argv[3], threads, count);
    for (int s = 0; s < samples; s++)
        printf("%s%.9e", s ? ", " : "", batch_seconds(&p, count, x, y) / (double)count);
    printf("], \"max_relative_error\": %.3e}\n", check(&m, x, y, argv[3]));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "write"))
        return write_mode(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "time"))
        return time_mode(argc, argv);
    fprintf(stderr, "usage: spmv-peers write OUT.csr matrix=FILE | problem=elasticity3d n=N\n"
                    "       spmv-peers time IN.csr mkl|rsb THREADS SAMPLES [LIBMKL_RT]\n");
    return 2;
}
