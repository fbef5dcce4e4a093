/* pa-spsolve: a sparse symmetric positive definite direct solve, the application proxy
 * app.spsolve. The matrix is read from a Matrix Market file or generated (problems.h); the solve
 * (ordering, symbolic analysis, numeric factorization, triangular solves) is repeated `repeat`
 * times, every phase timed on its own each time; the residual ||b - A x|| / ||b|| is computed
 * from the assembled matrix, independently of the solver. CHOLMOD runs in this one process,
 * multithreaded through OpenBLAS; MUMPS runs on the MPI ranks of the launch, the matrix
 * centralized on rank 0. One perfatlas.result/1 document, from rank 0. */
#include <float.h>
#include <hwloc.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "json.h"
#include "matrix_market.h"
#include "numa_counters.h"
#include "problems.h"
#include "result.h"
#include "solvers.h"
#include "threads.h"
#include "timer.h"
#ifdef PA_HAVE_MUMPS
#include "comm.h"
#endif

/* OpenBLAS's own controls, where the BLAS that CHOLMOD and MUMPS load is OpenBLAS (weak: another
 * BLAS leaves them NULL, and the document says the BLAS is unknown). */
extern void openblas_set_num_threads(int threads) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));

static const pa_param params[] = {
    {"matrix", PA_STRING, "",
     "a Matrix Market file (coordinate; real, integer or pattern; general or symmetric)", NULL, 0,
     0},
    {"problem", PA_CHOICE, "none", "a generated problem, when no matrix file is given",
     "none,laplace2d,laplace3d,elasticity3d", 0, 0},
    {"n", PA_INT, "32",
     "grid points per edge (laplace2d, laplace3d) or elements per edge (elasticity3d)", NULL, 1,
     1e6},
    {"E", PA_DOUBLE, "1", "Young's modulus of elasticity3d", NULL, 1e-300, 1e300},
    {"nu", PA_DOUBLE, "0.3", "Poisson's ratio of elasticity3d", NULL, 0, 0.49},
    {"solver", PA_CHOICE, "cholmod",
     "cholmod (supernodal, one process, threads) or mumps (multifrontal, MPI ranks)",
     "cholmod,mumps", 0, 0},
    {"ordering", PA_CHOICE, "amd",
     "fill-reducing ordering: amd (approximate minimum degree) or metis (nested dissection)",
     "amd,metis", 0, 0},
    {"threads", PA_INT, "1", "OpenMP and OpenBLAS threads (of each rank with mumps)", NULL, 1,
     4096},
    {"repeat", PA_INT, "7", "repetitions of the whole solve; one sample per phase each", NULL, 1,
     1e6},
    {"warmup", PA_INT, "1", "untimed repetitions of the whole solve before those", NULL, 0, 1e6},
    {"rhs", PA_CHOICE, "ones",
     "right-hand side: ones (b = A * ones, so x is all ones) or random (fixed pseudo-random values "
     "in [-1, 1))",
     "ones,random", 0, 0},
};

/* Vectors of order n besides the matrix: b, x, the ones of b = A ones and the residual's r. */
#define PA_VECTORS 4

/* The check every solve passes: sqrt(machine epsilon) on the relative residual. */
#define PA_RESIDUAL_LIMIT 1.5e-8

typedef struct {
    const char *name;
    pa_solve_fn *solve;
    int mpi; /* runs on the MPI ranks of the launch */
} solver_entry;

static const solver_entry solvers[] = {
    {"cholmod", pa_cholmod_solve, 0},
#ifdef PA_HAVE_MUMPS
    {"mumps", pa_mumps_solve, 1},
#endif
};

/* The process, alone or one MPI rank among several. */
typedef struct {
    int mpi, rank, size;
#ifdef PA_HAVE_MUMPS
    pa_world world;
#endif
} session;

static void session_start(session *s, int mpi, int *argc, char ***argv)
{
    *s = (session){.mpi = mpi, .rank = 0, .size = 1};
#ifdef PA_HAVE_MUMPS
    if (mpi) {
        pa_comm_start(argc, argv, &s->world);
        s->rank = s->world.rank;
        s->size = s->world.size;
        return;
    }
#endif
    (void)argc;
    (void)argv;
    pa_timer_init();
}

/* `ok` as rank 0 sees it decides for every rank: otherwise rank 0 says `error`, exit status 2. */
static void session_require(const session *s, int ok, const char *error)
{
#ifdef PA_HAVE_MUMPS
    if (s->mpi) {
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        pa_comm_require(&s->world, ok, "%s", error);
        return;
    }
#endif
    (void)s;
    if (!ok)
        pa_fail(2, "%s", error);
}

static int session_finish(session *s, int write_failed)
{
#ifdef PA_HAVE_MUMPS
    if (s->mpi)
        return pa_comm_finish(&s->world, write_failed);
#endif
    (void)s;
    return write_failed ? 2 : 0;
}

/* A failed check on rank 0: one sentence, exit status 3 (MPI_Abort under MPI). */
static noreturn void inaccurate(const session *s, double residual, int repetition)
{
    const char *format = "the solve is inaccurate: ||b - A x|| / ||b|| = %.3g exceeds %.1g "
                         "(repetition %d)";
#ifdef PA_HAVE_MUMPS
    if (s->mpi)
        pa_comm_wrong(format, residual, PA_RESIDUAL_LIMIT, repetition + 1);
#endif
    (void)s;
    pa_fail(3, format, residual, PA_RESIDUAL_LIMIT, repetition + 1);
}

/* -- the matrix -------------------------------------------------------------------------------- */

typedef struct {
    pa_sparse a;
    pa_mm_info file; /* when read from a file */
} problem;

static int read_matrix(const char *path, problem *p, char *error, size_t size)
{
    pa_mm_budget budget = {pa_memory_available(), PA_VECTORS * sizeof(double), 1};
    if (pa_mm_read(path, &budget, &p->a, &p->file, error, size))
        return -1;
    int row, col;
    double value, mirror;
    if (!pa_sparse_is_symmetric(&p->a, &row, &col, &value, &mirror)) {
        snprintf(error, size,
                 "the matrix in %s is not symmetric: entry (%d, %d) is %g but (%d, "
                 "%d) is %g; a Cholesky solve needs a symmetric positive definite matrix",
                 path, row + 1, col + 1, value, col + 1, row + 1, mirror);
        return -1;
    }
    /* A positive definite A has a_ii = e_i^T A e_i > 0: a missing or non-positive diagonal entry
     * (a file declaring 1e8 rows with one entry) is refused before the solver spends minutes. */
    for (int j = 0; j < p->a.n; j++) {
        double diagonal = pa_sparse_at(&p->a, j, j);
        if (!(diagonal > 0)) {
            snprintf(error, size,
                     "the matrix in %s is not positive definite: its diagonal entry (%d, %d) is "
                     "%g; a Cholesky solve needs a symmetric positive definite matrix",
                     path, j + 1, j + 1, diagonal);
            return -1;
        }
    }
    return 0;
}

static int build_matrix(const pa_args *args, problem *p, char *error, size_t size)
{
    const char *name = pa_arg_text(args, "problem");
    int n = (int)pa_arg_int(args, "n");
    if (*pa_arg_text(args, "matrix"))
        return read_matrix(pa_arg_text(args, "matrix"), p, error, size);
    if (!strcmp(name, "laplace2d"))
        return pa_laplace2d(n, &p->a, error, size);
    if (!strcmp(name, "laplace3d"))
        return pa_laplace3d(n, &p->a, error, size);
    return pa_elasticity3d(n, pa_arg_double(args, "E"), pa_arg_double(args, "nu"), &p->a, error,
                           size);
}

/* b = A * ones, or values in [-1, 1) from xorshift64* (Vigna 2016) with a fixed seed. */
static void right_hand_side(const pa_sparse *a, int random, double *b)
{
    if (!random) {
        double *ones = pa_alloc((size_t)a->n, sizeof(double), "the vector of ones");
        for (int i = 0; i < a->n; i++)
            ones[i] = 1.0;
        pa_sparse_multiply(a, ones, b);
        free(ones);
        return;
    }
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < a->n; i++) {
        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
        b[i] = (double)((state * 0x2545f4914f6cdd1du) >> 11) * 0x1p-52 - 1.0;
    }
}

static double norm2(const double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i] * v[i];
    return sqrt(sum);
}

/* ||b - A x||_2 / ||b||_2 with the assembled A. */
static double relative_residual(const pa_sparse *a, const double *b, const double *x)
{
    double *r = pa_alloc((size_t)a->n, sizeof(double), "the residual");
    pa_sparse_multiply(a, x, r);
    for (int i = 0; i < a->n; i++)
        r[i] = b[i] - r[i];
    double residual = norm2(r, a->n) / norm2(b, a->n);
    free(r);
    return residual;
}

static double max_error_from_ones(const double *x, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, fabs(x[i] - 1.0));
    return worst;
}

/* -- the document ------------------------------------------------------------------------------ */

typedef struct {
    int repeat;
    pa_phase_times *times;
    double *residuals, *forward_errors, *total_s;
    pa_solver_stats stats;
} outcome;

static void write_samples(pa_json *json, const outcome *o)
{
    static const struct {
        const char *name;
        size_t offset;
    } phases[] = {
        {"reorder_s", offsetof(pa_phase_times, reorder_s)},
        {"symbolic_s", offsetof(pa_phase_times, symbolic_s)},
        {"analysis_s", offsetof(pa_phase_times, analysis_s)},
        {"numeric_s", offsetof(pa_phase_times, numeric_s)},
        {"solve_s", offsetof(pa_phase_times, solve_s)},
    };
    enum {
        nphases = sizeof phases / sizeof *phases
    };
    int present[nphases];
    double *values = pa_alloc((size_t)o->repeat, sizeof(double), "values");
    pa_json_key(json, "samples");
    pa_json_begin_object(json);
    for (int k = 0; k < nphases; k++) {
        const double *first = (const double *)((const char *)&o->times[0] + phases[k].offset);
        present[k] = !isnan(*first); /* a phase this solver does not time apart */
        if (!present[k])
            continue;
        for (int r = 0; r < o->repeat; r++)
            values[r] = *(const double *)((const char *)&o->times[r] + phases[k].offset);
        pa_json_key(json, phases[k].name);
        pa_json_double_array(json, values, o->repeat);
    }
    for (int r = 0; r < o->repeat; r++)
        values[r] = o->stats.flops / o->times[r].numeric_s;
    pa_json_key(json, "factorization_flops_per_s");
    pa_json_double_array(json, values, o->repeat);
    pa_json_end_object(json);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    for (int k = 0; k < nphases; k++)
        if (present[k])
            pa_json_key_string(json, phases[k].name, "s");
    pa_json_key_string(json, "factorization_flops_per_s", "flop/s");
    pa_json_end_object(json);
    pa_json_key(json, "sample_seconds"); /* each repetition, all phases */
    pa_json_double_array(json, o->total_s, o->repeat);
    free(values);
}

static void write_matrix_source(pa_json *json, const pa_args *args, const problem *p)
{
    pa_json_key(json, "matrix");
    pa_json_begin_object(json);
    if (*pa_arg_text(args, "matrix")) {
        pa_json_key_string(json, "source", "file");
        pa_json_key_string(json, "path", pa_arg_text(args, "matrix"));
        pa_json_key_string(json, "field", p->file.field);
        pa_json_key_string(json, "symmetry", p->file.symmetry);
        pa_json_key_int(json, "file_entries", p->file.entries);
    } else {
        const char *name = pa_arg_text(args, "problem");
        pa_json_key_string(json, "source", "generated");
        pa_json_key_string(json, "problem", name);
        pa_json_key_int(json, "grid", pa_arg_int(args, "n"));
        pa_json_key_string(
            json, "discretization",
            !strcmp(name, "elasticity3d")
                ? "n^3 trilinear hexahedra of the unit cube, 3 dofs per node, 2x2x2 Gauss "
                  "quadrature, isotropic (E, nu), face x = 0 clamped"
                : "finite-difference Laplacian, (2d+1)-point stencil, Dirichlet boundary "
                  "eliminated");
    }
    pa_json_end_object(json);
}

static void write_derived(pa_json *json, const pa_args *args, const problem *p, const outcome *o,
                          const session *s)
{
    const pa_sparse *a = &p->a;
    long long lower = pa_sparse_nnz_lower(a);
    double worst = 0;
    for (int r = 0; r < o->repeat; r++)
        worst = fmax(worst, o->residuals[r]);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    write_matrix_source(json, args, p);
    pa_json_key_int(json, "n", a->n);
    pa_json_key_int(json, "nnz_A", pa_sparse_nnz(a));
    pa_json_key_string(json, "nnz_A_counts", "both triangles, diagonal once");
    pa_json_key_int(json, "nnz_A_lower", lower);
    pa_json_key_double(json, "nnz_L", o->stats.nnz_L);
    pa_json_key_string(json, "nnz_L_source", o->stats.nnz_L_source);
    pa_json_key_double(json, "factor_entries_stored", o->stats.factor_entries);
    pa_json_key_double(json, "fill_ratio", o->stats.nnz_L / (double)lower);
    pa_json_key_string(json, "fill_ratio_definition", "nnz_L / nnz_A_lower");
    pa_json_key_double(json, "flops", o->stats.flops);
    pa_json_key_string(json, "flops_source", o->stats.flops_source);
    pa_json_key_double(json, "memory_bytes", o->stats.memory_bytes);
    pa_json_key_string(json, "memory_source", o->stats.memory_source);
    pa_json_key_string(json, "solver", o->stats.version);
    pa_json_key_string(json, "ordering", o->stats.ordering);
    pa_json_key_string(json, "rhs", pa_arg_text(args, "rhs"));
    pa_json_key_double(json, "residual", worst);
    pa_json_key(json, "residuals");
    pa_json_double_array(json, o->residuals, o->repeat);
    pa_json_key_string(json, "residual_definition",
                       "||b - A x||_2 / ||b||_2 with the assembled A, every repetition; residual "
                       "is the largest");
    if (!strcmp(pa_arg_text(args, "rhs"), "ones")) {
        pa_json_key(json, "forward_errors");
        pa_json_double_array(json, o->forward_errors, o->repeat);
    }
    pa_json_key_int(json, "repetitions", o->repeat);
    pa_json_key_int(json, "processes", s->size);
    pa_json_key_int(json, "omp_threads", omp_get_max_threads());
    pa_json_key(json, "blas");
    if (openblas_get_config)
        pa_json_string(json, openblas_get_config());
    else
        pa_json_null(json);
    pa_json_key(json, "blas_threads");
    if (openblas_get_num_threads)
        pa_json_int(json, openblas_get_num_threads());
    else
        pa_json_null(json);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

/* One process: the CPUs it may run on, read back from the kernel (CHOLMOD's threads are not
 * pinned: OpenBLAS places them). */
static void write_process_placement(pa_json *json)
{
    char allowed[256] = "";
    pa_topology_load();
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!hwloc_get_cpubind(pa_topology(), set, HWLOC_CPUBIND_PROCESS))
        hwloc_bitmap_list_snprintf(allowed, sizeof allowed, set);
    hwloc_bitmap_free(set);
    pa_json_end_object(json); /* params */
    pa_json_key(json, "placement");
    pa_json_begin_object(json);
    pa_json_key_string(json, "cpus_allowed", allowed);
    pa_json_end_object(json);
    pa_timer_json(json);
}

static int write_document(const pa_args *args, const problem *p, const outcome *o, const session *s)
{
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_result_begin(&json, "app.spsolve", args);
#ifdef PA_HAVE_MUMPS
    if (s->mpi) {
        pa_json_key_int(&json, "np", s->size);
        int *ranks = pa_alloc((size_t)s->size, sizeof(int), "ranks");
        for (int r = 0; r < s->size; r++)
            ranks[r] = r;
        pa_comm_doc_context(&json, &s->world, ranks, s->size);
        free(ranks);
    } else
#endif
        write_process_placement(&json);
    write_samples(&json, o);
    write_derived(&json, args, p, o, s);
    pa_result_end(&json);
    return pa_json_finish(&json);
}

/* -- main -------------------------------------------------------------------------------------- */

static const solver_entry *find_solver(const char *name)
{
    for (size_t i = 0; i < sizeof solvers / sizeof *solvers; i++)
        if (!strcmp(solvers[i].name, name))
            return &solvers[i];
    pa_fail(2,
            "solver=%s is not available: this pa-spsolve was built without it (MUMPS needs "
            "libmumps-dev and an Open MPI build)",
            name);
}

static void set_threads(int threads)
{
    pa_openmp_start(threads);
    if (openblas_set_num_threads)
        openblas_set_num_threads(threads);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-spsolve",
                  "sparse symmetric positive definite direct solve (CHOLMOD or MUMPS)", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_check_matrix_source(&args, "laplace2d|laplace3d|elasticity3d");
    const solver_entry *solver = find_solver(pa_arg_text(&args, "solver"));
    pa_numa_counters_start(); /* before MPI_Init and OpenMP's threads, which then count with it */
    set_threads((int)pa_arg_int(&args, "threads"));
    session s;
    session_start(&s, solver->mpi, &argc, &argv);

    char error[512] = "";
    problem p = {0};
    double *b = NULL, *x = NULL;
    int ok = 1;
    if (s.rank == 0) {
        ok = !build_matrix(&args, &p, error, sizeof error);
        if (ok) {
            b = pa_alloc((size_t)p.a.n, sizeof(double), "the right-hand side");
            x = pa_alloc((size_t)p.a.n, sizeof(double), "the solution");
            right_hand_side(&p.a, !strcmp(pa_arg_text(&args, "rhs"), "random"), b);
        }
    }
    session_require(&s, ok, error);

    outcome o = {.repeat = (int)pa_arg_int(&args, "repeat")};
    o.times = pa_calloc((size_t)o.repeat, sizeof *o.times, "the phase times");
    o.residuals = pa_calloc((size_t)o.repeat, sizeof(double), "the residuals");
    o.forward_errors = pa_calloc((size_t)o.repeat, sizeof(double), "the forward errors");
    o.total_s = pa_calloc((size_t)o.repeat, sizeof(double), "the solve times");
    pa_phase_times warm;
    for (int r = -(int)pa_arg_int(&args, "warmup"); r < o.repeat; r++) {
        pa_phase_times *t = r < 0 ? &warm : &o.times[r];
        int status = solver->solve(&p.a, b, x, pa_arg_text(&args, "ordering"), t, &o.stats, error,
                                   sizeof error);
        session_require(&s, status == 0, error);
        if (r < 0)
            continue;
        o.total_s[r] = t->analysis_s + t->numeric_s + t->solve_s;
        if (s.rank == 0) {
            o.residuals[r] = relative_residual(&p.a, b, x);
            o.forward_errors[r] = max_error_from_ones(x, p.a.n);
            if (!(o.residuals[r] <= PA_RESIDUAL_LIMIT))
                inaccurate(&s, o.residuals[r], r);
        }
    }
    int write_failed = s.rank == 0 && write_document(&args, &p, &o, &s);
    return session_finish(&s, write_failed);
}
