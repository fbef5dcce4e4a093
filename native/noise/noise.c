/* pa-noise: computational noise of the OS and the machine (LANL Lightning report, sec. 3).
 *
 * One thread pinned to each PU of `cpus`; all measure at once, so "one core" and "all cores at
 * once" are the same program with a different list. The work is a dependent chain of 64-bit
 * LCG steps (x = a x + c): pure integer compute, no memory traffic, nothing the compiler can
 * shorten; its final value is checked against the closed-form jump-ahead of the LCG (Brown,
 * "Random number generation with arbitrary strides", 1994), so the work verifiably ran.
 *
 * method=fwq -- fixed work quantum (Sottile & Minnich, "Analysis of microbenchmarks for
 *   performance tuning of clusters", Cluster 2004; LLNL FWQ): the same amount of work, calibrated
 *   to `quantum` of undisturbed time, is repeated back to back for `duration`; every quantum's
 *   duration is kept. One timer read separates consecutive quanta, so quantum i ends at
 *   series_start_ns + (the sum of the first i+1 durations): the samples are a time series.
 *   Undisturbed time = the smallest quantum; detour_i = t_i - t_min (analysis in Python).
 * method=ftq -- fixed time quantum (Sottile & Minnich, FTQ): time is cut into intervals of
 *   `quantum` on a fixed grid from the start; the number of small work units completed in each
 *   interval is kept (a unit finishing past a boundary counts in the interval it finished in;
 *   an interval swallowed whole by a detour counts 0). Lost work = max count - count.
 *
 * One result document per measuring PU (an array when there are several), params.cpu naming it. */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "json.h"
#include "result.h"
#include "timer.h"

static const pa_param params[] = {
    {"method", PA_CHOICE, "fwq",
     "fwq: fixed work quantum, every quantum's duration is kept; ftq: fixed time quantum, the "
     "work done in every interval is kept",
     "fwq,ftq", 0, 0},
    {"cpus", PA_CPUS, "0", "PUs to measure, one pinned thread each, all at the same time", NULL, 0,
     0},
    {"duration", PA_DURATION, "2s", "how long every thread measures", NULL, 1e-3, 3600},
    {"quantum", PA_DURATION, "0",
     "fwq: undisturbed duration of one work quantum; ftq: the interval; 0 means the method's "
     "default (fwq 100us, ftq 1ms)",
     NULL, 0, 10},
};

#define LCG_A                  6364136223846793005ull /* Knuth's MMIX multiplier */
#define LCG_C                  1442695040888963407ull
#define FWQ_DEFAULT_QUANTUM    100e-6
#define FTQ_DEFAULT_INTERVAL   1e-3
#define FTQ_UNITS_PER_INTERVAL 1000      /* lost work is resolved to 1/1000 of an interval */
#define MIN_QUANTUM            1e-6      /* fwq */
#define MIN_INTERVAL           100e-6    /* ftq: units of at least 100 ns */
#define MAX_SAMPLES            10000000L /* per thread; the Python side asks for far fewer */

/* `iterations` dependent LCG steps. The empty asm keeps x in a register and opaque at every
 * step, so the loop can be neither vectorized nor replaced by its closed form. */
static inline uint64_t lcg_run(uint64_t x, uint64_t iterations)
{
    for (uint64_t i = 0; i < iterations; i++) {
        x = x * LCG_A + LCG_C;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* The LCG advanced by `steps` in O(log steps): the check that the timed loops ran in full. */
static uint64_t lcg_jump(uint64_t x, uint64_t steps)
{
    uint64_t mult = 1, plus = 0, step_mult = LCG_A, step_plus = LCG_C;
    for (; steps; steps >>= 1) {
        if (steps & 1) {
            mult *= step_mult;
            plus = plus * step_mult + step_plus;
        }
        step_plus *= step_mult + 1;
        step_mult *= step_mult;
    }
    return mult * x + plus;
}

typedef struct {
    int cpu;
    pa_thread_placement placement;
    uint64_t seed, state, iterations; /* LCG start, end, and steps taken */
    uint64_t start_ticks, stop_ticks;
    long n;              /* samples kept */
    long long *values;   /* fwq: quantum durations in ns; ftq: units per interval */
    uint64_t *durations; /* fwq: quantum durations in ticks */
} worker;

typedef struct {
    int fwq;
    double quantum, duration; /* seconds */
    uint64_t work;            /* LCG steps per quantum (fwq) or per unit (ftq) */
    double work_seconds;      /* its undisturbed duration at calibration */
    double timer_read_ns;
    long capacity; /* samples each thread may keep */
    atomic_int calibrated;
} experiment;

/* Fastest of `trials` runs of `iterations` steps, in seconds. */
static double fastest(uint64_t *x, uint64_t iterations, int trials)
{
    double best = INFINITY;
    for (int t = 0; t < trials; t++) {
        uint64_t start = pa_ticks();
        *x = lcg_run(*x, iterations);
        double seconds = pa_ticks_to_seconds(pa_ticks() - start);
        best = seconds < best ? seconds : best;
    }
    return best;
}

/* Steps that take `target` seconds undisturbed. The chain is strictly linear in its length, so
 * it is timed on a reference of at most 1 ms (fastest of 21 runs, twice refined) and scaled. */
static uint64_t calibrate(double target, double *predicted)
{
    uint64_t x = 1, steps = 64;
    double reference = target < 1e-3 ? target : 1e-3, seconds;
    while ((seconds = fastest(&x, steps, 3)) < reference / 4)
        steps *= 2;
    for (int round = 0; round < 3; round++) {
        uint64_t refined = (uint64_t)ceil((double)steps * reference / seconds);
        double again = fastest(&x, refined, 21);
        if (again <= 0) /* within one tick of a coarse counter (aarch64's, 62.5 MHz under qemu):
                           keep the last timed length rather than divide by zero */
            break;
        steps = refined, seconds = again;
    }
    uint64_t scaled = (uint64_t)llround((double)steps * target / seconds);
    if (scaled < 1)
        scaled = 1;
    *predicted = seconds * (double)scaled / (double)steps;
    return scaled;
}

/* Mean cost of one timer read (a unit of FTQ and the seam between FWQ quanta contain one). */
static double timer_read_ns(void)
{
    enum {
        reads = 4096
    };
    uint64_t sink = 0, start = pa_ticks();
    for (int i = 0; i < reads; i++)
        sink ^= pa_ticks();
    double ns = pa_ticks_to_seconds(pa_ticks() - start) * 1e9 / (reads + 1);
    __asm__ volatile("" : : "r"(sink));
    return ns;
}

static void fwq(const experiment *e, worker *w)
{
    uint64_t x = w->seed, limit = (uint64_t)(e->duration / pa_ticks_to_seconds(1));
    long n = 0;
    uint64_t start = pa_ticks(), previous = start;
    while (n < e->capacity) {
        x = lcg_run(x, e->work);
        uint64_t now = pa_ticks();
        w->durations[n++] = now - previous;
        previous = now;
        if (now - start >= limit)
            break;
    }
    w->start_ticks = start;
    w->stop_ticks = previous;
    w->n = n;
    w->state = x;
    w->iterations = (uint64_t)n * e->work;
}

static void ftq(const experiment *e, worker *w)
{
    uint64_t x = w->seed, units = 0;
    uint64_t interval = (uint64_t)llround(e->quantum / pa_ticks_to_seconds(1));
    long n = 0, intervals = e->capacity;
    long long count = 0;
    uint64_t start = pa_ticks(), deadline = start + interval, now = start;
    while (n < intervals) {
        x = lcg_run(x, e->work);
        units++;
        count++;
        now = pa_ticks();
        while (now >= deadline && n < intervals) { /* a long detour may close several */
            w->values[n++] = count;
            count = 0;
            deadline += interval;
        }
    }
    w->start_ticks = start;
    w->stop_ticks = now;
    w->n = n;
    w->state = x;
    w->iterations = units * e->work;
}

static void write_document(pa_json *json, const pa_args *args, const experiment *e,
                           const worker *workers, int nthreads, int t)
{
    const worker *w = &workers[t];
    uint64_t origin = workers[0].start_ticks;
    for (int i = 1; i < nthreads; i++)
        origin = workers[i].start_ticks < origin ? workers[i].start_ticks : origin;
    pa_thread_placement placement[nthreads];
    for (int i = 0; i < nthreads; i++)
        placement[i] = workers[i].placement;

    pa_result_begin(json, "noise", args);
    pa_json_key_int(json, "cpu", w->cpu);
    pa_result_context(json, placement, nthreads, NULL);
    const char *metric = e->fwq ? "quantum_ns" : "work_per_interval";
    pa_json_key(json, "samples");
    pa_json_begin_object(json);
    pa_json_key(json, metric);
    pa_json_int_array(json, w->values, w->n);
    pa_json_end_object(json);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    pa_json_key_string(json, metric, e->fwq ? "ns" : "work units");
    pa_json_end_object(json);

    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "method", e->fwq ? "fwq" : "ftq");
    pa_json_key_string(json, "work",
                       "dependent 64-bit LCG steps (integer multiply-add), no memory traffic");
    pa_json_key_int(json, e->fwq ? "steps_per_quantum" : "steps_per_unit", (long long)e->work);
    pa_json_key_double(json, e->fwq ? "quantum_ns_calibrated" : "unit_ns_calibrated",
                       e->work_seconds * 1e9);
    if (!e->fwq) {
        pa_json_key_double(json, "interval_ns", e->quantum * 1e9);
    }
    pa_json_key_int(json, "samples", w->n);
    /* from the first thread's start: a common origin */
    pa_json_key_double(json, "series_start_ns", pa_ticks_to_seconds(w->start_ticks - origin) * 1e9);
    pa_json_key_double(json, "series_seconds", pa_ticks_to_seconds(w->stop_ticks - w->start_ticks));
    pa_json_key_bool(json, "back_to_back", e->fwq); /* fwq: quantum i+1 starts where i ends */
    pa_json_key_double(json, "timer_read_ns", e->timer_read_ns);
    pa_json_key_int(json, "threads_at_once", nthreads);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
    pa_result_end(json);
}

/* params.quantum carries the value used, also when the method's default was asked (0). */
static void record_quantum(pa_args *args, double seconds)
{
    for (int i = 0; i < args->count; i++)
        if (strcmp(args->params[i].name, "quantum") == 0)
            args->values[i].real = seconds;
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-noise",
                  "OS noise by fixed work quanta (fwq) or fixed time quanta (ftq), pinned, one or "
                  "all PUs at once",
                  params, sizeof params / sizeof *params, argc, argv);
    int ncpus;
    const int *cpus = pa_arg_cpus(&args, "cpus", &ncpus);
    pa_cpus_validate(cpus, ncpus);
    experiment e = {.fwq = strcmp(pa_arg_text(&args, "method"), "fwq") == 0,
                    .duration = pa_arg_double(&args, "duration"),
                    .quantum = pa_arg_double(&args, "quantum")};
    if (e.quantum == 0)
        e.quantum = e.fwq ? FWQ_DEFAULT_QUANTUM : FTQ_DEFAULT_INTERVAL;
    if (e.fwq && e.quantum < MIN_QUANTUM)
        pa_fail(2, "quantum=%s is below 1us: the timer reads would be the work (use 1us or more)",
                pa_arg_text(&args, "quantum"));
    if (!e.fwq && e.quantum < MIN_INTERVAL)
        pa_fail(2,
                "quantum=%s is below 100us: an ftq interval holds %d work units, each ending "
                "with a timer read (use 100us or more)",
                pa_arg_text(&args, "quantum"), FTQ_UNITS_PER_INTERVAL);
    if (e.quantum > e.duration)
        pa_fail(2, "quantum=%s is longer than duration=%s: give a duration of many quanta",
                pa_arg_text(&args, "quantum"), pa_arg_text(&args, "duration"));
    double expected = e.duration / e.quantum;
    /* fwq: quanta run at least ~quantum each; room for 25 % more in case calibration ran slow */
    e.capacity = e.fwq ? (long)ceil(expected * 1.25) + 64 : (long)llround(expected);
    if (e.capacity < 1)
        e.capacity = 1;
    if (e.capacity > MAX_SAMPLES)
        pa_fail(2,
                "duration/quantum is %.0f samples per PU, more than %ld: raise quantum= or "
                "shorten duration=",
                expected, MAX_SAMPLES);
    record_quantum(&args, e.quantum);
    pa_timer_init();

    worker *workers = pa_calloc((size_t)ncpus, sizeof *workers, "the workers");
    for (int t = 0; t < ncpus; t++) {
        workers[t].cpu = cpus[t];
        workers[t].placement.cpu_requested = cpus[t];
        workers[t].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
        workers[t].values = pa_alloc((size_t)e.capacity, sizeof(long long), "the samples");
        if (e.fwq)
            workers[t].durations =
                pa_alloc((size_t)e.capacity, sizeof(uint64_t), "the quantum durations");
    }
    omp_set_dynamic(0);
#pragma omp parallel num_threads(ncpus)
    {
        int t = pa_team_thread(ncpus);
        worker *w = &workers[t];
        pa_pin_self(w->cpu, w->placement.cpus_allowed, sizeof w->placement.cpus_allowed);
#pragma omp barrier
        if (t == 0) { /* the others keep their cores busy meanwhile, as during the measurement */
            double target = e.fwq ? e.quantum : e.quantum / FTQ_UNITS_PER_INTERVAL;
            e.work = calibrate(target, &e.work_seconds);
            e.timer_read_ns = timer_read_ns();
            atomic_store(&e.calibrated, 1);
        } else {
            uint64_t x = 1;
            while (!atomic_load(&e.calibrated))
                x = lcg_run(x, 256);
            __asm__ volatile("" : : "r"(x));
        }
#pragma omp barrier
        if (e.fwq)
            fwq(&e, w);
        else
            ftq(&e, w);
    }

    for (int t = 0; t < ncpus; t++) {
        worker *w = &workers[t];
        if (w->state != lcg_jump(w->seed, w->iterations))
            pa_fail(3,
                    "the work on cpu %d did not end where %llu LCG steps lead: it did not run "
                    "as counted",
                    w->cpu, (unsigned long long)w->iterations);
        if (e.fwq)
            for (long i = 0; i < w->n; i++)
                w->values[i] = llround(pa_ticks_to_seconds(w->durations[i]) * 1e9);
    }
    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    if (ncpus > 1)
        pa_json_begin_array(&json);
    for (int t = 0; t < ncpus; t++)
        write_document(&json, &args, &e, workers, ncpus, t);
    if (ncpus > 1)
        pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
