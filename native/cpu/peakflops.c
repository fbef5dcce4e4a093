/* pa-cpu-peakflops: the empirical peak floating-point rate of one kernel of flops_kernels.h (an
 * instruction set and a precision) on 1..N pinned threads, each thread running independent
 * registers-only recurrences, every sample a calibrated number of blocks timed from a barrier to
 * the next (sampler.h; Hoefler & Belli, SC15). The flops are declared once
 * (PA_FLOPS_PER_LANE_ITERATION per lane, accumulator and iteration) and every block's result is
 * checked against its closed form (flops_kernels.h): a wrong lane is exit 3, naming it.
 * Metric: flop_rate, the flops of all threads per second. `--kernels` lists the kernels. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "flops_kernels.h"
#include "numa_counters.h"
#include "result.h"
#include "sampler.h"
#include "timer.h"

static const pa_param params[] = {
    {"precision", PA_CHOICE, "double", "floating-point precision of the kernel", "double,single", 0,
     0},
    {"isa", PA_CHOICE, "widest",
     "instruction set (widest: the widest this CPU runs; avx2, avx512, neon, sve: FMA; scalar, "
     "sse: multiply + add)",
     PA_FLOPS_ISAS ",widest", 0, 0},
    {"cpus", PA_CPUS, "0", "PUs of the threads, one thread each", NULL, 0, 0},
    {"samples", PA_INT, "9", "timed samples after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
};

/* Start values 1 + m 2^-10 (m < 256), b = 2^-13, a = 1: a block adds 1024 x 2^-13 = 0.125, and
 * every value stays on the 2^-13 grid within [1, 1.375]: exact in single and double. */
#define START_STEP 0x1p-10
#define DELTA      0x1p-13

typedef struct {
    const pa_flops_kind *kind;
    int threads, samples, lanes;
    double min_seconds;
    const int *cpus;
    pa_thread_placement *placement;
    pa_flops_state *states;
    double *seconds;
    uint64_t blocks;
} run;

static void set_value(void *array, int is_double, size_t i, double value)
{
    if (is_double)
        ((double *)array)[i] = value;
    else
        ((float *)array)[i] = (float)value;
}

static double value_at(const void *array, int is_double, size_t i)
{
    return is_double ? ((const double *)array)[i] : (double)((const float *)array)[i];
}

/* One thread's state, allocated by that thread after pinning (first touch: its own memory).
 * PERFATLAS_PEAKFLOPS_CORRUPT=iteration (a block one iteration short) or =lane (the last lane
 * without its increment) spoils the last thread's kernel, so that the tests see the check fail. */
static void state_init(pa_flops_state *s, const run *r, int last_thread)
{
    int is_double = strcmp(r->kind->precision, "double") == 0;
    size_t w = (size_t)r->lanes, n = PA_FLOPS_ACCUMULATORS * w;
    size_t size = is_double ? sizeof(double) : sizeof(float);
    void *start = pa_alloc_aligned(64, n, size, "the start values");
    void *expected = pa_alloc_aligned(64, n, size, "the closed forms");
    void *scale = pa_alloc_aligned(64, w, size, "the factors");
    void *delta = pa_alloc_aligned(64, w, size, "the increments");
    s->last = pa_alloc_aligned(64, n, size, "the last accumulators");
    s->wrong = pa_calloc(w, 1, "the lane flags");
    for (size_t i = 0; i < n; i++) {
        double first = 1.0 + (double)(i % 256) * START_STEP;
        set_value(start, is_double, i, first);
        set_value(expected, is_double, i, first + PA_FLOPS_ITERATIONS * DELTA);
        set_value(s->last, is_double, i, 0.0);
    }
    for (size_t j = 0; j < w; j++) {
        set_value(scale, is_double, j, 1.0);
        set_value(delta, is_double, j, DELTA);
    }
    s->iterations = PA_FLOPS_ITERATIONS;
    const char *corrupt = getenv("PERFATLAS_PEAKFLOPS_CORRUPT");
    if (last_thread && corrupt && strcmp(corrupt, "iteration") == 0)
        s->iterations--;
    if (last_thread && corrupt && strcmp(corrupt, "lane") == 0)
        set_value(delta, is_double, w - 1, 0.0);
    s->start = start, s->expected = expected, s->scale = scale, s->delta = delta;
    s->lanes = r->lanes;
}

static void state_free(pa_flops_state *s)
{
    free((void *)s->start), free((void *)s->expected), free((void *)s->scale);
    free((void *)s->delta), free(s->last), free(s->wrong);
}

typedef struct {
    const pa_flops_kind *kind;
    pa_flops_state *state;
} work_context;

static void blocks_of(void *context, uint64_t blocks)
{
    work_context *c = context;
    c->kind->run(c->state, blocks);
}

static void thread_body(run *r, int t)
{
    pa_pin_self(r->cpus[t], r->placement[t].cpus_allowed, sizeof r->placement[t].cpus_allowed);
    state_init(&r->states[t], r, t == r->threads - 1);
    work_context context = {.kind = r->kind, .state = &r->states[t]};
    pa_sampler sampler = {.work = blocks_of, .min_seconds = r->min_seconds, .team = 1};
    uint64_t blocks = pa_sampler_calibrate(&sampler, &context);
    for (int i = 0; i < r->samples; i++) {
        double seconds = pa_sampler_sample(&sampler, &context, blocks);
#pragma omp master
        r->seconds[i] = seconds;
    }
#pragma omp master
    r->blocks = blocks;
}

/* The first wrong element of any thread, in thread, accumulator and lane order: exit 3. The last
 * block's values name the accumulator; an earlier block's error only its lane (the kernels OR
 * every accumulator's mismatches into one lane mask). */
static void check(const run *r)
{
    int is_double = strcmp(r->kind->precision, "double") == 0;
    size_t w = (size_t)r->lanes;
    for (int t = 0; t < r->threads; t++) {
        const pa_flops_state *s = &r->states[t];
        for (size_t i = 0; i < PA_FLOPS_ACCUMULATORS * w; i++) {
            double got = value_at(s->last, is_double, i),
                   want = value_at(s->expected, is_double, i);
            if (got != want)
                pa_fail(3,
                        "%s %s kernel failed its check: thread %d (PU %d), accumulator %zu, lane "
                        "%zu ended its last block at %.17g, not at %.17g = %.17g + %d x 2^-13 "
                        "(its closed form): an iteration or a lane was skipped",
                        r->kind->isa, r->kind->precision, t, r->cpus[t], i / w, i % w, got, want,
                        value_at(s->start, is_double, i), PA_FLOPS_ITERATIONS);
        }
        for (size_t j = 0; j < w; j++)
            if (s->wrong[j])
                pa_fail(3,
                        "%s %s kernel failed its check: thread %d (PU %d), lane %zu of an "
                        "accumulator ended an earlier block off its closed form (start + %d x "
                        "2^-13): an iteration or a lane was skipped",
                        r->kind->isa, r->kind->precision, t, r->cpus[t], j, PA_FLOPS_ITERATIONS);
    }
}

/* The nominal clock where the machine states one: cpufreq's base_frequency (intel_pstate,
 * amd-pstate), else the "@ 2.60GHz" of the CPU's model name; never a guess. */
static double nominal_clock_hz(int cpu, const char **source)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/base_frequency", cpu);
    FILE *f = fopen(path, "r");
    double khz = 0;
    if (f) {
        int found = fscanf(f, "%lf", &khz) == 1 && khz > 0;
        fclose(f);
        if (found) {
            *source = "cpufreq base_frequency";
            return khz * 1e3;
        }
    }
    f = fopen("/proc/cpuinfo", "r");
    char line[512];
    double ghz = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, " @ ");
        if (strncmp(line, "model name", 10) == 0 && at && sscanf(at, " @ %lfGHz", &ghz) == 1)
            break;
        ghz = 0;
    }
    if (f)
        fclose(f);
    *source = ghz > 0 ? "the CPU's model name" : NULL;
    return ghz * 1e9;
}

static void write_derived(pa_json *json, const run *r, double flops_per_sample)
{
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "isa", r->kind->isa);
    pa_json_key_string(json, "precision", r->kind->precision);
    pa_json_key_string(json, "operations", r->kind->operations);
    pa_json_key_int(json, "lanes", r->lanes);
    pa_json_key_int(json, "vector_bits",
                    r->lanes * (strcmp(r->kind->precision, "double") == 0 ? 64 : 32));
    pa_json_key_int(json, "accumulators", PA_FLOPS_ACCUMULATORS);
    pa_json_key_int(json, "iterations_per_block", PA_FLOPS_ITERATIONS);
    pa_json_key_int(json, "flops_per_lane_iteration", PA_FLOPS_PER_LANE_ITERATION);
    pa_json_key_int(json, "flops_per_block",
                    (long long)PA_FLOPS_ACCUMULATORS * PA_FLOPS_ITERATIONS * r->lanes *
                        PA_FLOPS_PER_LANE_ITERATION);
    pa_json_key_int(json, "blocks_per_sample", (long long)r->blocks);
    pa_json_key_double(json, "flops_per_sample", flops_per_sample);
    pa_json_key_int(json, "threads", r->threads);
    const char *source = NULL;
    double hz = nominal_clock_hz(r->cpus[0], &source);
    if (source) {
        pa_json_key_double(json, "nominal_clock_hz", hz);
        pa_json_key_string(json, "nominal_clock_source", source);
    } else {
        pa_json_key(json, "nominal_clock_hz");
        pa_json_null(json);
        pa_json_key_string(json, "nominal_clock_source",
                           "not reported by this machine (no cpufreq base_frequency, no clock "
                           "in the CPU's model name)");
    }
    pa_json_key_string(json, "check",
                       "every block, every accumulator and lane: start + 1024 x 2^-13 exactly");
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

/* `--kernels`: every kernel of this build and whether this CPU runs it, as JSON. */
static void write_catalog(void)
{
    pa_json json;
    pa_json_init(&json, stdout);
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "widest", pa_flops_widest());
    pa_json_key_int(&json, "accumulators", PA_FLOPS_ACCUMULATORS);
    pa_json_key_int(&json, "iterations_per_block", PA_FLOPS_ITERATIONS);
    pa_json_key_int(&json, "flops_per_lane_iteration", PA_FLOPS_PER_LANE_ITERATION);
    pa_json_key(&json, "kernels");
    pa_json_begin_array(&json);
    for (int i = 0; pa_flops_kind_at(i); i++) {
        const pa_flops_kind *kind = pa_flops_kind_at(i);
        const char *lacks = pa_flops_lacks(kind);
        pa_json_begin_object(&json);
        pa_json_key_string(&json, "isa", kind->isa);
        pa_json_key_string(&json, "precision", kind->precision);
        pa_json_key_string(&json, "operations", kind->operations);
        pa_json_key_int(&json, "lanes", pa_flops_lanes(kind));
        if (lacks)
            pa_json_key_string(&json, "not_measurable", lacks);
        else {
            pa_json_key(&json, "not_measurable");
            pa_json_null(&json);
        }
        pa_json_end_object(&json);
    }
    pa_json_end_array(&json);
    pa_json_end_object(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the kernel catalog");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--kernels") == 0) {
        write_catalog();
        return 0;
    }
    pa_args args;
    pa_args_parse(&args, "pa-cpu-peakflops", "peak floating-point rate of FMA and mul+add kernels",
                  params, sizeof params / sizeof *params, argc, argv);
    const char *isa = pa_arg_text(&args, "isa");
    if (strcmp(isa, "widest") == 0)
        isa = pa_flops_widest();
    run r = {.kind = pa_flops_find(isa, pa_arg_text(&args, "precision")),
             .samples = (int)pa_arg_int(&args, "samples"),
             .min_seconds = pa_arg_double(&args, "min_sample_time")};
    const char *lacks = pa_flops_lacks(r.kind);
    if (lacks) /* asked for explicitly: refused; perfatlas stores "not measurable here" instead */
        pa_fail(2, "isa=%s is not measurable here: %s", isa, lacks);
    r.lanes = pa_flops_lanes(r.kind);
    r.cpus = pa_arg_cpus(&args, "cpus", &r.threads);
    pa_cpus_validate(r.cpus, r.threads);
    pa_timer_init();
    pa_numa_counters_start(); /* before the OpenMP team, which then counts with it */
    r.placement = pa_calloc((size_t)r.threads, sizeof *r.placement, "placement");
    r.states = pa_calloc((size_t)r.threads, sizeof *r.states, "the kernel states");
    r.seconds = pa_calloc((size_t)r.samples, sizeof *r.seconds, "seconds");
    for (int t = 0; t < r.threads; t++)
        r.placement[t] = (pa_thread_placement){.cpu_requested = r.cpus[t]};
    omp_set_dynamic(0);
#pragma omp parallel num_threads(r.threads)
    thread_body(&r, pa_team_thread(r.threads));
    check(&r);

    double flops_per_sample = (double)r.threads * (double)r.blocks * PA_FLOPS_ACCUMULATORS *
                              PA_FLOPS_ITERATIONS * r.lanes * PA_FLOPS_PER_LANE_ITERATION;
    double *rate = pa_alloc((size_t)r.samples, sizeof *rate, "the flop rates");
    for (int i = 0; i < r.samples; i++)
        rate[i] = flops_per_sample / r.seconds[i];
    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    pa_result_begin(&json, "cpu.peakflops", &args);
    pa_json_key_int(&json, "threads", r.threads);
    pa_result_context(&json, r.placement, r.threads, NULL);
    pa_result_samples(&json, "flop_rate", "flop/s", rate, r.seconds, r.samples);
    write_derived(&json, &r, flops_per_sample);
    pa_result_end(&json);
    for (int t = 0; t < r.threads; t++)
        state_free(&r.states[t]);
    free(rate), free(r.seconds), free(r.states), free(r.placement);
    return pa_json_finish(&json) ? 2 : 0;
}
