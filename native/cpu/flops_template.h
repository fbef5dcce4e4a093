/* The body of every peak-flops kernel (flops_kernels.h), expanded once per instruction set and
 * precision by the file that defines, before including it:
 *   PA_K_NAME, PA_K_TARGET     the function's name and its target attribute (or nothing)
 *   PA_K_VEC, PA_K_T           the vector type and its element type
 *   PA_K_LOAD(p)               a vector from `lanes` elements at p (unaligned)
 *   PA_K_STEP(x, a, b)         x * a + b: one FMA, or a multiply then an add
 *   PA_K_STORE(p, x)           x into `lanes` elements at p
 *   PA_K_MASK, PA_K_MASK_ZERO  the type of a lane mask, and no lane set
 *   PA_K_MASK_NEQ(m, x, e)     m with the lanes where x != e set too
 *   PA_K_MASK_STORE(flags, m)  flags[j] |= 1 for every lane j set in m
 * Not an include guard: included once per kernel. */

PA_K_TARGET static void PA_K_NAME(pa_flops_state *s, uint64_t blocks)
{
    const PA_K_T *start = s->start, *expected = s->expected;
    const size_t w = (size_t)s->lanes;
    const PA_K_VEC a = PA_K_LOAD((const PA_K_T *)s->scale);
    const PA_K_VEC b = PA_K_LOAD((const PA_K_T *)s->delta);
    const uint64_t iterations = s->iterations;
    PA_K_MASK bad = PA_K_MASK_ZERO;
#define PA_K_START(k)   PA_K_VEC x##k = PA_K_LOAD(start + k * w);
#define PA_K_RESTART(k) x##k = PA_K_LOAD(start + k * w);
#define PA_K_ITERATE(k) x##k = PA_K_STEP(x##k, a, b);
#define PA_K_COMPARE(k) bad = PA_K_MASK_NEQ(bad, x##k, PA_K_LOAD(expected + k * w));
#define PA_K_KEEP(k)    PA_K_STORE((PA_K_T *)s->last + k * w, x##k);
    PA_FLOPS_EACH(PA_K_START)
    for (uint64_t block = 0; block < blocks; block++) {
        if (block > 0) {
            PA_FLOPS_EACH(PA_K_RESTART)
        }
        for (uint64_t i = 0; i < iterations; i++) {
            PA_FLOPS_EACH(PA_K_ITERATE)
        }
        PA_FLOPS_EACH(PA_K_COMPARE)
    }
    PA_FLOPS_EACH(PA_K_KEEP)
    PA_K_MASK_STORE(s->wrong, bad);
#undef PA_K_START
#undef PA_K_RESTART
#undef PA_K_ITERATE
#undef PA_K_COMPARE
#undef PA_K_KEEP
}

#undef PA_K_NAME
#undef PA_K_TARGET
#undef PA_K_VEC
#undef PA_K_T
#undef PA_K_LOAD
#undef PA_K_STEP
#undef PA_K_STORE
#undef PA_K_MASK
#undef PA_K_MASK_ZERO
#undef PA_K_MASK_NEQ
#undef PA_K_MASK_STORE
