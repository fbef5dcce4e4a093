/* The PARbench kernel catalog (kernels.def) and one thread's instance of a kernel.
 *
 * An instance is one thread's share of a variant: its shape comes from the bytes of that share,
 * its arrays are allocated and first-touched by the thread that runs it, and a pass is one
 * execution of the kernel over the whole shape (`iterations` innermost statements). Every pass of
 * a kernel leaves the same result (or one that follows from the number of passes), which `check`
 * compares against STREAM-style expected values or a reference computed the plain way. */
#ifndef PB_KERNELS_H
#define PB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX_ARRAYS   5
#define PB_STRIDE_GRAIN 32 /* vector kernels hold a multiple of this many elements: every stride */

typedef struct pb_instance pb_instance;

typedef struct {
    const char *name, *class_name, *iteration, *description;
    int load_bytes, store_bytes, flops; /* per iteration, from kernels.def */
    int strided;
    /* Sets n, iterations, array_bytes and output from the bytes of one thread; leaves n = 0 when
     * they are too few and returns the fewest bytes that work. */
    size_t (*shape)(pb_instance *k, size_t bytes);
    void (*init)(pb_instance *k); /* first touch, by the thread that runs the instance */
    void (*pass)(pb_instance *k);
    /* 0, or -1 with one sentence in `why`; may use the arrays (an in-place kernel's reference). */
    int (*check)(pb_instance *k, char *why, size_t size);
} pb_kernel;

struct pb_instance {
    const pb_kernel *kernel;
    size_t stride;
    size_t n;            /* the shape: elements, grid edge, matrix order, rows, nodes */
    uint64_t iterations; /* per pass */
    size_t array_bytes[PB_MAX_ARRAYS];
    void *array[PB_MAX_ARRAYS];
    int output;      /* the array holding the result, or -1: the scalar below */
    uint64_t passes; /* passes run since init */
    double result;   /* a scalar result (a sum, a dot product) */
    uint64_t word;   /* an integer result (a chase's sum, a hash chain) */
    uint64_t state;  /* where a kernel that goes on from pass to pass stands */
};

#define PB_KERNEL(name, ...)                                \
    size_t pb_##name##_shape(pb_instance *k, size_t bytes); \
    void pb_##name##_init(pb_instance *k);                  \
    void pb_##name##_pass(pb_instance *k);                  \
    int pb_##name##_check(pb_instance *k, char *why, size_t size);
#include "kernels.def"
#undef PB_KERNEL

const pb_kernel *pb_kernel_find(const char *name);
const pb_kernel *pb_kernel_first(void);
const pb_kernel *pb_kernel_next(const pb_kernel *kernel);
/* "copy,scale,..." for the args table. */
const char *pb_kernel_names(void);

static inline int pb_kernel_bytes_per_iteration(const pb_kernel *k)
{
    return k->load_bytes + k->store_bytes;
}

/* Shapes the instance for `bytes` (one thread's share); 0, or -1 and one sentence in `why`. */
int pb_instance_shape(pb_instance *k, const pb_kernel *kernel, size_t bytes, size_t stride,
                      char *why, size_t size);
/* Allocates and first-touches the arrays (call on the thread that will run it); exits with status
 * 2 when they cannot be allocated (alloc.h). */
void pb_instance_setup(pb_instance *k);
void pb_instance_run(pb_instance *k, uint64_t passes);
/* sampler.h's pa_work_fn over an instance. */
void pb_instance_work(void *instance, uint64_t passes);
int pb_instance_check(pb_instance *k, char *why, size_t size);
/* Flips one bit of the result, so that tests can see a wrong result caught
 * (PERFATLAS_PARBENCH_CORRUPT=1). */
void pb_instance_corrupt(pb_instance *k);
void pb_instance_free(pb_instance *k);
size_t pb_instance_bytes(const pb_instance *k);

/* Shared by the kernel files: splitmix64 (Steele, Lea & Flood, OOPSLA 2014) for reproducible
 * pseudo-random data, and a tolerance check that writes the sentence. */
static inline uint64_t pb_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}
int pb_expect(const pb_instance *k, const char *what, size_t index, double found, double expected,
              double tolerance, char *why, size_t size);

#endif
