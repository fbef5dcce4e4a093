/* Faster node-level kernels of y = A x, optional (kernels=), each checked like every variant
 * against the plain CSR product computed on rank 0 (the reference: the same row sums in the same
 * column order as csr's). What the best SpMV codes do (Williams et al., "Optimization of sparse
 * matrix-vector multiplication on emerging multicore platforms", SC07; Kreutzer et al., "A unified
 * sparse matrix data format for efficient general sparse matrix-vector multiplication on modern
 * processors with wide SIMD units", SIAM J. Sci. Comput. 36(5), 2014):
 *
 *   csr_unroll  rows split between the threads by nonzeros (not by rows), each row summed with
 *               eight independent accumulators (the FMA latency chain of one sum cut in eight)
 *   csr_simd    the same split, each row summed 8 (AVX-512) or 4 (AVX2) products per FMA
 *               instruction; x's lanes come under AVX-512 from vgatherdpd zmm or from scalar
 *               loads, x_loads= choosing, by default the gather on Intel and the loads elsewhere
 *               (on Zen 4 the gather measured 1.3-2.5x slower than 8 loads, on Sapphire Rapids
 *               1.2-1.4x faster: docs/guide/spmv.md), and from
 *               vgatherdpd ymm under AVX2 alone; "not measurable" in a build without either
 *               (aarch64: csr_unroll is the portable kernel)
 *   sell        SELL-C-sigma: rows sorted by length within windows of sigma rows, chunks of C rows
 *               stored column by column (padded to the chunk's longest row), C lanes summed at
 *               once (AVX-512 as csr_simd, else portable C the compiler may vectorize); chunks
 *               split between the threads by stored elements, each thread first-touching its own
 *
 * All three use at most one thread per 16,384 nonzeros (node_kernels.c), and no parallel region for
 * one; 32-bit column indices throughout (pa_block's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "alloc.h"
#include "spmv.h"

enum {
    SELL_C = 8,              /* rows per chunk: one AVX-512 vector of doubles */
    SELL_SIGMA = 32 * SELL_C /* the sorting window, in rows */
};

/* -- CSR, split by nonzeros ------------------------------------------------------------------- */

typedef void (*row_range)(const pa_block *b, int first, int last, double *y);

typedef struct {
    const pa_block *b;
    int threads;
    int *bounds; /* threads + 1 */
    double *y;
    row_range rows;
    /* sell */
    int chunks, *chunk_start, *chunk_width, *row_of; /* row_of: -1 for padding */
    int *column;
    double *value;
} fast_state;

static void unrolled_rows(const pa_block *b, int first, int last, double *y)
{
    const int *rowptr = b->rowptr, *colind = b->colind;
    const double *values = b->values, *x = b->x_all;
    for (int i = first; i < last; i++) {
        double sum[8] = {0};
        int k = rowptr[i], end = rowptr[i + 1];
        for (; k + 8 <= end; k += 8)
            for (int l = 0; l < 8; l++)
                sum[l] += values[k + l] * x[colind[k + l]];
        double tail = 0.0;
        for (; k < end; k++)
            tail += values[k] * x[colind[k]];
        y[i] = tail +
               (((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7])));
    }
}

/* How the AVX-512 kernels load x's 8 lanes (pa_spmv_x_loads): 1 vgatherdpd zmm, 0 scalar loads. */
static int gather_x;

void pa_spmv_x_loads(const char *choice)
{
#if defined(__AVX512F__)
    gather_x = strcmp(choice, "auto") ? !strcmp(choice, "gather") : __builtin_cpu_is("intel");
#else
    (void)choice;
#endif
}

/* What csr_simd and sell load x's lanes with, for the document. */
static void x_loads_layout(void *state, char *text, size_t size)
{
    (void)state;
#if defined(__AVX512F__)
    snprintf(text, size, "x's 8 lanes by %s", gather_x ? "one vgatherdpd zmm" : "8 scalar loads");
#elif defined(__AVX2__) && defined(__FMA__)
    snprintf(text, size, "x's 4 lanes by one vgatherdpd ymm");
#else
    snprintf(text, size, "portable C");
#endif
}

#if defined(__AVX512F__)
#define PA_SIMD_ROWS "AVX-512 (8 products per FMA, x by vgatherdpd or scalar loads)"
/* x[column[0..7]] in one vector: by vgatherdpd zmm or by 8 scalar loads (fast.c's header).
 * `gather` is loop-invariant: the compiler unswitches the loops that call this. */
static inline __m512d x_lanes(const double *x, const int *column, int gather)
{
    if (gather)
        return _mm512_i32gather_pd(_mm256_loadu_si256((const __m256i *)column), x, 8);
    return _mm512_set_pd(x[column[7]], x[column[6]], x[column[5]], x[column[4]], x[column[3]],
                         x[column[2]], x[column[1]], x[column[0]]);
}

static void simd_rows(const pa_block *b, int first, int last, double *y)
{
    const int *rowptr = b->rowptr, *colind = b->colind;
    const double *values = b->values, *x = b->x_all;
    const int gather = gather_x;
    for (int i = first; i < last; i++) {
        __m512d sum = _mm512_setzero_pd();
        int k = rowptr[i], end = rowptr[i + 1];
        for (; k + 8 <= end; k += 8)
            sum = _mm512_fmadd_pd(_mm512_loadu_pd(values + k), x_lanes(x, colind + k, gather), sum);
        double tail = 0.0;
        for (; k < end; k++)
            tail += values[k] * x[colind[k]];
        y[i] = tail + _mm512_reduce_add_pd(sum);
    }
}
#elif defined(__AVX2__) && defined(__FMA__)
#define PA_SIMD_ROWS "AVX2 (4 products per gather and FMA, two accumulators)"
static void simd_rows(const pa_block *b, int first, int last, double *y)
{
    const int *rowptr = b->rowptr, *colind = b->colind;
    const double *values = b->values, *x = b->x_all;
    for (int i = first; i < last; i++) {
        __m256d even = _mm256_setzero_pd(), odd = _mm256_setzero_pd();
        int k = rowptr[i], end = rowptr[i + 1];
        for (; k + 8 <= end; k += 8) {
            __m128i low = _mm_loadu_si128((const __m128i *)(colind + k));
            __m128i high = _mm_loadu_si128((const __m128i *)(colind + k + 4));
            even =
                _mm256_fmadd_pd(_mm256_loadu_pd(values + k), _mm256_i32gather_pd(x, low, 8), even);
            odd = _mm256_fmadd_pd(_mm256_loadu_pd(values + k + 4), _mm256_i32gather_pd(x, high, 8),
                                  odd);
        }
        __m256d sum = _mm256_add_pd(even, odd);
        __m128d half = _mm_add_pd(_mm256_castpd256_pd128(sum), _mm256_extractf128_pd(sum, 1));
        double total = _mm_cvtsd_f64(_mm_add_sd(half, _mm_unpackhi_pd(half, half)));
        for (; k < end; k++)
            total += values[k] * x[colind[k]];
        y[i] = total;
    }
}
#endif

static fast_state *fast_setup(const pa_block *b, int threads)
{
    fast_state *s = pa_calloc(1, sizeof *s, "the kernel state");
    s->b = b;
    s->threads = threads;
    s->bounds = pa_alloc((size_t)threads + 1, sizeof(int), "the thread bounds");
    s->y = pa_calloc(b->rows ? (size_t)b->rows : 1, sizeof(double), "the product vector");
    return s;
}

static void *split_setup(const pa_block *b, int threads, row_range rows)
{
    fast_state *s = fast_setup(b, threads);
    s->rows = rows;
    s->threads = pa_threads_for(b->nnz, threads);
    pa_split_by_weight(b->rowptr, b->rows, s->threads, s->bounds);
    return s;
}

static void *unroll_setup(const pa_block *b, int threads, const char **why)
{
    (void)why;
    return split_setup(b, threads, unrolled_rows);
}

static void *simd_setup(const pa_block *b, int threads, const char **why)
{
#ifdef PA_SIMD_ROWS
    (void)why;
    return split_setup(b, threads, simd_rows);
#else
    (void)b, (void)threads;
    *why = "built without AVX2 or AVX-512 (x86 SIMD): csr_unroll is the portable kernel";
    return NULL;
#endif
}

static void split_part(const void *state, int first, int last)
{
    const fast_state *s = state;
    s->rows(s->b, first, last, s->y);
}

static void split_once(const void *state)
{
    const fast_state *s = state;
    pa_run_parts(split_part, s, s->threads, s->bounds);
}

static double split_product(void *state) { return pa_timed_products(split_once, state, 1); }

static double split_products(void *state, long count)
{
    return pa_timed_products(split_once, state, count);
}

static void fast_finish(void *state);

/* -- SELL-C-sigma ----------------------------------------------------------------------------- */

static const pa_block *sort_block; /* qsort has no context argument */

static int longer_row_first(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int li = sort_block->rowptr[i + 1] - sort_block->rowptr[i];
    int lj = sort_block->rowptr[j + 1] - sort_block->rowptr[j];
    return li != lj ? (lj > li) - (lj < li) : (i > j) - (i < j); /* stable: row order on ties */
}

static void *sell_setup(const pa_block *b, int threads, const char **why)
{
    (void)why;
    fast_state *s = fast_setup(b, threads);
    int chunks = (b->rows + SELL_C - 1) / SELL_C, padded = chunks * SELL_C;
    s->chunks = chunks;
    s->row_of = pa_alloc(padded ? (size_t)padded : 1, sizeof(int), "the SELL row order");
    for (int i = 0; i < padded; i++)
        s->row_of[i] = i < b->rows ? i : -1;
    sort_block = b;
    for (int w = 0; w < b->rows; w += SELL_SIGMA) {
        int count = b->rows - w < SELL_SIGMA ? b->rows - w : SELL_SIGMA;
        qsort(s->row_of + w, (size_t)count, sizeof(int), longer_row_first);
    }
    s->chunk_start = pa_alloc((size_t)chunks + 1, sizeof(int), "the SELL chunk starts");
    s->chunk_width = pa_alloc(chunks ? (size_t)chunks : 1, sizeof(int), "the SELL widths");
    long long stored = 0;
    for (int c = 0; c < chunks; c++) {
        int width = 0;
        for (int l = 0; l < SELL_C; l++) {
            int i = s->row_of[c * SELL_C + l];
            if (i >= 0 && b->rowptr[i + 1] - b->rowptr[i] > width)
                width = b->rowptr[i + 1] - b->rowptr[i];
        }
        s->chunk_width[c] = width;
        s->chunk_start[c] = (int)stored;
        stored += (long long)width * SELL_C;
        if (stored > 0x7fffffff) {
            *why = "SELL-C-sigma would store more than 2^31 - 1 elements (32-bit offsets)";
            fast_finish(s);
            return NULL;
        }
    }
    s->chunk_start[chunks] = (int)stored;
    s->column = pa_alloc(stored ? (size_t)stored : 1, sizeof(int), "the SELL columns");
    s->value = pa_alloc(stored ? (size_t)stored : 1, sizeof(double), "the SELL values");
    s->threads = pa_threads_for(stored, threads);
    pa_split_by_weight(s->chunk_start, chunks, s->threads, s->bounds);
    /* each thread fills (first-touches) the chunks it multiplies; padding: value 0 at the row's
     * last column (or column 0), a load of x the row makes anyway */
#pragma omp parallel for schedule(static, 1) num_threads(s->threads)
    for (int t = 0; t < s->threads; t++)
        for (int c = s->bounds[t]; c < s->bounds[t + 1]; c++)
            for (int l = 0; l < SELL_C; l++) {
                int i = s->row_of[c * SELL_C + l];
                int k = i >= 0 ? b->rowptr[i] : 0, end = i >= 0 ? b->rowptr[i + 1] : 0;
                int pad = end > k ? b->colind[end - 1] : 0;
                for (int j = 0; j < s->chunk_width[c]; j++) {
                    size_t at = (size_t)s->chunk_start[c] + (size_t)j * SELL_C + (size_t)l;
                    s->column[at] = k + j < end ? b->colind[k + j] : pad;
                    s->value[at] = k + j < end ? b->values[k + j] : 0.0;
                }
            }
    return s;
}

static void sell_chunks(const void *state, int first, int last)
{
    const fast_state *s = state;
    const double *x = s->b->x_all;
#if defined(__AVX512F__)
    const int gather = gather_x;
#endif
    for (int c = first; c < last; c++) {
        const int *column = s->column + s->chunk_start[c];
        const double *value = s->value + s->chunk_start[c];
        double sum[SELL_C];
#if defined(__AVX512F__)
        __m512d lanes = _mm512_setzero_pd();
        for (int j = 0; j < s->chunk_width[c]; j++)
            lanes = _mm512_fmadd_pd(_mm512_loadu_pd(value + j * SELL_C),
                                    x_lanes(x, column + j * SELL_C, gather), lanes);
        _mm512_storeu_pd(sum, lanes);
#else
        for (int l = 0; l < SELL_C; l++)
            sum[l] = 0.0;
        for (int j = 0; j < s->chunk_width[c]; j++)
            for (int l = 0; l < SELL_C; l++)
                sum[l] += value[j * SELL_C + l] * x[column[j * SELL_C + l]];
#endif
        for (int l = 0; l < SELL_C; l++) {
            int i = s->row_of[c * SELL_C + l];
            if (i >= 0)
                s->y[i] = sum[l];
        }
    }
}

static void sell_once(const void *state)
{
    const fast_state *s = state;
    pa_run_parts(sell_chunks, s, s->threads, s->bounds);
}

static double sell_product(void *state) { return pa_timed_products(sell_once, state, 1); }

static double sell_products(void *state, long count)
{
    return pa_timed_products(sell_once, state, count);
}

/* -- common ----------------------------------------------------------------------------------- */

static const double *fast_result(void *state) { return ((fast_state *)state)->y; }

static void fast_finish(void *state)
{
    fast_state *s = state;
    free(s->bounds), free(s->y), free(s->chunk_start), free(s->chunk_width), free(s->row_of);
    free(s->column), free(s->value);
    free(s);
}

const pa_variant pa_csr_unroll = {
    .name = "csr_unroll",
    .operation = "y = A x",
    .definition = "CSR with `threads` OpenMP threads, rows split between them by nonzeros, each "
                  "row summed with 8 accumulators",
    .setup = unroll_setup,
    .product = split_product,
    .products = split_products,
    .result = fast_result,
    .remote_operations = pa_no_remote_operations,
    .finish = fast_finish,
};

const pa_variant pa_csr_simd = {
    .name = "csr_simd",
    .operation = "y = A x",
    .definition = "CSR with `threads` OpenMP threads, rows split between them by nonzeros, each "
                  "row summed 8 (AVX-512) or 4 (AVX2) products per FMA instruction",
    .setup = simd_setup,
    .product = split_product,
    .products = split_products,
    .result = fast_result,
    .remote_operations = pa_no_remote_operations,
    .layout = x_loads_layout,
    .finish = fast_finish,
};

const pa_variant pa_sell = {
    .name = "sell",
    .operation = "y = A x",
    .definition = "SELL-C-sigma (C = 8 rows per chunk, sigma = 256 rows per sorting window) with "
                  "`threads` OpenMP threads, chunks split between them by stored elements",
    .setup = sell_setup,
    .product = sell_product,
    .products = sell_products,
    .result = fast_result,
    .remote_operations = pa_no_remote_operations,
    .layout = x_loads_layout,
    .finish = fast_finish,
};
