/* The portable loops of the element-wise kernels and of the read (kernels.def), written once:
 * kernels.c compiles them under the build's architecture flags, kernels_sve.c again with SVE
 * enabled. Plain C that the compiler vectorizes for whatever the target has (SSE/AVX/AVX-512,
 * NEON, SVE with its vector-length-agnostic loops). */
#ifndef PA_KERNELS_LOOPS_H
#define PA_KERNELS_LOOPS_H

#include <stddef.h>

#define SCALAR     3.0
#define ALIGNED(p) __builtin_assume_aligned(p, 64)

/* DST[i] = VALUE, for every element-wise kernel: X(name, DST, VALUE). */
#define PA_ELEMENTWISE_KERNELS(X) \
    X(write, a, s)                \
    X(rmw, a, a[i] + s)           \
    X(copy, b, a[i])              \
    X(scale, b, s *a[i])          \
    X(add, c, a[i] + b[i])        \
    X(triad, a, b[i] + s * c[i])

/* The arrays in blocks of BLOCK doubles with a constant-trip inner loop, which the compiler unrolls
 * completely: four 64-byte vectors per iteration, as likwid-bench's kernels do. */
#define BLOCK 32
#define PA_LOOP_ELEMENTWISE(fn, DST, VALUE)                                                   \
    static double fn(double *restrict a_, double *restrict b_, double *restrict c_, size_t n) \
    {                                                                                         \
        for (size_t j = 0; j < n; j += BLOCK) {                                               \
            double *restrict a = ALIGNED(a_ + j), *restrict b = ALIGNED(b_ + j),              \
                             *restrict c = ALIGNED(c_ + j);                                   \
            const double s = SCALAR;                                                          \
            (void)a, (void)b, (void)c, (void)s;                                               \
            _Pragma("omp simd") for (size_t i = 0; i < BLOCK; i++) DST[i] = VALUE;            \
        }                                                                                     \
        return 0;                                                                             \
    }

/* sum += a[i]: the reduction the compiler vectorizes (one vector accumulator). */
#define PA_LOOP_READ(fn)                                                                   \
    static double fn(double *restrict a, double *restrict b, double *restrict c, size_t n) \
    {                                                                                      \
        (void)b, (void)c;                                                                  \
        a = ALIGNED(a);                                                                    \
        double sum = 0;                                                                    \
        _Pragma("omp simd reduction(+ : sum)") for (size_t i = 0; i < n; i++) sum += a[i]; \
        return sum;                                                                        \
    }

#endif
