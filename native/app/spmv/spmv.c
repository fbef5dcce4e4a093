/* pa-spmv: irregular sparse matrix-vector products with remote access, the application proxy
 * app.spmv (spmv.h says what the variants are; document.c what the models are). Rank 0 reads or
 * generates the matrix, optionally permutes it at random (P A P^T, so that access becomes
 * irregular), computes the reference products and scatters the row blocks; every variant is
 * timed, its result checked against the reference, and rank 0 writes one perfatlas.result/1
 * document. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "outcome.h"
#include "problems.h"
#include "threads.h"
#include "timer.h"

static const pa_param params[] = {
    {"matrix", PA_STRING, "",
     "a Matrix Market file (coordinate; real, integer or pattern; general or symmetric, which is "
     "expanded to both triangles)",
     NULL, 0, 0},
    {"problem", PA_CHOICE, "none",
     "a generated mesh, when no matrix file is given: 5-point (laplace2d) or 7-point (laplace3d) "
     "Laplacian, or the Q1 linear elasticity stiffness matrix of app.spsolve (elasticity3d, "
     "E = 1, nu = 0.3)",
     "none,laplace2d,laplace3d,elasticity3d", 0, 0},
    {"n", PA_INT, "64",
     "grid points per edge (laplace2d, laplace3d) or elements per edge (elasticity3d) of the "
     "generated mesh",
     NULL, 1, 1e6},
    {"permute", PA_CHOICE, "none",
     "random: renumber rows and columns by one random permutation (P A P^T), making access "
     "irregular",
     "none,random", 0, 0},
    {"seed", PA_INT, "1", "seed of the random permutation", NULL, 0, 1e18},
    {"variants", PA_STRING, "all",
     "remote variants, comma separated: read_element, read_replicate, read_shared, "
     "write_element, write_combine, all, or none (the local baselines and csr always run)",
     NULL, 0, 0},
    {"kernels", PA_STRING, "none",
     "faster node-level kernels to run after csr, comma separated: csr_unroll, csr_simd, sell, "
     "bcsr, all, or none",
     NULL, 0, 0},
    {"threads", PA_INT, "1", "OpenMP threads of the node-level kernels (each rank)", NULL, 1, 4096},
    {"x_loads", PA_CHOICE, "auto",
     "how the AVX-512 csr_simd and sell load x's 8 lanes: gather (one vgatherdpd zmm), scalar "
     "(8 loads), auto (the gather on Intel, the loads elsewhere: the faster on each, measured)",
     "auto,gather,scalar", 0, 0},
    {"bandwidth", PA_DOUBLE, "0",
     "memory bandwidth in byte/s for the roofline (0: not known; perfatlas fills it from a "
     "stored mem.bandwidth triad result)",
     NULL, 0, 1e15},
    {"vectors", PA_CHOICE, "no", "yes: the document carries x and every variant's y", "no,yes", 0,
     0},
    PA_COMM_TIMING_PARAMS("11", "10ms", "2s"),
};

/* Each product must match the reference to this relative error (outcome.h, pa_reference). */
#define PA_SPMV_ERROR_LIMIT 1e-12

static const pa_variant *const remote_variants[] = {
    &pa_read_element, &pa_read_replicate, &pa_read_shared, &pa_write_element, &pa_write_combine,
};
/* The optional node-level kernels (fast.c, bcsr.c), after csr. */
static const pa_variant *const fast_kernels[] = {&pa_csr_unroll, &pa_csr_simd, &pa_sell, &pa_bcsr};
enum {
    NREMOTE = sizeof remote_variants / sizeof *remote_variants,
    NKERNELS = sizeof fast_kernels / sizeof *fast_kernels
};

/* The variants of `table` named in `text` (comma separated; all: every one; none: no one), in
 * table order; an unknown name is one sentence naming `param`'s choices, and exit status 2. */
static int chosen_variants(const char *param, const char *text, const pa_variant *const *table,
                           int count, const pa_variant **chosen)
{
    int wanted[NREMOTE > NKERNELS ? NREMOTE : NKERNELS] = {0};
    if (!strcmp(text, "none"))
        return 0;
    if (!strcmp(text, "all")) {
        for (int v = 0; v < count; v++)
            wanted[v] = 1;
    } else {
        char *copy = strcpy(pa_alloc(strlen(text) + 1, 1, "the variant list"), text), *save = NULL;
        for (char *word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
            int found = -1;
            for (int v = 0; v < count; v++)
                if (!strcmp(word, table[v]->name))
                    found = v;
            if (found < 0) {
                char names[256] = "";
                for (int v = 0; v < count; v++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             v ? ", " : "", table[v]->name);
                pa_fail(2, "%s '%s' is not one of %s (or all, or none)", param, word, names);
            }
            wanted[found] = 1;
        }
        free(copy);
    }
    int chosen_count = 0;
    for (int v = 0; v < count; v++)
        if (wanted[v])
            chosen[chosen_count++] = table[v];
    if (chosen_count == 0)
        pa_fail(2, "%ss='%s' names no %s", param, text, param);
    return chosen_count;
}

/* -- the matrix (rank 0) ---------------------------------------------------------------------- */

/* B = P A P^T with row and column i renumbered pi(i): a Fisher-Yates shuffle drawn from
 * xorshift64* (Vigna 2016). */
static int permute(pa_sparse *a, uint64_t seed, int **permutation, char *error, size_t size)
{
    int *pi = pa_alloc((size_t)a->n, sizeof(int), "the permutation");
    uint64_t state = seed * 0x9e3779b97f4a7c15u + 0x2545f4914f6cdd1du;
    for (int i = 0; i < a->n; i++)
        pi[i] = i;
    for (int i = a->n - 1; i > 0; i--) {
        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
        int j = (int)(((state * 0x2545f4914f6cdd1du) >> 11) % (uint64_t)(i + 1));
        int t = pi[i];
        pi[i] = pi[j];
        pi[j] = t;
    }
    pa_triplets t = {0};
    int status = 0;
    for (int j = 0; j < a->n && !status; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1] && !status; p++)
            status = pa_triplets_add(&t, pi[a->rowind[p]], pi[j], a->values[p], error, size);
    pa_sparse b = {0};
    if (!status)
        pa_sparse_from_triplets(&t, a->n, &b);
    pa_triplets_free(&t);
    *permutation = pi;
    if (!status) {
        pa_sparse_free(a);
        *a = b;
    }
    return status;
}

static int build_matrix(const pa_args *args, pa_sparse *a, pa_matrix_source *source, char *error,
                        size_t size)
{
    const char *path = pa_arg_text(args, "matrix"), *problem = pa_arg_text(args, "problem");
    int n = (int)pa_arg_int(args, "n"), status;
    source->permutation = pa_arg_text(args, "permute");
    source->seed = pa_arg_int(args, "seed");
    if (*path) {
        source->path = path;
        /* x, x_all, y and the four reference vectors (doubles), with slack for the partition */
        pa_mm_budget budget = {pa_memory_available(), 10 * sizeof(double), 0};
        status = pa_mm_read(path, &budget, a, &source->file, error, size);
    } else {
        source->problem = problem;
        source->grid = n;
        status = !strcmp(problem, "laplace2d")      ? pa_laplace2d(n, a, error, size)
                 : !strcmp(problem, "elasticity3d") ? pa_elasticity3d(n, 1.0, 0.3, a, error, size)
                                                    : pa_laplace3d(n, a, error, size);
    }
    if (!status && !strcmp(source->permutation, "random"))
        status = permute(a, (uint64_t)source->seed, &source->pi, error, size);
    return status;
}

/* A x and A^T x, and their error scales, from the CSC matrix (independent of the CSR code). */
static int reference_products(const pa_sparse *a, pa_reference *r)
{
    size_t n = (size_t)a->n;
    r->Ax = pa_calloc(n, sizeof(double), "the reference product");
    r->abs_Ax = pa_calloc(n, sizeof(double), "abs_Ax");
    r->ATx = pa_calloc(n, sizeof(double), "the reference transposed product");
    r->abs_ATx = pa_calloc(n, sizeof(double), "abs_ATx");
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            int i = a->rowind[p];
            double v = a->values[p];
            r->Ax[i] += v * pa_x_value(j);
            r->abs_Ax[i] += fabs(v) * pa_x_value(j); /* x > 0 */
            r->ATx[j] += v * pa_x_value(i);
            r->abs_ATx[j] += fabs(v) * pa_x_value(i);
        }
    return 0;
}

/* -- the partition as rank 0 sees it ---------------------------------------------------------- */

static void gather_count(long long mine, long long *all)
{
    MPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
}

static void describe_partition(const pa_block *b, pa_partition *p)
{
    /* distinct columns my rows touch, local or remote: the x traffic of the roofline's minimum */
    char *seen = pa_calloc((size_t)b->n, 1, "seen");
    long long touched = 0;
    for (long long k = 0; k < b->nnz; k++)
        if (!seen[b->colind[k]]) {
            seen[b->colind[k]] = 1;
            touched++;
        }
    free(seen);
    memset(p, 0, sizeof *p);
    p->np = b->np;
    p->n = b->n;
    p->first_row = b->first_row;
    if (b->rank == 0) {
        size_t np = (size_t)b->np;
        p->rows = pa_alloc(np, sizeof(long long), "rows");
        p->nnz_of = pa_alloc(np, sizeof(long long), "nnz_of");
        p->remote = pa_alloc(np, sizeof(long long), "remote");
        p->distinct = pa_alloc(np, sizeof(long long), "distinct");
        p->touched = pa_alloc(np, sizeof(long long), "touched");
    }
    gather_count(b->rows, p->rows);
    gather_count(b->nnz, p->nnz_of);
    gather_count(b->remote_accesses, p->remote);
    gather_count(b->nghosts, p->distinct);
    gather_count(touched, p->touched);
    for (int r = 0; b->rank == 0 && r < b->np; r++)
        p->nnz += p->nnz_of[r];
}

/* -- main ------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-spmv",
                  "irregular sparse matrix-vector products with remote access (MPI one-sided)",
                  params, sizeof params / sizeof *params, argc, argv);
    pa_check_matrix_source(&args, "laplace2d|laplace3d|elasticity3d");
    const pa_variant *chosen[NKERNELS + NREMOTE];
    int nkernels =
        chosen_variants("kernel", pa_arg_text(&args, "kernels"), fast_kernels, NKERNELS, chosen);
    int nchosen = nkernels + chosen_variants("variant", pa_arg_text(&args, "variants"),
                                             remote_variants, NREMOTE, chosen + nkernels);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    pa_openmp_start((int)pa_arg_int(&args, "threads")); /* before the matrix is built */
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    char error[512] = "";
    pa_sparse a = {0};
    pa_matrix_source source = {0};
    pa_reference reference = {0};
    int ok = 1, n = 0;
    if (world.rank == 0) {
        ok = !build_matrix(&args, &a, &source, error, sizeof error);
        if (ok && reference_products(&a, &reference)) {
            ok = 0;
            snprintf(error, sizeof error, "out of memory for vectors of order %d", a.n);
        }
        n = a.n;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pa_comm_require(&world, ok, "%s", error);
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pa_comm_require(&world, n >= world.size,
                    "np=%d exceeds the %d rows of the matrix: every rank needs a block of at "
                    "least one row; launch with np of %d or fewer",
                    world.size, n, n);

    pa_block block;
    ok = !pa_block_scatter(&a, n, &block, error, sizeof error);
    pa_comm_require(&world, ok, "%s", error);
    ok = !pa_block_index(&block);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    pa_comm_require(&world, ok, "out of memory for the column index of the rows");
    pa_sparse_free(&a);
    pa_partition partition;
    describe_partition(&block, &partition);

    pa_spmv_x_loads(pa_arg_text(&args, "x_loads"));
    int threads = (int)pa_arg_int(&args, "threads");
    int keep_y = !strcmp(pa_arg_text(&args, "vectors"), "yes");
    const pa_variant *all[3 + NKERNELS + NREMOTE] = {&pa_local_gather, &pa_local_scatter,
                                                     &pa_csr_threads};
    for (int v = 0; v < nchosen; v++)
        all[3 + v] = chosen[v];
    int nvariants = 3 + nchosen;
    pa_outcome outcomes[3 + NKERNELS + NREMOTE], get, accumulate;
    for (int v = 0; v < nvariants; v++)
        pa_measure_variant(all[v], &block, threads, &timing, &reference, PA_SPMV_ERROR_LIMIT,
                           keep_y, &outcomes[v]);
    pa_measure_latency(&block, &timing, 0, &get);
    pa_measure_latency(&block, &timing, 1, &accumulate);

    int write_failed = 0;
    if (world.rank == 0) {
        pa_spmv_result result = {
            .args = &args,
            .world = &world,
            .timing = &timing,
            .source = &source,
            .partition = &partition,
            .variants = outcomes,
            .nvariants = nvariants,
            .get = &get,
            .accumulate = &accumulate,
            .x = keep_y ? block.x_all : NULL,
            .threads = threads,
            .bandwidth_Bps = pa_arg_double(&args, "bandwidth"),
            .error_limit = PA_SPMV_ERROR_LIMIT,
        };
        write_failed = pa_spmv_write_document(&result);
    }
    return pa_comm_finish(&world, write_failed);
}
