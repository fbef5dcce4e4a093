/* pa-mem-bandwidth: sustained bandwidth of one kernel of kernels.def (cachebench's operations and
 * STREAM's) on one or more threads.
 *
 * Each thread is pinned to its PU and first-touches its own contiguous slice of every array. A
 * sample runs from a barrier, through every thread running the kernel `iterations` times over its
 * slice, to the next barrier; bandwidth = bytes_per_iteration * elements * iterations / seconds,
 * without write-allocate traffic. Afterwards every slice is checked against the values the
 * kernel must have produced (STREAM's check), which also keeps the compiler from deleting work.
 *
 * bytes= may list a series of working sets (bytes=4KiB,8KiB,...): one process measures them in
 * order, each point with its own buffer, first touch, calibration, samples and check, and writes
 * one document per point (a JSON array), as separate launches would (docs/contract.md, Series). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "kernels.h"
#include "memory.h"
#include "numa_counters.h"
#include "result.h"
#include "sampler.h"
#include "timer.h"

#define PA_KERNEL(name, ...) "," #name
static const char kernel_names[] =
#include "kernels.def"
    ;
#undef PA_KERNEL

static const pa_param params[] = {
    {"op", PA_CHOICE, "triad", "kernel", kernel_names + 1, 0, 0},
    {"bytes", PA_SIZES, "256MiB",
     "working set over all arrays of the kernel; a comma-separated list measures a series", NULL,
     512, 0x1p40},
    {"cpus", PA_CPUS, "0", "one thread per listed PU, in this order", NULL, 0, 0},
    {"store", PA_CHOICE, "normal", "stores: normal, or nt (non-temporal, bypassing the caches)",
     "normal,nt", 0, 0},
    {"node", PA_NODE, "local",
     "memory policy: local (each thread first-touches its slice), a NUMA node number (bind) or "
     "interleave",
     NULL, 0, 0},
    {"page", PA_SIZE, "4KiB", "page size of the arrays", "4KiB,2MiB", 0, 0},
    {"samples", PA_INT, "9", "timed samples after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
#ifdef __aarch64__
    {"vector", PA_CHOICE, "auto",
     "vector code: auto (the build's: NEON, or SVE where the build targets it) or sve (the "
     "kernel's loop compiled for SVE; not measurable on a CPU without it)",
     "auto,sve", 0, 0},
#endif
};

typedef struct {
    const pa_kernel *kernel;
    int nt, threads, samples;
    size_t per_thread; /* elements of each array per thread */
    double min_seconds;
    pa_buffer buffer;
    const char *why; /* not measurable */
    const char
        *unsupported;      /* not measurable at any size: the CPU lacks the vector=sve loop's ISA */
    pa_kernel_fn *variant; /* vector=sve: the SVE loop */
    pa_thread_placement *placement;
    double *seconds;
    uint64_t iterations;
    char failure[320];
} run;

/* Array k of thread t starts at base + (k * threads + t) * per_thread doubles: each array is
 * contiguous, each slice a multiple of PA_KERNEL_GRAIN doubles. */
static pa_slice slice_of(const run *r, int t)
{
    pa_slice slice = {.kernel = r->kernel, .nt = r->nt, .variant = r->variant, .n = r->per_thread};
    double *base = (double *)r->buffer.base;
    for (int k = 0; k < r->kernel->arrays; k++)
        slice.array[k] = base + ((size_t)k * (size_t)r->threads + (size_t)t) * r->per_thread;
    return slice;
}

static void thread_body(run *r, const int *cpus, int t)
{
    pa_pin_self(cpus[t], r->placement[t].cpus_allowed, sizeof r->placement[t].cpus_allowed);
    pa_slice slice = slice_of(r, t);
    if (!r->why)
        pa_slice_init(&slice);
#pragma omp barrier
#pragma omp master
    if (!r->why)
        r->why = pa_buffer_verify(&r->buffer);
#pragma omp barrier
    if (r->why)
        return;
    pa_sampler sampler = {.work = pa_slice_work, .min_seconds = r->min_seconds, .team = 1};
    uint64_t iterations = pa_sampler_calibrate(&sampler, &slice);
    for (int i = 0; i < r->samples; i++) {
        double seconds = pa_sampler_sample(&sampler, &slice, iterations);
#pragma omp master
        r->seconds[i] = seconds;
    }
    char why[256];
    if (pa_slice_verify(&slice, why, sizeof why)) {
#pragma omp critical
        snprintf(r->failure, sizeof r->failure, "thread %d: %s", t, why);
    }
#pragma omp master
    r->iterations = iterations;
}

static void write_document(pa_json *json, const pa_args *args, const run *r)
{
    pa_result_begin(json, "mem.bandwidth", args);
    pa_json_key_int(json, "threads", r->threads);
    pa_result_context(json, r->placement, r->threads, &r->buffer);
    size_t elements = r->per_thread * (size_t)r->threads;
    if (r->why) {
        pa_result_not_measurable(json, r->why);
    } else {
        double *bandwidth = pa_alloc((size_t)r->samples, sizeof *bandwidth, "bandwidth");
        double bytes = (double)pa_kernel_bytes_per_iteration(r->kernel) * (double)elements *
                       (double)r->iterations;
        for (int i = 0; i < r->samples; i++)
            bandwidth[i] = bytes / r->seconds[i];
        pa_result_samples(json, "bandwidth_Bps", "byte/s", bandwidth, r->seconds, r->samples);
        free(bandwidth);
        pa_json_key(json, "derived");
        pa_json_begin_object(json);
        pa_kernel_derived_json(json, r->kernel, elements, r->iterations, 1);
        pa_json_end_object(json);
    }
    pa_result_end(json);
}

/* The smallest working set this kernel can divide among the threads. */
static size_t grain_bytes(const run *r)
{
    return PA_KERNEL_GRAIN * sizeof(double) * (size_t)(r->kernel->arrays * r->threads);
}

/* One point of the series: map, first-touch, calibrate, sample, check, write, unmap. */
static void measure_point(pa_json *json, const pa_args *args, run *r, const int *cpus)
{
    size_t grain = grain_bytes(r);
    r->per_thread = pa_arg_size(args, "bytes") / grain * PA_KERNEL_GRAIN;
    size_t used = r->per_thread * sizeof(double) * (size_t)(r->kernel->arrays * r->threads);
    r->why =
        pa_buffer_map(&r->buffer, used, pa_arg_size(args, "page"), (int)pa_arg_int(args, "node"));
    if (!r->why)
        r->why = r->unsupported;
    r->iterations = 0;
    for (int t = 0; t < r->threads; t++)
        r->placement[t] = (pa_thread_placement){.cpu_requested = cpus[t]};
    omp_set_dynamic(0);
#pragma omp parallel num_threads(r->threads)
    thread_body(r, cpus, pa_team_thread(r->threads));
    if (r->failure[0])
        pa_fail(3, "%s", r->failure);
    write_document(json, args, r);
    pa_buffer_unmap(&r->buffer);
}

/* `--kernels`: the catalog of kernels.def as JSON, so that nothing outside native/ restates it. */
static void write_catalog(void)
{
    pa_json json;
    pa_json_init(&json, stdout);
    pa_json_begin_array(&json);
    for (const pa_kernel *k = pa_kernel_first(); k; k = pa_kernel_next(k)) {
        pa_json_begin_object(&json);
        pa_json_key_string(&json, "name", k->name);
        pa_json_key_int(&json, "arrays", k->arrays);
        pa_json_key_int(&json, "bytes_per_element", pa_kernel_bytes_per_iteration(k));
        pa_json_key_int(&json, "flops_per_element", k->flops);
        pa_json_key_bool(&json, "nt", k->streaming != NULL);
        pa_json_end_object(&json);
    }
    pa_json_end_array(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the kernel catalog");
}

#ifdef __aarch64__
/* vector=sve: the kernel's SVE loop, refused for a kernel without one; on a CPU without SVE every
 * point is not measurable here, with the reason (the check is the kernel's HWCAP_SVE). */
static void choose_vector(run *r, const char *vector)
{
    if (strcmp(vector, "sve") != 0)
        return;
    if (r->nt)
        pa_fail(2, "vector=sve has ordinary stores only: leave out store=nt");
    static char why[256];
    const char *missing = pa_kernel_sve_missing();
    r->variant = pa_kernel_sve(r->kernel);
    if (missing)
        snprintf(why, sizeof why, "op=%s vector=sve cannot run here: %s", r->kernel->name, missing);
    else if (!r->variant)
        pa_fail(2,
                "vector=sve does not apply to op %s: SVE loops exist for read, write, rmw, copy, "
                "scale, add and triad",
                r->kernel->name);
    r->unsupported = missing ? why : NULL;
}
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--kernels") == 0) {
        write_catalog();
        return 0;
    }
    pa_args args;
    pa_args_parse(&args, "pa-mem-bandwidth", "memory bandwidth of cachebench and STREAM kernels",
                  params, sizeof params / sizeof *params, argc, argv);
    run r = {.kernel = pa_kernel_find(pa_arg_text(&args, "op")),
             .nt = strcmp(pa_arg_text(&args, "store"), "nt") == 0,
             .samples = (int)pa_arg_int(&args, "samples"),
             .min_seconds = pa_arg_double(&args, "min_sample_time")};
    if (r.nt && !r.kernel->streaming)
        pa_fail(2,
                "store=nt does not apply to op %s: non-temporal stores exist for write, rmw, "
                "copy, scale, add and triad",
                r.kernel->name);
#ifdef __aarch64__
    choose_vector(&r, pa_arg_text(&args, "vector"));
#endif
    const int *cpus = pa_arg_cpus(&args, "cpus", &r.threads);
    pa_cpus_validate(cpus, r.threads);
    int points = pa_arg_points(&args, "bytes");
    for (int k = 0; k < points; k++) { /* every point is checked before anything is measured */
        if (points > 1)
            pa_arg_select(&args, "bytes", k);
        if (pa_arg_size(&args, "bytes") < grain_bytes(&r))
            pa_fail(2,
                    "bytes=%s is too small for op %s on %d thread%s: it needs at least %zu bytes",
                    pa_arg_text(&args, "bytes"), r.kernel->name, r.threads,
                    r.threads > 1 ? "s" : "", grain_bytes(&r));
    }
    pa_timer_init();
    pa_numa_counters_start(); /* before the OpenMP team, which then counts with it */
    r.placement = pa_calloc((size_t)r.threads, sizeof *r.placement, "placement");
    r.seconds = pa_calloc((size_t)r.samples, sizeof *r.seconds, "seconds");
    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    if (points > 1)
        pa_json_begin_array(&json);
    for (int k = 0; k < points; k++) {
        if (points > 1)
            pa_arg_select(&args, "bytes", k);
        measure_point(&json, &args, &r, cpus);
    }
    if (points > 1)
        pa_json_end_array(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the result");
    return 0;
}
