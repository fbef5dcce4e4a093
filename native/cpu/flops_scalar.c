/* The portable scalar kernels of pa-cpu-peakflops: one multiply and one add per lane-iteration
 * (likwid's `peakflops` and `peakflops_sp` count the same), plain C. This file is compiled
 * without vectorization and without contraction (CMakeLists.txt: -fno-tree-*-vectorize
 * -ffp-contract=off), so that the compiler neither packs the 12 chains into vectors nor fuses
 * the multiply and the add. */
#include "flops_kernels.h"

#define PA_K_MASK_STORE_SCALAR(flags, m) ((flags)[0] |= (unsigned char)(m))

#define PA_K_NAME scalar_double
#define PA_K_TARGET
#define PA_K_VEC               double
#define PA_K_T                 double
#define PA_K_LOAD(p)           (*(p))
#define PA_K_STEP(x, a, b)     ((x) * (a) + (b))
#define PA_K_STORE(p, x)       (*(p) = (x))
#define PA_K_MASK              int
#define PA_K_MASK_ZERO         0
#define PA_K_MASK_NEQ(m, x, e) ((m) | ((x) != (e)))
#define PA_K_MASK_STORE        PA_K_MASK_STORE_SCALAR
#include "flops_template.h"

#define PA_K_NAME scalar_single
#define PA_K_TARGET
#define PA_K_VEC               float
#define PA_K_T                 float
#define PA_K_LOAD(p)           (*(p))
#define PA_K_STEP(x, a, b)     ((x) * (a) + (b))
#define PA_K_STORE(p, x)       (*(p) = (x))
#define PA_K_MASK              int
#define PA_K_MASK_ZERO         0
#define PA_K_MASK_NEQ(m, x, e) ((m) | ((x) != (e)))
#define PA_K_MASK_STORE        PA_K_MASK_STORE_SCALAR
#include "flops_template.h"

const pa_flops_kind pa_flops_scalar_kinds[2] = {
    {"scalar", "double", "mul+add", NULL, NULL, 1, scalar_double},
    {"scalar", "single", "mul+add", NULL, NULL, 1, scalar_single},
};
