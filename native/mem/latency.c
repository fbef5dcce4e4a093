/* pa-mem-latency: load-to-use latency of a working set by pointer chasing (chase.h).
 *
 * With one PU the thread pinned there allocates, first-touches (builds the chain) and measures.
 * With two PUs A,B (the two-thread method) the thread on A allocates and first-touches; then A
 * measures while B spins, and B measures while A spins, so both latencies are to the very same
 * memory: local and remote to the owner's caches and NUMA node. One document per measuring PU.
 *
 * bytes= may list a series of working sets (bytes=16KiB,32KiB,...): one process measures them in
 * order, each point with its own buffer, chain, warm lap, calibration, samples and check, and
 * writes its documents as separate launches would, all in one JSON array (docs/contract.md). */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "chase.h"
#include "memory.h"
#include "numa_counters.h"
#include "result.h"
#include "sampler.h"
#include "spin.h"
#include "timer.h"

static const pa_param params[] = {
    {"bytes", PA_SIZES, "64MiB",
     "working set, one chain element per cache line; a comma-separated list measures a series",
     NULL, 4096, 0x1p37},
    {"chain", PA_CHOICE, "page",
     "page: lines in random order within each page, pages in random order (latency without TLB "
     "misses); random: one random cycle over all lines (TLB misses included)",
     "page,random", 0, 0},
    {"cpus", PA_CPUS, "0",
     "measuring PU; or two PUs A,B: A allocates and first-touches, then A and B each measure", NULL,
     0, 0},
    {"node", PA_NODE, "local",
     "memory policy: local (first touch by the owner), a NUMA node number (bind) or interleave",
     NULL, 0, 0},
    {"page", PA_SIZE, "4KiB", "page size of the buffer", "4KiB,2MiB", 0, 0},
    {"samples", PA_INT, "9", "timed samples after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
    {"seed", PA_INT, "1", "seed of the random chain order", NULL, 0, 0x1p62},
};

typedef struct {
    int samples;
    double *seconds, *latency_ns;
    uint64_t repetitions;
} measurement;

/* Warm lap, calibration, samples, then the check that the chase ran as counted. */
static void measure(const pa_chain *chain, double min_seconds, measurement *m)
{
    pa_chaser chaser;
    pa_chaser_init(&chaser, chain);
    pa_chaser_warm(&chaser);
    pa_sampler sampler = {.work = pa_chaser_work, .min_seconds = min_seconds, .team = 0};
    m->repetitions = pa_sampler_calibrate(&sampler, &chaser);
    for (int i = 0; i < m->samples; i++) {
        m->seconds[i] = pa_sampler_sample(&sampler, &chaser, m->repetitions);
        m->latency_ns[i] = m->seconds[i] * 1e9 / (double)(m->repetitions * PA_CHASE_BLOCK);
    }
    if (pa_chaser_check(&chaser))
        pa_fail(3, "the pointer chase did not end where %llu loads lead: the chain is corrupt",
                (unsigned long long)chaser.loads);
}

static void write_document(pa_json *json, const pa_args *args, int cpu, int owner,
                           const pa_thread_placement *threads, int nthreads,
                           const pa_buffer *buffer, const char *why, const pa_chain *chain,
                           const measurement *m)
{
    pa_result_begin(json, "mem.latency", args);
    pa_json_key_int(json, "cpu", cpu);
    pa_json_key_int(json, "owner", owner);
    pa_result_context(json, threads, nthreads, buffer);
    if (why) {
        pa_result_not_measurable(json, why);
    } else {
        pa_result_samples(json, "latency_ns", "ns", m->latency_ns, m->seconds, m->samples);
        pa_json_key(json, "derived");
        pa_json_begin_object(json);
        pa_chase_derived_json(json, chain, m->repetitions);
        pa_json_end_object(json);
    }
    pa_result_end(json);
}

/* One point of the series: map, build the chain (first touch by the owner), let each measuring
 * thread measure in turn, write one document per measuring PU, unmap. */
static void measure_point(pa_json *json, const pa_args *args, const int *cpus, int ncpus)
{
    size_t bytes = pa_arg_size(args, "bytes"), page = pa_arg_size(args, "page");
    pa_chain_kind kind =
        strcmp(pa_arg_text(args, "chain"), "page") ? PA_CHAIN_RANDOM : PA_CHAIN_PAGE;
    double min_seconds = pa_arg_double(args, "min_sample_time");
    int samples = (int)pa_arg_int(args, "samples");
    pa_buffer buffer;
    const char *why = pa_buffer_map(&buffer, bytes, page, (int)pa_arg_int(args, "node"));

    pa_chain chain = {0};
    pa_thread_placement threads[2];
    measurement results[2];
    for (int t = 0; t < ncpus; t++) {
        threads[t].cpu_requested = cpus[t];
        results[t].samples = samples;
        results[t].seconds = pa_calloc((size_t)samples, sizeof(double), "seconds");
        results[t].latency_ns = pa_calloc((size_t)samples, sizeof(double), "latency_ns");
    }
    atomic_int turn = 0; /* which thread measures now */
    omp_set_dynamic(0);
#pragma omp parallel num_threads(ncpus)
    {
        int t = pa_team_thread(ncpus);
        pa_pin_self(cpus[t], threads[t].cpus_allowed, sizeof threads[t].cpus_allowed);
        if (t == 0 && !why) {
            pa_chain_build(&chain, buffer.base, bytes, pa_cache_line_bytes(), page, kind,
                           (uint64_t)pa_arg_int(args, "seed"));
            why = pa_buffer_verify(&buffer);
            if (pa_chain_check(&chain))
                pa_fail(3, "the chain is not one cycle through all %zu lines", chain.lines);
        }
#pragma omp barrier
        for (int m = 0; m < ncpus && !why; m++) {
            if (t == m) {
                measure(&chain, min_seconds, &results[t]);
                atomic_store(&turn, m + 1);
            } else {
                while (atomic_load(&turn) <= m) /* keep this core busy, not idle */
                    pa_spin_pause();
            }
#pragma omp barrier
        }
    }
    for (int t = 0; t < ncpus; t++) {
        write_document(json, args, cpus[t], cpus[0], threads, ncpus, &buffer, why, &chain,
                       &results[t]);
        free(results[t].seconds);
        free(results[t].latency_ns);
    }
    pa_buffer_unmap(&buffer);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-mem-latency", "memory latency by pointer chasing", params,
                  sizeof params / sizeof *params, argc, argv);
    int ncpus;
    const int *cpus = pa_arg_cpus(&args, "cpus", &ncpus);
    if (ncpus > 2)
        pa_fail(2, "cpus lists %d PUs: give one PU, or two (owner,other) for the two-thread method",
                ncpus);
    pa_cpus_validate(cpus, ncpus);
    pa_timer_init();
    pa_numa_counters_start(); /* before the OpenMP team, which then counts with it */

    int points = pa_arg_points(&args, "bytes");
    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    if (ncpus > 1 || points > 1)
        pa_json_begin_array(&json);
    for (int k = 0; k < points; k++) {
        if (points > 1)
            pa_arg_select(&args, "bytes", k);
        measure_point(&json, &args, cpus, ncpus);
    }
    if (ncpus > 1 || points > 1)
        pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
