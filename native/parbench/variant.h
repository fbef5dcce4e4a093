/* A variant -- kernel, bytes, stride, threads -- run by a team of pinned OpenMP threads, each on
 * its own 1/threads share of the bytes (an SPMD decomposition, as pa-mem-bandwidth slices its
 * arrays): every thread allocates and first-touches its instance, so its pages are local. */
#ifndef PB_VARIANT_H
#define PB_VARIANT_H

#include <stddef.h>

#include "json.h"
#include "kernels.h"
#include "result.h"

typedef struct {
    const pb_kernel *kernel;
    size_t bytes; /* over all threads */
    size_t stride;
    int threads;
} pb_variant;

/* Checks the variant and shapes the instance of one thread (stride allowed, bytes enough);
 * 0, or -1 and one sentence in `why`. */
int pb_variant_shape(const pb_variant *v, pb_instance *one, char *why, size_t size);

/* Inside a team of v->threads: pins thread t to cpus[t] (recording the binding read back; with
 * cpus NULL it stays unpinned, cpu_requested -1, and records where it may run), shapes,
 * allocates and first-touches its instance. A failure goes to `failure`. */
void pb_team_setup(const pb_variant *v, const int *cpus, int t, pb_instance *k,
                   pa_thread_placement *placement, char *failure, size_t size);
/* Checks this thread's instance (first corrupting it when PERFATLAS_PARBENCH_CORRUPT=1, so that
 * tests see a wrong result caught), then frees it. A failure goes to `failure`. */
void pb_team_check(pb_instance *k, int t, char *failure, size_t size);

/* The declared counts (kernels.def) of the kernel: "class", "iteration", bytes and flops per
 * iteration, "write_fraction". */
void pb_kernel_counts_json(pa_json *json, const pb_kernel *kernel);

#endif
