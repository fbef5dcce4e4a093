/* Memory kernels (kernels.def) and the slices of arrays they run on. */
#ifndef PA_KERNELS_H
#define PA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* Every slice holds a multiple of this many doubles (512 B), so that the vector loops, unrolled by
 * eight 64-byte vectors, need no remainder loop and every slice starts 64-byte aligned. */
#define PA_KERNEL_GRAIN      64
#define PA_KERNEL_MAX_ARRAYS 3

typedef double pa_kernel_fn(double *restrict a, double *restrict b, double *restrict c, size_t n);

typedef struct {
    const char *name;
    int arrays, loads, stores, flops, nt;
    pa_kernel_fn *normal;                     /* ordinary stores */
    pa_kernel_fn *streaming;                  /* non-temporal stores, or NULL */
    void (*expect)(double runs, double *abc); /* element values after `runs` runs */
} pa_kernel;

const pa_kernel *pa_kernel_find(const char *name);

/* The kernel's loop compiled for SVE (kernels_sve.c), or NULL: not aarch64, a compiler without
 * SVE, or a kernel without such a loop (only the element-wise ones and read have one). */
pa_kernel_fn *pa_kernel_sve(const pa_kernel *kernel);

/* Why this CPU cannot run SVE loops, in one sentence; NULL where it can (HWCAP_SVE). */
const char *pa_kernel_sve_missing(void);

/* Iteration over the catalog in kernels.def order: first, then next until NULL. */
const pa_kernel *pa_kernel_first(void);
const pa_kernel *pa_kernel_next(const pa_kernel *kernel);

static inline int pa_kernel_bytes_per_iteration(const pa_kernel *k)
{
    return (int)sizeof(double) * (k->loads + k->stores);
}

/* One thread's share of the arrays. */
typedef struct {
    const pa_kernel *kernel;
    int nt;                              /* use the streaming variant */
    pa_kernel_fn *variant;               /* else this loop, where set (an SVE one), for normal */
    double *array[PA_KERNEL_MAX_ARRAYS]; /* a, b, c (unused ones NULL) */
    size_t n;                            /* elements per array, a multiple of PA_KERNEL_GRAIN */
    uint64_t runs;                       /* times the kernel ran on this slice */
    double result;                       /* what the last run returned (a read's sum) */
} pa_slice;

/* First touch, by the thread that owns the slice: a = 1, b = 2, c = 0.5. */
void pa_slice_init(pa_slice *slice);

/* pa_work_fn (sampler.h): runs the kernel `repetitions` times over the slice. */
void pa_slice_work(void *slice, uint64_t repetitions);

/* 0 if every element, and a read's sum, is what kernels.def says after slice->runs runs (relative
 * tolerance 1e-13); else -1 and one sentence in `why`. */
int pa_slice_verify(const pa_slice *slice, char *why, size_t size);

/* The kernel's keys of "derived": bytes and flops per iteration (from kernels.def), elements per
 * array over all threads, iterations (kernel passes) per sample, verified. */
void pa_kernel_derived_json(pa_json *json, const pa_kernel *kernel, size_t elements,
                            uint64_t iterations, int verified);

#endif
