#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels_loops.h"

#define MEMSET_BYTE 0x40 /* every double of the buffer reads 0x4040404040404040 = 32.50196... */

/* The widest vector the build targets. GCC vector types take ordinary operators (and a scalar
 * operand is broadcast), so one expression serves scalar and vector code alike. A streaming store
 * writes one vector past the caches: x86 movntpd; aarch64 stnp, the non-temporal store pair
 * (NEON's 128-bit vector as its two doubles); the closing fence orders the streamed stores before
 * the timing barrier (sfence; dmb ish). */
#if defined(__AVX512F__)
typedef __m512d pa_vec;
#define pa_stream _mm512_stream_pd
#elif defined(__AVX__)
typedef __m256d pa_vec;
#define pa_stream _mm256_stream_pd
#elif defined(__SSE2__)
typedef __m128d pa_vec;
#define pa_stream _mm_stream_pd
#elif defined(__aarch64__)
typedef float64x2_t pa_vec;
static inline void pa_stream(double *p, pa_vec v)
{
    __asm__ volatile("stnp %d1, %d2, [%0]" : : "r"(p), "w"(v[0]), "w"(v[1]) : "memory");
}
#else
#error "no vector type known for this architecture"
#endif
#ifdef __aarch64__
#define pa_stream_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST) /* dmb ish */
#else
#define pa_stream_fence _mm_sfence
#endif
#define VEC_DOUBLES (sizeof(pa_vec) / sizeof(double))

/* An element-wise kernel is written once, DST[i] = VALUE (kernels_loops.h), and compiled twice:
 * with ordinary stores, as a loop the compiler vectorizes, and with non-temporal stores, where the
 * same VALUE is evaluated on whole vectors (a, b, c and s are then vectors) and written by the
 * streaming store, in the same blocks of BLOCK doubles. */
#define ELEMENTWISE(name, DST, VALUE)                                                      \
    PA_LOOP_ELEMENTWISE(name##_normal, DST, VALUE)                                         \
    static double name##_nt(double *restrict a_, double *restrict b_, double *restrict c_, \
                            size_t n)                                                      \
    {                                                                                      \
        for (size_t j = 0; j < n; j += BLOCK) {                                            \
            pa_vec *restrict a = (pa_vec *)(a_ + j), *restrict b = (pa_vec *)(b_ + j),     \
                             *restrict c = (pa_vec *)(c_ + j);                             \
            const pa_vec s = (pa_vec){0} + SCALAR;                                         \
            (void)a, (void)b, (void)c, (void)s;                                            \
            for (size_t i = 0; i < BLOCK / VEC_DOUBLES; i++)                               \
                pa_stream((double *)&DST[i], VALUE);                                       \
        }                                                                                  \
        pa_stream_fence();                                                                 \
        return 0;                                                                          \
    }

PA_ELEMENTWISE_KERNELS(ELEMENTWISE)
PA_LOOP_READ(read_normal)

/* The hand-unrolled variants: eight vectors per iteration, a read with eight independent
 * accumulators so that the adds' latency does not bound the loads. */
#define UNROLL8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

static double read_unrolled_normal(double *restrict a_, double *restrict b, double *restrict c,
                                   size_t n)
{
    (void)b, (void)c;
    const pa_vec *a = ALIGNED(a_);
    pa_vec sum[8] = {{0}};
    for (size_t i = 0; i < n / VEC_DOUBLES; i += 8) {
#define ACCUMULATE(j) sum[j] += a[i + j];
        UNROLL8(ACCUMULATE)
    }
    pa_vec total =
        ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
    double result = 0;
    for (size_t j = 0; j < VEC_DOUBLES; j++)
        result += total[j];
    return result;
}

static double write_unrolled_normal(double *restrict a_, double *restrict b, double *restrict c,
                                    size_t n)
{
    (void)b, (void)c;
    pa_vec *a = ALIGNED(a_);
    const pa_vec s = (pa_vec){0} + SCALAR;
    for (size_t i = 0; i < n / VEC_DOUBLES; i += 8) {
#define STORE(j) a[i + j] = s;
        UNROLL8(STORE)
    }
    return 0;
}

static double rmw_unrolled_normal(double *restrict a_, double *restrict b, double *restrict c,
                                  size_t n)
{
    (void)b, (void)c;
    pa_vec *a = ALIGNED(a_);
    const pa_vec s = (pa_vec){0} + SCALAR;
    for (size_t i = 0; i < n / VEC_DOUBLES; i += 8) {
#define UPDATE(j) a[i + j] += s;
        UNROLL8(UPDATE)
    }
    return 0;
}

static double memset_normal(double *restrict a, double *restrict b, double *restrict c, size_t n)
{
    (void)b, (void)c;
    memset(a, MEMSET_BYTE, n * sizeof(double));
    return 0;
}

static double memcpy_normal(double *restrict a, double *restrict b, double *restrict c, size_t n)
{
    (void)c;
    memcpy(b, a, n * sizeof(double));
    return 0;
}

static double memset_value(void)
{
    double value;
    memset(&value, MEMSET_BYTE, sizeof value);
    return value;
}

/* The expected values of kernels.def, one function per kernel. */
#define S            SCALAR
#define MEMSET_VALUE memset_value()
#define PA_KERNEL(name, arrays, loads, stores, flops, nt, a, b, c) \
    static void name##_expect(double R, double *abc)               \
    {                                                              \
        (void)R;                                                   \
        abc[0] = a, abc[1] = b, abc[2] = c;                        \
    }
#include "kernels.def"
#undef PA_KERNEL

#define STREAMING_0(name) NULL
#define STREAMING_1(name) name##_nt
#define PA_KERNEL(name, arrays, loads, stores, flops, nt, a, b, c) \
    {#name, arrays, loads, stores, flops, nt, name##_normal, STREAMING_##nt(name), name##_expect},
static const pa_kernel kernels[] = {
#include "kernels.def"
};
#undef PA_KERNEL

const pa_kernel *pa_kernel_first(void) { return &kernels[0]; }

const pa_kernel *pa_kernel_next(const pa_kernel *kernel)
{
    return kernel + 1 < kernels + sizeof kernels / sizeof *kernels ? kernel + 1 : NULL;
}

const pa_kernel *pa_kernel_find(const char *name)
{
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
        if (strcmp(kernels[k].name, name) == 0)
            return &kernels[k];
    return NULL;
}

void pa_slice_init(pa_slice *slice)
{
    static const double initial[PA_KERNEL_MAX_ARRAYS] = {1.0, 2.0, 0.5};
    for (int k = 0; k < slice->kernel->arrays; k++)
        for (size_t i = 0; i < slice->n; i++)
            slice->array[k][i] = initial[k];
    slice->runs = 0;
}

void pa_slice_work(void *context, uint64_t repetitions)
{
    pa_slice *slice = context;
    pa_kernel_fn *fn = slice->nt        ? slice->kernel->streaming
                       : slice->variant ? slice->variant
                                        : slice->kernel->normal;
    /* arrays the kernel does not use stand in as a, never accessed: no NULL arithmetic */
    double *a = slice->array[0];
    double *b = slice->array[1] ? slice->array[1] : a, *c = slice->array[2] ? slice->array[2] : a;
    for (uint64_t r = 0; r < repetitions; r++)
        *(volatile double *)&slice->result = fn(a, b, c, slice->n); /* observable: kept */
    slice->runs += repetitions;
}

static int close_enough(double value, double expected)
{
    return fabs(value - expected) <= 1e-13 * fabs(expected);
}

int pa_slice_verify(const pa_slice *slice, char *why, size_t size)
{
    const pa_kernel *k = slice->kernel;
    double expected[PA_KERNEL_MAX_ARRAYS];
    k->expect((double)slice->runs, expected);
    for (int a = 0; a < k->arrays; a++)
        for (size_t i = 0; i < slice->n; i++)
            if (!close_enough(slice->array[a][i], expected[a])) {
                snprintf(why, size,
                         "%s failed its check: element %zu of array %c is %.17g after %llu runs, "
                         "expected %.17g",
                         k->name, i, 'a' + a, slice->array[a][i], (unsigned long long)slice->runs,
                         expected[a]);
                return -1;
            }
    double sum = (double)slice->n * expected[0];
    if (k->stores == 0 && !close_enough(slice->result, sum)) {
        snprintf(why, size, "%s failed its check: the sum is %.17g, expected %.17g", k->name,
                 slice->result, sum);
        return -1;
    }
    return 0;
}

void pa_kernel_derived_json(pa_json *json, const pa_kernel *kernel, size_t elements,
                            uint64_t iterations, int verified)
{
    pa_json_key_int(json, "bytes_per_iteration", pa_kernel_bytes_per_iteration(kernel));
    pa_json_key_int(json, "flops_per_iteration", kernel->flops);
    pa_json_key_bool(json, "write_allocate_counted", 0);
    pa_json_key_int(json, "elements", (long long)elements);
    pa_json_key_int(json, "bytes_used",
                    (long long)(elements * sizeof(double) * (size_t)kernel->arrays));
    pa_json_key_int(json, "iterations_per_sample", (long long)iterations);
    pa_json_key_bool(json, "verified", verified);
}
