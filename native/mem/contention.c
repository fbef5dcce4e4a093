/* pa-mem-contention: how much a task's memory latency or bandwidth suffers while a task on another
 * core streams through a large buffer.
 *
 * The measuring thread (on cpu) runs the page-random pointer chase (chase.h) or the read kernel
 * (kernels.h) on its own working set; a load thread (on load_cpu) idles, streams reads or streams
 * writes over load_bytes. The three conditions are interleaved sample by sample -- none, read,
 * write, none, ... -- so that drift hits them alike (Hoefler & Belli, SC15); the load thread has
 * completed a full pass in the asked mode before a sample starts. One document per condition. */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "chase.h"
#include "kernels.h"
#include "memory.h"
#include "result.h"
#include "sampler.h"
#include "spin.h"
#include "timer.h"

/* bytes= may list a series of working sets: one process measures them in order, each point with
 * fresh buffers, and writes its three documents as a launch of its own would (docs/contract.md). */
static const pa_param params[] = {
    {"measure", PA_CHOICE, "latency",
     "what the measuring thread measures: latency (page-random pointer chase) or bandwidth (the "
     "read kernel)",
     "latency,bandwidth", 0, 0},
    {"bytes", PA_SIZES, "64MiB",
     "working set of the measuring thread; a comma-separated list measures a series", NULL, 4096,
     0x1p37},
    {"cpu", PA_INT, "0", "PU of the measuring thread", NULL, 0, 65535},
    {"load_cpu", PA_INT, "1", "PU of the load thread", NULL, 0, 65535},
    {"load_bytes", PA_SIZE, "256MiB", "buffer the load thread streams over", NULL, 0x1p20, 0x1p40},
    {"samples", PA_INT, "7", "timed samples of each condition", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
};

enum {
    LOAD_NONE,
    LOAD_READ,
    LOAD_WRITE,
    LOADS,
    LOAD_STOP = LOADS
};
static const char *load_names[LOADS] = {"none", "read", "write"};

#define LOAD_CHUNK ((size_t)1 << 17) /* doubles the load thread streams between looks at its mode */

typedef struct {
    int latency; /* measure latency, else bandwidth */
    size_t bytes, load_bytes;
    int samples;
    double min_seconds;
    pa_buffer buffer, load_buffer;
    const char *why;
    pa_chain chain;
    pa_slice slice;
    pa_thread_placement placement[2];
    /* the measuring thread asks for a mode, the load thread acknowledges it once in steady state;
     * both as generation * 4 + mode, so that every request is distinct */
    _Alignas(64) atomic_uint request;
    _Alignas(64) atomic_uint acknowledged;
    _Alignas(64) char end_of_shared_lines;
    double *seconds[LOADS];
    uint64_t repetitions;
    char failure[256];
} experiment;

static void load_thread(experiment *e)
{
    pa_slice chunk = {.kernel = pa_kernel_find("read"), .n = e->load_bytes / sizeof(double)};
    chunk.n -= chunk.n % PA_KERNEL_GRAIN;
    chunk.array[0] = (double *)e->load_buffer.base;
    if (!e->why)
        pa_slice_init(&chunk); /* first touch by the load thread: its memory is its own */
    double *base = chunk.array[0];
    size_t total = chunk.n;
#pragma omp barrier
#pragma omp barrier
    if (e->why)
        return;
    static const char *kernel_of[LOADS] = {NULL, "read", "write"};
    for (;;) {
        unsigned request = atomic_load(&e->request);
        int mode = (int)(request % 4);
        if (mode == LOAD_STOP)
            return;
        if (mode == LOAD_NONE) {
            if (atomic_load(&e->acknowledged) != request)
                atomic_store(&e->acknowledged, request);
            pa_spin_pause();
            continue;
        }
        chunk.kernel = pa_kernel_find(kernel_of[mode]);
        size_t done = 0;
        while (done < total && atomic_load(&e->request) == request) {
            chunk.array[0] = base + done;
            chunk.n = total - done < LOAD_CHUNK ? total - done : LOAD_CHUNK;
            pa_slice_work(&chunk, 1);
            done += chunk.n;
        }
        if (done == total)
            atomic_store(&e->acknowledged, request); /* a full pass: steady state */
    }
}

static void ask(experiment *e, unsigned *generation, int mode)
{
    unsigned request = ++*generation * 4 + (unsigned)mode;
    atomic_store(&e->request, request);
    while (mode != LOAD_STOP && atomic_load(&e->acknowledged) != request)
        pa_spin_pause();
}

static void measuring_thread(experiment *e)
{
    pa_chaser chaser;
    if (e->why) {
        /* nothing to touch */
    } else if (e->latency) {
        pa_chain_build(&e->chain, e->buffer.base, e->bytes, pa_cache_line_bytes(), PA_BASE_PAGE,
                       PA_CHAIN_PAGE, 1);
    } else {
        e->slice = (pa_slice){.kernel = pa_kernel_find("read"), .n = e->bytes / sizeof(double)};
        e->slice.n -= e->slice.n % PA_KERNEL_GRAIN;
        e->slice.array[0] = (double *)e->buffer.base;
        pa_slice_init(&e->slice);
    }
#pragma omp barrier
    if (!e->why)
        e->why = pa_buffer_verify(&e->buffer);
    if (!e->why)
        e->why = pa_buffer_verify(&e->load_buffer);
#pragma omp barrier
    if (e->why)
        return;
    if (e->latency && pa_chain_check(&e->chain))
        pa_fail(3, "the chain is not one cycle through all %zu lines", e->chain.lines);
    void *context = e->latency ? (void *)&chaser : (void *)&e->slice;
    pa_sampler sampler = {.work = e->latency ? pa_chaser_work : pa_slice_work,
                          .min_seconds = e->min_seconds};
    unsigned generation = 0;
    ask(e, &generation, LOAD_NONE);
    if (e->latency) {
        pa_chaser_init(&chaser, &e->chain);
        pa_chaser_warm(&chaser);
    }
    e->repetitions = pa_sampler_calibrate(&sampler, context);
    for (int i = 0; i < e->samples; i++)
        for (int load = 0; load < LOADS; load++) {
            ask(e, &generation, load);
            e->seconds[load][i] = pa_sampler_sample(&sampler, context, e->repetitions);
        }
    ask(e, &generation, LOAD_STOP);
    if (e->latency ? pa_chaser_check(&chaser) != 0
                   : pa_slice_verify(&e->slice, e->failure, sizeof e->failure) != 0)
        pa_fail(3, "%s", e->latency ? "the pointer chase did not end where it should" : e->failure);
}

static void write_document(pa_json *json, const pa_args *args, const experiment *e, int load)
{
    pa_result_begin(json, "mem.contention", args);
    pa_json_key_string(json, "load", load_names[load]);
    pa_result_context(json, e->placement, 2, &e->buffer);
    if (e->why) {
        pa_result_not_measurable(json, e->why);
        pa_result_end(json);
        return;
    }
    double *values = pa_alloc((size_t)e->samples, sizeof *values, "values");
    double work = e->latency ? (double)(e->repetitions * PA_CHASE_BLOCK)
                             : (double)(pa_kernel_bytes_per_iteration(e->slice.kernel) *
                                        e->slice.n * e->repetitions);
    for (int i = 0; i < e->samples; i++)
        values[i] = e->latency ? e->seconds[load][i] * 1e9 / work : work / e->seconds[load][i];
    pa_result_samples(json, e->latency ? "latency_ns" : "bandwidth_Bps",
                      e->latency ? "ns" : "byte/s", values, e->seconds[load], e->samples);
    free(values);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    if (e->latency)
        pa_chase_derived_json(json, &e->chain, e->repetitions);
    else
        pa_kernel_derived_json(json, e->slice.kernel, e->slice.n, e->repetitions, 1);
    pa_json_key_int(json, "load_bytes", (long long)e->load_bytes);
    pa_json_end_object(json);
    pa_result_end(json);
}

/* One point of a series: both buffers mapped and first-touched anew, the three conditions
 * interleaved, three documents written, the buffers unmapped (as a launch of its own would). */
static void measure_point(pa_json *json, const pa_args *args, experiment *e, const int cpus[2])
{
    e->bytes = pa_arg_size(args, "bytes");
    e->why = pa_buffer_map(&e->buffer, e->bytes, PA_BASE_PAGE, PA_NODE_LOCAL);
    if (!e->why)
        e->why = pa_buffer_map(&e->load_buffer, e->load_bytes, PA_BASE_PAGE, PA_NODE_LOCAL);
    e->chain = (pa_chain){0};
    e->repetitions = 0;
    atomic_store(&e->request, 0);
    atomic_store(&e->acknowledged, 0);
    for (int t = 0; t < 2; t++)
        e->placement[t] = (pa_thread_placement){.cpu_requested = cpus[t]};
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
    {
        int t = pa_team_thread(2);
        pa_pin_self(cpus[t], e->placement[t].cpus_allowed, sizeof e->placement[t].cpus_allowed);
        if (t == 0)
            measuring_thread(e);
        else
            load_thread(e);
    }
    for (int load = 0; load < LOADS; load++)
        write_document(json, args, e, load);
    pa_buffer_unmap(&e->buffer);
    pa_buffer_unmap(&e->load_buffer);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-mem-contention",
                  "latency or bandwidth of one core while another streams through memory", params,
                  sizeof params / sizeof *params, argc, argv);
    int cpus[2] = {(int)pa_arg_int(&args, "cpu"), (int)pa_arg_int(&args, "load_cpu")};
    if (cpus[0] == cpus[1])
        pa_fail(2, "load_cpu must differ from cpu (both are %d)", cpus[0]);
    pa_cpus_validate(cpus, 2);
    static experiment e; /* zeroed; its atomics are reset for every point */
    e.latency = strcmp(pa_arg_text(&args, "measure"), "latency") == 0;
    e.load_bytes = pa_arg_size(&args, "load_bytes");
    e.samples = (int)pa_arg_int(&args, "samples");
    e.min_seconds = pa_arg_double(&args, "min_sample_time");
    pa_timer_init();
    for (int load = 0; load < LOADS; load++)
        e.seconds[load] = pa_calloc((size_t)e.samples, sizeof(double), "seconds");

    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    pa_json_begin_array(&json);
    int points = pa_arg_points(&args, "bytes");
    for (int k = 0; k < points; k++) {
        if (points > 1)
            pa_arg_select(&args, "bytes", k);
        measure_point(&json, &args, &e, cpus);
    }
    pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
