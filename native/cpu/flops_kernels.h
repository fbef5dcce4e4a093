/* The peak floating-point kernels of pa-cpu-peakflops: one per instruction set and precision,
 * all in one binary (each behind its own target attribute) and chosen at run time from what the
 * CPU supports (docs/guide/compute.md).
 *
 * Every kernel runs `blocks` blocks; a block starts each of PA_FLOPS_ACCUMULATORS independent
 * vector accumulators at its start values, applies `iterations` times x = x * a + b (a = 1: one
 * FMA, or one multiply and one add, per lane and accumulator: 2 flop), and compares every lane
 * with the closed form start + iterations * b, exact in binary (flops_check.c). A block that
 * skipped iterations, or a kernel that left out lanes, leaves a lane off it: the run fails (exit 3)
 * naming the first wrong element. The inner loop touches registers only (the constants a and b
 * are loaded once per call; starts and closed forms once per block, a 1/iterations share). */
#ifndef PA_FLOPS_KERNELS_H
#define PA_FLOPS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Enough independent accumulators to keep every FMA pipe busy: a dependent chain issues one
 * operation per latency, so a core needs latency x pipes chains in flight (the latency-throughput
 * argument of Hennessy & Patterson, 6th ed., 3.2, and of likwid's peakflops kernels). x86-64:
 * 2 FMA pipes x 4-5 cycles (Skylake-SP 4, Zen 1-3 5, Zen 4 4) = 8-10 chains, and the mul+add
 * kernels' chain is a multiply then an add (Zen 4: 2 MUL + 2 ADD pipes, 3 + 3 cycles = 12): 12
 * fit the 16 registers of AVX2 with a, b and the check mask. aarch64: up to 4 FMA pipes x 4
 * cycles (Neoverse V1/V2) = 16 of the 32 vector registers. */
#if defined(__aarch64__)
#define PA_FLOPS_ACCUMULATORS 16
#define PA_FLOPS_EACH(F) \
    F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
#else
#define PA_FLOPS_ACCUMULATORS 12
#define PA_FLOPS_EACH(F)      F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
#endif

/* Iterations of the recurrence per block: 1024 x (accumulators) FMAs between two checks. */
#define PA_FLOPS_ITERATIONS 1024
/* The widest vector: 2048-bit SVE holds 64 floats. */
#define PA_FLOPS_MAX_LANES 64

/* One thread's kernel state: every array holds accumulators x lanes values of the kernel's
 * precision (lane j of accumulator k at k * lanes + j), aligned to 64 bytes. */
typedef struct {
    const void *start;    /* start values, distinct in every lane */
    const void *expected; /* start + iterations * b: the closed form of one block */
    const void *scale;    /* `lanes` values of a (1) */
    const void *delta;    /* `lanes` values of b */
    void *last;           /* the accumulators after the last block */
    unsigned char *wrong; /* `lanes` flags: 1 where some block ended off the closed form */
    uint64_t iterations;  /* per block (PA_FLOPS_ITERATIONS; a test hook takes one off) */
    int lanes;
} pa_flops_state;

typedef void pa_flops_fn(pa_flops_state *state, uint64_t blocks);

typedef struct {
    const char *isa;        /* scalar, sse, avx2, avx512, neon, sve */
    const char *precision;  /* double, single */
    const char *operations; /* "fma" or "mul+add" */
    const char *requires;   /* the CPU feature it needs, NULL for scalar */
    const char *feature;    /* that feature as its vendor names it ("AVX-512F") */
    int lanes;              /* lanes per vector; 0: the vector length read at run time */
    pa_flops_fn *run;
} pa_flops_kind;

/* Flops of one iteration of one accumulator, per lane: one FMA, or one multiply and one add. */
#define PA_FLOPS_PER_LANE_ITERATION 2

/* The instruction sets this architecture knows, from narrow to wide. */
#if defined(__x86_64__)
#define PA_FLOPS_ISAS "scalar,sse,avx2,avx512"
#elif defined(__aarch64__)
#define PA_FLOPS_ISAS "scalar,neon,sve"
#else
#define PA_FLOPS_ISAS "scalar"
#endif

/* The kernel of an ISA and precision, or NULL where this build has none. */
const pa_flops_kind *pa_flops_find(const char *isa, const char *precision);
/* Kernel i of every ISA and precision this build has (NULL past the end). */
const pa_flops_kind *pa_flops_kind_at(int i);
/* Lanes of a kernel's vector on this CPU. */
int pa_flops_lanes(const pa_flops_kind *kind);
/* Why this CPU cannot run the kernel ("this CPU lacks AVX-512F"), or NULL where it can. */
const char *pa_flops_lacks(const pa_flops_kind *kind);
/* The widest ISA this CPU runs (scalar at least). */
const char *pa_flops_widest(void);

/* Architecture parts (flops_x86.c, flops_arm.c): their kernels, and the CPU check. */
extern const pa_flops_kind pa_flops_vector_kinds[];
extern const int pa_flops_vector_count;
int pa_flops_cpu_has(const char *feature);
int pa_flops_runtime_lanes(const char *precision); /* SVE's vector length in lanes */
/* The portable scalar kernels (flops_scalar.c). */
extern const pa_flops_kind pa_flops_scalar_kinds[2];

#endif
