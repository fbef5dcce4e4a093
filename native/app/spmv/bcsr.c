/* bcsr: y = A x in block compressed sparse row form, for matrices made of small dense blocks
 * (the r x r couplings of r unknowns per node of a finite element mesh: elasticity3d's 3 x 3).
 * Each stored block is one 32-bit column index and r^2 values, and x is loaded once per block
 * column instead of once per nonzero (register blocking: Im & Yelick, "Optimizing sparse matrix
 * computations for register reuse in SPARSITY", ICCS 2001; Vuduc, Demmel & Yelick, "OSKI: a
 * library of automatically tuned sparse matrix kernels", J. Phys. Conf. Ser. 16, 2005).
 *
 * The block size, chosen once over all ranks (collective): among r = 2, 3, 4, 6, those whose
 * fill ratio (values stored, explicit zeros included, over nonzeros) is at most FILL_LIMIT, the
 * one that moves the fewest bytes per product, fill (8 + 4 / r^2) per nonzero (OSKI's
 * performance / fill estimate with bytes in place of its measured register profile). None: "not
 * measurable", the matrix has no block structure (csr_simd and sell are the kernels for it).
 *
 * The grid of blocks is the matrix's: block row I holds rows r I .. r I + r - 1 (a rank whose
 * rows start inside a block row computes the rows it lacks as zeros, and its y starts `lead`
 * rows in); a block's first column is r J, or n - r for a last block column that would end past
 * column n - 1 (its leading columns stored as zeros), so that x is never read past its end.
 * Values are stored block after block, each column by column (value[(k r + j) r + i] = a(r I +
 * i, column[k] + j)); block columns increase within a block row; block rows are split between the
 * threads by stored values, each thread first-touching its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "alloc.h"
#include "spmv.h"

#define FILL_LIMIT 1.1
static const int block_sizes[] = {2, 3, 4, 6};
enum {
    NSIZES = sizeof block_sizes / sizeof *block_sizes
};

typedef struct {
    const pa_block *b;
    int r, threads, block_rows, lead; /* lead: rows of the first block row before my rows */
    double fill;                      /* values stored / nonzeros, over all ranks */
    long long blocks;                 /* over all ranks */
    int *bounds;                      /* threads + 1 */
    int *row_start;                   /* block_rows + 1: a block row's first block */
    int *column;                      /* per block: its first column */
    double *value;                    /* r^2 per block, then r^2 zeros (the 3 x 3 loads' overrun) */
    double *y;                        /* block_rows r */
} bcsr_state;

/* -- the block size ---------------------------------------------------------------------------- */

/* The r x r blocks my rows touch on the matrix's grid, counted; with row_start, each block row's
 * first block (block rows numbered from my first), and with column, each block's block column J
 * in the order met. stamp: n / r + 1 ints. */
static int list_blocks(const pa_block *b, int r, int *stamp, int *row_start, int *column)
{
    int blocks = 0, first = b->lo / r;
    for (int j = 0; j <= b->n / r; j++)
        stamp[j] = -1;
    for (int i = 0; i < b->rows; i++) { /* block rows increase with i: a stamp per block row */
        int block_row = (b->lo + i) / r - first;
        if (row_start && (i == 0 || (b->lo + i) % r == 0))
            row_start[block_row] = blocks;
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            int block_column = b->colind[k] / r;
            if (stamp[block_column] != block_row) {
                stamp[block_column] = block_row;
                if (column)
                    column[blocks] = block_column;
                blocks++;
            }
        }
    }
    return blocks;
}

static char why_not[192];

/* The block size of every rank (collective), its fill ratio and block count over all ranks;
 * or 0 with the reason in why_not. */
static int choose_block_size(const pa_block *b, double *chosen_fill, long long *chosen_blocks)
{
    long long counts[NSIZES + 1];
    int *stamp = pa_alloc((size_t)b->n / 2 + 1, sizeof(int), "the block stamps");
    for (int s = 0; s < NSIZES; s++)
        counts[s] = list_blocks(b, block_sizes[s], stamp, NULL, NULL);
    free(stamp);
    counts[NSIZES] = b->nnz;
    MPI_Allreduce(MPI_IN_PLACE, counts, NSIZES + 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long nnz = counts[NSIZES];
    int best = 0, tightest = 0;
    double best_bytes = 0.0, least_fill = 0.0;
    for (int s = 0; s < NSIZES && nnz > 0; s++) {
        int r = block_sizes[s];
        if (r > b->n)
            continue;
        double fill = (double)counts[s] * r * r / (double)nnz;
        double bytes = fill * (8.0 + 4.0 / (r * r)); /* per nonzero: values and column indices */
        if (!tightest || fill < least_fill)
            tightest = r, least_fill = fill;
        if (fill <= FILL_LIMIT && (!best || bytes < best_bytes)) {
            best = r, best_bytes = bytes;
            *chosen_fill = fill, *chosen_blocks = counts[s];
        }
    }
    if (!best && !tightest)
        snprintf(why_not, sizeof why_not,
                 "no block structure: the matrix (order %d, %lld nonzeros) has no nonzero or is "
                 "smaller than one 2 x 2 block",
                 b->n, nnz);
    else if (!best)
        snprintf(why_not, sizeof why_not,
                 "no block structure: the least fill ratio of r x r blocks (r = 2, 3, 4, 6) is "
                 "%.2f (r = %d), above %.1f",
                 least_fill, tightest, FILL_LIMIT);
    return best;
}

/* -- the blocked matrix ------------------------------------------------------------------------ */

static void bcsr_finish(void *state)
{
    bcsr_state *s = state;
    free(s->bounds), free(s->row_start), free(s->column), free(s->value), free(s->y);
    free(s);
}

static int increasing(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    return (i > j) - (i < j);
}

/* row_start, and column[] holding the block columns J (increasing in each block row). */
static void index_blocks(bcsr_state *s)
{
    const pa_block *b = s->b;
    int *stamp = pa_alloc((size_t)b->n / s->r + 1, sizeof(int), "the block stamps");
    int blocks = list_blocks(b, s->r, stamp, s->row_start, NULL);
    s->row_start[s->block_rows] = blocks;
    s->column = pa_alloc(blocks ? (size_t)blocks : 1, sizeof(int), "the block columns");
    list_blocks(b, s->r, stamp, NULL, s->column);
    free(stamp);
    for (int I = 0; I < s->block_rows; I++)
        qsort(s->column + s->row_start[I], (size_t)(s->row_start[I + 1] - s->row_start[I]),
              sizeof(int), increasing);
}

/* Block row I's values from my CSR rows, then its block columns J turned into first columns. */
static void fill_block_row(bcsr_state *s, int I)
{
    const pa_block *b = s->b;
    int r = s->r, rr = r * r, first = s->row_start[I], count = s->row_start[I + 1] - first;
    double *value = s->value + (size_t)first * rr;
    memset(value, 0, (size_t)count * rr * sizeof(double));
    for (int l = 0; l < r; l++) {
        int i = I * r + l - s->lead; /* my row */
        if (i < 0 || i >= b->rows)
            continue;
        for (int k = b->rowptr[i]; k < b->rowptr[i + 1]; k++) {
            int J = b->colind[k] / r, start = J * r < b->n - r ? J * r : b->n - r;
            const int *at = bsearch(&J, s->column + first, (size_t)count, sizeof(int), increasing);
            size_t block = (size_t)(at - (s->column + first));
            value[(block * r + (size_t)(b->colind[k] - start)) * r + l] += b->values[k];
        }
    }
    for (int k = first; k < first + count; k++)
        s->column[k] = s->column[k] * r < b->n - r ? s->column[k] * r : b->n - r;
}

static void *bcsr_setup(const pa_block *b, int threads, const char **why)
{
    double fill = 0.0;
    long long blocks = 0;
    int r = choose_block_size(b, &fill, &blocks);
    if (!r) {
        *why = why_not;
        return NULL;
    }
    bcsr_state *s = pa_calloc(1, sizeof *s, "the BCSR state");
    s->b = b;
    s->r = r;
    s->fill = fill;
    s->blocks = blocks;
    s->lead = b->lo % r;
    s->block_rows = b->rows ? (b->lo + b->rows - 1) / r - b->lo / r + 1 : 0;
    s->row_start = pa_alloc((size_t)s->block_rows + 1, sizeof(int), "the block row starts");
    index_blocks(s);
    long long stored = (long long)s->row_start[s->block_rows] * r * r;
    s->value = pa_alloc((size_t)stored + (size_t)(r * r), sizeof(double), "the block values");
    memset(s->value + stored, 0, (size_t)(r * r) * sizeof(double));
    s->y = pa_calloc((size_t)s->block_rows * r + 1, sizeof(double), "the product vector");
    s->threads = pa_threads_for(stored, threads);
    s->bounds = pa_alloc((size_t)s->threads + 1, sizeof(int), "the thread bounds");
    pa_split_by_weight(s->row_start, s->block_rows, s->threads, s->bounds);
#pragma omp parallel for schedule(static, 1) num_threads(s->threads)
    for (int t = 0; t < s->threads;
         t++) /* each thread first-touches the block rows it multiplies */
        for (int I = s->bounds[t]; I < s->bounds[t + 1]; I++)
            fill_block_row(s, I);
    return s;
}

/* -- the products ------------------------------------------------------------------------------ */

/* Block rows first .. last - 1 with r a constant where inlined (the compiler unrolls the block
 * and keeps its r^2 partial sums in registers): one partial sum per block element, so that the
 * FMA latency chain is one FMA per block, summed over the block's columns at the end. */
static inline __attribute__((always_inline)) void block_rows_of(const bcsr_state *s, int first,
                                                                int last, const int r)
{
    const double *x = s->b->x_all;
    for (int I = first; I < last; I++) {
        double sum[r * r];
        for (int l = 0; l < r * r; l++)
            sum[l] = 0.0;
        for (int k = s->row_start[I]; k < s->row_start[I + 1]; k++) {
            const double *v = s->value + (size_t)k * r * r, *xk = x + s->column[k];
            for (int j = 0; j < r; j++)
                for (int i = 0; i < r; i++)
                    sum[j * r + i] += v[j * r + i] * xk[j];
        }
        for (int i = 0; i < r; i++) {
            double total = 0.0;
            for (int j = 0; j < r; j++)
                total += sum[j * r + i];
            s->y[(size_t)I * r + i] = total;
        }
    }
}

#if defined(__AVX2__) && defined(__FMA__)
#define PA_BCSR_3X3 "AVX2 (a block column of 3 per 4-lane FMA, two blocks at once)"
/* Values prefetched this many doubles (16 blocks) ahead: in L2 (elasticity3d n=4, 6) the
 * hardware prefetchers leave the L1 misses exposed; measured 8-10 % faster (docs/guide/spmv.md). */
enum {
    PREFETCH_AHEAD = 144
};

/* 3 x 3 blocks: block column j (3 values) times x_j broadcast, one 4-lane FMA whose fourth lane
 * (the next column's first value) is discarded; two blocks per trip in six accumulators, so that
 * the latency chain is one FMA per two blocks, and the three cache lines 16 blocks ahead
 * prefetched (a trip moves 144 bytes). */
static void block_rows_3x3(const bcsr_state *s, int first, int last)
{
    const double *x = s->b->x_all;
    for (int I = first; I < last; I++) {
        __m256d sum[6];
        for (int l = 0; l < 6; l++)
            sum[l] = _mm256_setzero_pd();
        int k = s->row_start[I], end = s->row_start[I + 1];
        for (; k + 2 <= end; k += 2) {
            const double *v = s->value + (size_t)k * 9;
            for (int line = 0; line < 3; line++)
                _mm_prefetch((const char *)(v + PREFETCH_AHEAD + 8 * line), _MM_HINT_T0);
            for (int l = 0; l < 6; l++) {
                const double *xl = x + s->column[k + l / 3] + l % 3;
                sum[l] =
                    _mm256_fmadd_pd(_mm256_loadu_pd(v + 3 * l), _mm256_broadcast_sd(xl), sum[l]);
            }
        }
        if (k < end)
            for (int l = 0; l < 3; l++)
                sum[l] = _mm256_fmadd_pd(_mm256_loadu_pd(s->value + (size_t)k * 9 + 3 * l),
                                         _mm256_broadcast_sd(x + s->column[k] + l), sum[l]);
        __m256d total = _mm256_add_pd(
            _mm256_add_pd(_mm256_add_pd(sum[0], sum[3]), _mm256_add_pd(sum[1], sum[4])),
            _mm256_add_pd(sum[2], sum[5]));
        double *y = s->y + (size_t)I * 3; /* three lanes: the fourth is the next block row's */
        _mm_storeu_pd(y, _mm256_castpd256_pd128(total));
        _mm_store_sd(y + 2, _mm256_extractf128_pd(total, 1));
    }
}
#endif

static void block_rows(const void *state, int first, int last)
{
    const bcsr_state *s = state;
    switch (s->r) {
    case 2:
        block_rows_of(s, first, last, 2);
        break;
    case 3:
#ifdef PA_BCSR_3X3
        block_rows_3x3(s, first, last);
#else
        block_rows_of(s, first, last, 3);
#endif
        break;
    case 4:
        block_rows_of(s, first, last, 4);
        break;
    default:
        block_rows_of(s, first, last, 6);
    }
}

static void bcsr_once(const void *state)
{
    const bcsr_state *s = state;
    pa_run_parts(block_rows, s, s->threads, s->bounds);
}

static double bcsr_product(void *state) { return pa_timed_products(bcsr_once, state, 1); }

static double bcsr_products(void *state, long count)
{
    return pa_timed_products(bcsr_once, state, count);
}

static const double *bcsr_result(void *state)
{
    bcsr_state *s = state;
    return s->y + s->lead;
}

static void bcsr_layout(void *state, char *text, size_t size)
{
    const bcsr_state *s = state;
    snprintf(text, size, "%d x %d blocks, fill ratio %.3f (values stored / nonzeros), %lld blocks",
             s->r, s->r, s->fill, s->blocks);
}

const pa_variant pa_bcsr = {
    .name = "bcsr",
    .operation = "y = A x",
    .definition = "block CSR with r x r blocks (r = 2, 3, 4 or 6, the least bytes at a fill ratio "
                  "of at most 1.1) and `threads` OpenMP threads, block rows split between them by "
                  "stored values",
    .setup = bcsr_setup,
    .product = bcsr_product,
    .products = bcsr_products,
    .result = bcsr_result,
    .remote_operations = pa_no_remote_operations,
    .layout = bcsr_layout,
    .finish = bcsr_finish,
};
