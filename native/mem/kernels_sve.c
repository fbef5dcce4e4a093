/* The SVE loops of the element-wise kernels and of the read: the same C (kernels_loops.h) compiled
 * with SVE enabled, so that the compiler writes vector-length-agnostic loops (predicated loads and
 * stores, as wide as the CPU's vectors: 128 bits on Neoverse V2, 256 on V1, 512 on A64FX). The
 * same declared bytes, flops and checks as every kernel of kernels.def. They run only where the
 * kernel reports SVE (HWCAP_SVE); elsewhere the measurement is not measurable here, with the
 * reason. */
#if defined(__aarch64__) && defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 10)
#pragma GCC target("+sve")
#define PA_SVE_LOOPS 1
#endif

#include <string.h>
#include <sys/auxv.h>

#include "kernels.h"
#include "kernels_loops.h"

#ifdef PA_SVE_LOOPS
#define SVE_LOOP(name, DST, VALUE) PA_LOOP_ELEMENTWISE(name##_sve, DST, VALUE)
PA_ELEMENTWISE_KERNELS(SVE_LOOP)
PA_LOOP_READ(read_sve)

#define SVE_ENTRY(name, DST, VALUE) {#name, name##_sve},
static const struct {
    const char *name;
    pa_kernel_fn *fn;
} loops[] = {PA_ELEMENTWISE_KERNELS(SVE_ENTRY){"read", read_sve}};
#endif

pa_kernel_fn *pa_kernel_sve(const pa_kernel *kernel)
{
#ifdef PA_SVE_LOOPS
    for (size_t k = 0; k < sizeof loops / sizeof *loops; k++)
        if (strcmp(loops[k].name, kernel->name) == 0)
            return loops[k].fn;
#endif
    (void)kernel;
    return NULL;
}

const char *pa_kernel_sve_missing(void)
{
#if !defined(__aarch64__)
    return "SVE is an aarch64 extension and this is not an aarch64 build";
#elif !defined(PA_SVE_LOOPS)
    return "this build's compiler cannot generate SVE code (GCC 10 or later can)";
#else
    if (getauxval(AT_HWCAP) & HWCAP_SVE)
        return NULL;
    return "this CPU lacks SVE (the kernel does not set HWCAP_SVE): a NEON-only core such as a "
           "Neoverse N1 or Cortex-A72";
#endif
}
