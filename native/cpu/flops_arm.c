/* The aarch64 kernels of pa-cpu-peakflops: Advanced SIMD (NEON, 128-bit FMA) and SVE (FMA at
 * the vector length the CPU has, read at run time), double and single. The SVE kernels are
 * compiled for SVE by their target attribute and run only where the kernel's HWCAP says the CPU
 * has it. On another architecture than x86-64 and aarch64 this file says that only the scalar
 * kernels exist. */
#include "flops_kernels.h"

#include <string.h>

#if defined(__aarch64__)
#include <arm_neon.h>
#include <sys/auxv.h>

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif

static inline void store_lanes(unsigned char *flags, const uint64_t *set, int lanes)
{
    for (int j = 0; j < lanes; j++)
        flags[j] |= (unsigned char)(set[j] != 0);
}

static inline void store_neon64(unsigned char *flags, uint64x2_t m)
{
    uint64_t set[2];
    vst1q_u64(set, m);
    store_lanes(flags, set, 2);
}

static inline void store_neon32(unsigned char *flags, uint32x4_t m)
{
    uint32_t set32[4];
    vst1q_u32(set32, m);
    uint64_t set[4] = {set32[0], set32[1], set32[2], set32[3]};
    store_lanes(flags, set, 4);
}

#define PA_K_NAME neon_double
#define PA_K_TARGET
#define PA_K_VEC           float64x2_t
#define PA_K_T             double
#define PA_K_LOAD(p)       vld1q_f64(p)
#define PA_K_STEP(x, a, b) vfmaq_f64(b, x, a)
#define PA_K_STORE(p, x)   vst1q_f64(p, x)
#define PA_K_MASK          uint64x2_t
#define PA_K_MASK_ZERO     vdupq_n_u64(0)
#define PA_K_MASK_NEQ(m, x, e) \
    vorrq_u64(m, vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(x, e)))))
#define PA_K_MASK_STORE(flags, m) store_neon64(flags, m)
#include "flops_template.h"

#define PA_K_NAME neon_single
#define PA_K_TARGET
#define PA_K_VEC                  float32x4_t
#define PA_K_T                    float
#define PA_K_LOAD(p)              vld1q_f32(p)
#define PA_K_STEP(x, a, b)        vfmaq_f32(b, x, a)
#define PA_K_STORE(p, x)          vst1q_f32(p, x)
#define PA_K_MASK                 uint32x4_t
#define PA_K_MASK_ZERO            vdupq_n_u32(0)
#define PA_K_MASK_NEQ(m, x, e)    vorrq_u32(m, vmvnq_u32(vceqq_f32(x, e)))
#define PA_K_MASK_STORE(flags, m) store_neon32(flags, m)
#include "flops_template.h"

#pragma GCC push_options
#pragma GCC target("+sve")
#include <arm_sve.h>

__attribute__((target("+sve"))) static void store_sve(unsigned char *flags, svbool_t m, int bits)
{
    uint64_t set[PA_FLOPS_MAX_LANES];
    int lanes = bits == 64 ? (int)svcntd() : (int)svcntw();
    for (int j = 0; j < lanes; j++) /* the predicate's lane j, one lane at a time */
        set[j] = bits == 64 ? svptest_any(svwhilelt_b64(j, j + 1), m)
                            : svptest_any(svwhilelt_b32(j, j + 1), m);
    store_lanes(flags, set, lanes);
}

#define PA_K_NAME                 sve_double
#define PA_K_TARGET               __attribute__((target("+sve")))
#define PA_K_VEC                  svfloat64_t
#define PA_K_T                    double
#define PA_K_LOAD(p)              svld1_f64(svptrue_b64(), p)
#define PA_K_STEP(x, a, b)        svmad_f64_x(svptrue_b64(), x, a, b)
#define PA_K_STORE(p, x)          svst1_f64(svptrue_b64(), p, x)
#define PA_K_MASK                 svbool_t
#define PA_K_MASK_ZERO            svpfalse_b()
#define PA_K_MASK_NEQ(m, x, e)    svorr_b_z(svptrue_b64(), m, svcmpne_f64(svptrue_b64(), x, e))
#define PA_K_MASK_STORE(flags, m) store_sve(flags, m, 64)
#include "flops_template.h"

#define PA_K_NAME                 sve_single
#define PA_K_TARGET               __attribute__((target("+sve")))
#define PA_K_VEC                  svfloat32_t
#define PA_K_T                    float
#define PA_K_LOAD(p)              svld1_f32(svptrue_b32(), p)
#define PA_K_STEP(x, a, b)        svmad_f32_x(svptrue_b32(), x, a, b)
#define PA_K_STORE(p, x)          svst1_f32(svptrue_b32(), p, x)
#define PA_K_MASK                 svbool_t
#define PA_K_MASK_ZERO            svpfalse_b()
#define PA_K_MASK_NEQ(m, x, e)    svorr_b_z(svptrue_b32(), m, svcmpne_f32(svptrue_b32(), x, e))
#define PA_K_MASK_STORE(flags, m) store_sve(flags, m, 32)
#include "flops_template.h"

__attribute__((target("+sve"))) static int sve_lanes(int bits)
{
    return bits == 64 ? (int)svcntd() : (int)svcntw();
}
#pragma GCC pop_options

const pa_flops_kind pa_flops_vector_kinds[] = {
    {"neon", "double", "fma", "asimd", "Advanced SIMD (NEON)", 2, neon_double},
    {"neon", "single", "fma", "asimd", "Advanced SIMD (NEON)", 4, neon_single},
    {"sve", "double", "fma", "sve", "SVE", 0, sve_double},
    {"sve", "single", "fma", "sve", "SVE", 0, sve_single},
};
const int pa_flops_vector_count = sizeof pa_flops_vector_kinds / sizeof *pa_flops_vector_kinds;

/* The kernel's HWCAP bits (Linux, arch/arm64/include/uapi/asm/hwcap.h). */
int pa_flops_cpu_has(const char *feature)
{
    unsigned long hwcap = getauxval(AT_HWCAP);
    if (strcmp(feature, "asimd") == 0)
        return (hwcap & HWCAP_ASIMD) != 0;
    if (strcmp(feature, "sve") == 0)
        return (hwcap & HWCAP_SVE) != 0;
    return 0;
}

int pa_flops_runtime_lanes(const char *precision)
{
    if (pa_flops_cpu_has("sve"))
        return sve_lanes(strcmp(precision, "double") == 0 ? 64 : 32);
    return 0;
}

#elif !defined(__x86_64__)
/* Neither x86-64 nor aarch64: the portable scalar kernels only. */
const pa_flops_kind pa_flops_vector_kinds[1] = {{NULL, NULL, NULL, NULL, NULL, 0, NULL}};
const int pa_flops_vector_count = 0;

int pa_flops_cpu_has(const char *feature)
{
    (void)feature;
    return 0;
}

int pa_flops_runtime_lanes(const char *precision)
{
    (void)precision;
    return 0;
}
#endif
