/* The x86-64 kernels of pa-cpu-peakflops: SSE (multiply + add, as likwid's peakflops_sse), AVX2
 * and AVX-512 (FMA, as likwid's peakflops_avx_fma and peakflops_avx512_fma), double and single.
 * Each is compiled for its own instruction set (target attribute), so one binary holds them all
 * whatever the build's -march, and the CPU is asked at run time (__builtin_cpu_supports) before
 * one runs. The file is compiled with -ffp-contract=off, so that GCC never fuses the SSE
 * kernels' multiply and add into an FMA. On other architectures it holds no kernel. */
#include "flops_kernels.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

/* flags[j] |= bit j of a movemask, for the lanes of one vector */
static inline void store_bits(unsigned char *flags, unsigned bits, int lanes)
{
    for (int j = 0; j < lanes; j++)
        flags[j] |= (unsigned char)((bits >> j) & 1u);
}

#define PA_K_NAME                 sse_double
#define PA_K_TARGET               __attribute__((target("sse2")))
#define PA_K_VEC                  __m128d
#define PA_K_T                    double
#define PA_K_LOAD(p)              _mm_loadu_pd(p)
#define PA_K_STEP(x, a, b)        _mm_add_pd(_mm_mul_pd(x, a), b)
#define PA_K_STORE(p, x)          _mm_storeu_pd(p, x)
#define PA_K_MASK                 __m128d
#define PA_K_MASK_ZERO            _mm_setzero_pd()
#define PA_K_MASK_NEQ(m, x, e)    _mm_or_pd(m, _mm_cmpneq_pd(x, e))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)_mm_movemask_pd(m), 2)
#include "flops_template.h"

#define PA_K_NAME                 sse_single
#define PA_K_TARGET               __attribute__((target("sse2")))
#define PA_K_VEC                  __m128
#define PA_K_T                    float
#define PA_K_LOAD(p)              _mm_loadu_ps(p)
#define PA_K_STEP(x, a, b)        _mm_add_ps(_mm_mul_ps(x, a), b)
#define PA_K_STORE(p, x)          _mm_storeu_ps(p, x)
#define PA_K_MASK                 __m128
#define PA_K_MASK_ZERO            _mm_setzero_ps()
#define PA_K_MASK_NEQ(m, x, e)    _mm_or_ps(m, _mm_cmpneq_ps(x, e))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)_mm_movemask_ps(m), 4)
#include "flops_template.h"

#define PA_K_NAME                 avx2_double
#define PA_K_TARGET               __attribute__((target("avx2,fma")))
#define PA_K_VEC                  __m256d
#define PA_K_T                    double
#define PA_K_LOAD(p)              _mm256_loadu_pd(p)
#define PA_K_STEP(x, a, b)        _mm256_fmadd_pd(x, a, b)
#define PA_K_STORE(p, x)          _mm256_storeu_pd(p, x)
#define PA_K_MASK                 __m256d
#define PA_K_MASK_ZERO            _mm256_setzero_pd()
#define PA_K_MASK_NEQ(m, x, e)    _mm256_or_pd(m, _mm256_cmp_pd(x, e, _CMP_NEQ_UQ))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)_mm256_movemask_pd(m), 4)
#include "flops_template.h"

#define PA_K_NAME                 avx2_single
#define PA_K_TARGET               __attribute__((target("avx2,fma")))
#define PA_K_VEC                  __m256
#define PA_K_T                    float
#define PA_K_LOAD(p)              _mm256_loadu_ps(p)
#define PA_K_STEP(x, a, b)        _mm256_fmadd_ps(x, a, b)
#define PA_K_STORE(p, x)          _mm256_storeu_ps(p, x)
#define PA_K_MASK                 __m256
#define PA_K_MASK_ZERO            _mm256_setzero_ps()
#define PA_K_MASK_NEQ(m, x, e)    _mm256_or_ps(m, _mm256_cmp_ps(x, e, _CMP_NEQ_UQ))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)_mm256_movemask_ps(m), 8)
#include "flops_template.h"

#define PA_K_NAME                 avx512_double
#define PA_K_TARGET               __attribute__((target("avx512f")))
#define PA_K_VEC                  __m512d
#define PA_K_T                    double
#define PA_K_LOAD(p)              _mm512_loadu_pd(p)
#define PA_K_STEP(x, a, b)        _mm512_fmadd_pd(x, a, b)
#define PA_K_STORE(p, x)          _mm512_storeu_pd(p, x)
#define PA_K_MASK                 __mmask8
#define PA_K_MASK_ZERO            0
#define PA_K_MASK_NEQ(m, x, e)    (__mmask8)((m) | _mm512_cmp_pd_mask(x, e, _CMP_NEQ_UQ))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)(m), 8)
#include "flops_template.h"

#define PA_K_NAME                 avx512_single
#define PA_K_TARGET               __attribute__((target("avx512f")))
#define PA_K_VEC                  __m512
#define PA_K_T                    float
#define PA_K_LOAD(p)              _mm512_loadu_ps(p)
#define PA_K_STEP(x, a, b)        _mm512_fmadd_ps(x, a, b)
#define PA_K_STORE(p, x)          _mm512_storeu_ps(p, x)
#define PA_K_MASK                 __mmask16
#define PA_K_MASK_ZERO            0
#define PA_K_MASK_NEQ(m, x, e)    (__mmask16)((m) | _mm512_cmp_ps_mask(x, e, _CMP_NEQ_UQ))
#define PA_K_MASK_STORE(flags, m) store_bits(flags, (unsigned)(m), 16)
#include "flops_template.h"

const pa_flops_kind pa_flops_vector_kinds[] = {
    {"sse", "double", "mul+add", "sse2", "SSE2", 2, sse_double},
    {"sse", "single", "mul+add", "sse2", "SSE2", 4, sse_single},
    {"avx2", "double", "fma", "avx2", "AVX2 and FMA", 4, avx2_double},
    {"avx2", "single", "fma", "avx2", "AVX2 and FMA", 8, avx2_single},
    {"avx512", "double", "fma", "avx512f", "AVX-512F", 8, avx512_double},
    {"avx512", "single", "fma", "avx512f", "AVX-512F", 16, avx512_single},
};
const int pa_flops_vector_count = sizeof pa_flops_vector_kinds / sizeof *pa_flops_vector_kinds;

/* CPUID, and XGETBV for the AVX and AVX-512 register states: what GCC's check answers. */
int pa_flops_cpu_has(const char *feature)
{
    __builtin_cpu_init();
    if (strcmp(feature, "sse2") == 0)
        return __builtin_cpu_supports("sse2");
    if (strcmp(feature, "avx2") == 0) /* the AVX2 kernels use FMA too */
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(feature, "avx512f") == 0)
        return __builtin_cpu_supports("avx512f");
    return 0;
}

int pa_flops_runtime_lanes(const char *precision)
{
    (void)precision;
    return 0; /* every x86 kernel has a fixed width */
}

#endif
