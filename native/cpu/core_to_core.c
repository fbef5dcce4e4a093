/* pa-cpu-core-to-core: the one-way latency of a cache-line transfer between every pair of CPUs,
 * in one launch (the "ping-pong" of Molka, Hackenberg, Schöne and Müller, "Memory performance and
 * cache coherency effects on an Intel Nehalem multiprocessor system", PACT 2009; the matrix of
 * nviennot/core-to-core-latency).
 *
 * Two threads, pinned to the two CPUs of a pair, bounce one cache line holding a sequence number
 * (C11 atomics, acquire/release): the initiator writes an odd number 2r+1 and waits for 2r+2, the
 * responder waits for each odd number and answers it with the next. A round trip moves the line
 * there and back, so one-way latency = round-trip time / 2. The line is aligned to and alone in
 * 128 bytes, so that the adjacent-line prefetcher of x86 cores (which fetches lines in 128-byte
 * pairs) brings no other data into play. The responder checks that it saw every sequence number
 * once and in order, the initiator that every round trip was answered: otherwise exit 3.
 *
 * Each pair is calibrated (round trips per sample lasting min_sample_time), then its samples are
 * taken with the two CPUs taking turns as initiator (directions=both), so that a load on the
 * machine hits both directions alike. One document per (initiator, responder), written as soon as
 * its pair is measured. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "numa_counters.h"
#include "result.h"
#include "timer.h"

static const pa_param params[] = {
    {"cpus", PA_CPUS, "0,1", "the CPUs (PUs) whose pairs are measured, at least two", NULL, 0, 0},
    {"pairs", PA_CHOICE, "all",
     "all: every pair of cpus, n(n-1)/2; first: the first of cpus against each other one",
     "all,first", 0, 0},
    {"directions", PA_CHOICE, "both",
     "both: each CPU of a pair initiates in turn (two results per pair); one: the first initiates",
     "both,one", 0, 0},
    {"samples", PA_INT, "15", "timed samples of each direction of a pair", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "200us", "shortest duration of one sample", NULL, 0, 3600},
};

enum {
    LINE_ALIGN = 128
};
#define STOP UINT64_MAX

/* The bounced line, alone in its 128 bytes; what else the threads share lies beyond it. */
typedef struct {
    _Alignas(LINE_ALIGN) _Atomic uint64_t sequence;
    char rest[LINE_ALIGN - sizeof(uint64_t)];
} bounced_line;

typedef struct {
    bounced_line line;
    _Alignas(LINE_ALIGN) uint64_t round_trips; /* of the next session, set by thread 0 */
    int initiator;                             /* team thread that initiates the next session */
    double seconds;                            /* of the last session, from its initiator */
    uint64_t answers;                          /* answers the responder gave in the last session */
    uint64_t out_of_order;                     /* a number the responder saw out of order, or 0 */
    uint64_t last_written;                     /* what the initiator saw last before STOP */
} court;

/* PERFATLAS_CORE_TO_CORE_SKIP=1: the initiator skips one sequence number in its first session, so
 * that tests see the responder's check fail (exit 3). */
static int skip_once;

static double initiate(court *c, uint64_t round_trips)
{
    uint64_t skip = skip_once ? 2 : 0;
    skip_once = 0;
    uint64_t start = pa_ticks();
    uint64_t expected = 0;
    for (uint64_t r = 0; r < round_trips; r++) {
        uint64_t sent = expected + 1 + skip;
        skip = 0;
        atomic_store_explicit(&c->line.sequence, sent, memory_order_release);
        uint64_t seen;
        while ((seen = atomic_load_explicit(&c->line.sequence, memory_order_acquire)) == sent)
            ;
        expected = seen;
        if (seen != sent + 1)
            break; /* the responder stopped on a number out of order: checked by the caller */
    }
    uint64_t end = pa_ticks();
    c->last_written = expected;
    atomic_store_explicit(&c->line.sequence, STOP, memory_order_release);
    return pa_ticks_to_seconds(end - start);
}

/* Answers every odd number with the next until STOP; a number that is not the next one ends it. */
static void respond(court *c)
{
    uint64_t last = 0, answers = 0;
    for (;;) {
        uint64_t seen;
        while ((seen = atomic_load_explicit(&c->line.sequence, memory_order_acquire)) == last)
            ;
        if (seen == STOP)
            break;
        if (seen != last + 1) {
            c->out_of_order = seen;
            atomic_store_explicit(&c->line.sequence, seen + 2, memory_order_release);
            while (atomic_load_explicit(&c->line.sequence, memory_order_acquire) != STOP)
                ;
            break;
        }
        last = seen + 1;
        atomic_store_explicit(&c->line.sequence, last, memory_order_release);
        answers++;
    }
    c->answers = answers;
}

typedef struct {
    int cpu[2];                     /* [0] initiates first */
    pa_thread_placement placed[2];  /* as read back */
    double *seconds[2], *values[2]; /* per direction: [0] cpu[0] initiates, [1] cpu[1] */
    uint64_t round_trips;           /* per sample */
    uint64_t answered[2], sent[2];  /* every session of the direction, calibration included */
} pair;

/* One session, called by both threads of the team: `initiator` bounces, the other answers. */
static double session(court *c, int me, int initiator, uint64_t round_trips, pair *p)
{
    if (me == 0) {
        atomic_store_explicit(&c->line.sequence, 0, memory_order_relaxed);
        c->out_of_order = 0;
    }
#pragma omp barrier
    if (me == initiator)
        c->seconds = initiate(c, round_trips);
    else
        respond(c);
#pragma omp barrier
    if (me == 0) {
        int d = initiator;
        p->sent[d] += round_trips;
        p->answered[d] += c->answers;
        if (c->out_of_order)
            pa_fail(3,
                    "cpu %d answering cpu %d saw sequence number %llu after %llu: a number was "
                    "skipped",
                    p->cpu[1 - d], p->cpu[d], (unsigned long long)c->out_of_order,
                    (unsigned long long)(2 * c->answers));
        if (c->answers != round_trips || c->last_written != 2 * round_trips)
            pa_fail(3, "cpu %d answered %llu of the %llu round trips of cpu %d", p->cpu[1 - d],
                    (unsigned long long)c->answers, (unsigned long long)round_trips, p->cpu[d]);
    }
#pragma omp barrier
    return c->seconds;
}

/* Round trips per sample: grown until the fastest of three sessions initiated by cpu[0] lasts
 * min_seconds (the fastest, so that a thread preempted on a loaded machine does not stop the
 * growth early; the sessions are the warm-up too). */
static uint64_t calibrate(court *c, int me, double min_seconds, pair *p)
{
    uint64_t round_trips = 16;
    for (;;) {
        double fastest = session(c, me, 0, round_trips, p);
        for (int i = 0; i < 2; i++) {
            double seconds = session(c, me, 0, round_trips, p);
            fastest = seconds < fastest ? seconds : fastest;
        }
        if (fastest >= min_seconds || round_trips >= (UINT64_C(1) << 40))
            return round_trips;
        double grow = fastest > 0 ? 1.25 * min_seconds / fastest : 16;
        grow = grow < 2 ? 2 : grow > 16 ? 16 : grow;
        round_trips = (uint64_t)((double)round_trips * grow);
    }
}

static void measure_pair(court *c, pair *p, int samples, int both, double min_seconds)
{
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
    {
        int me = pa_team_thread(2);
        p->placed[me].cpu_requested = p->cpu[me];
        pa_pin_self(p->cpu[me], p->placed[me].cpus_allowed, sizeof p->placed[me].cpus_allowed);
        uint64_t round_trips = calibrate(c, me, min_seconds, p);
        for (int s = 0; s < samples; s++)
            for (int d = 0; d < (both ? 2 : 1); d++) {
                double seconds = session(c, me, d, round_trips, p);
                if (me == 0) {
                    p->seconds[d][s] = seconds;
                    p->values[d][s] = seconds * 1e9 / (2.0 * (double)round_trips);
                }
            }
        if (me == 0)
            p->round_trips = round_trips;
    }
}

static void write_direction(pa_json *json, const pa_args *args, const pair *p, int d, int samples,
                            int both, long index, long npairs)
{
    pa_result_begin(json, "cpu.core_to_core", args);
    pa_json_key_int(json, "initiator", p->cpu[d]);
    pa_json_key_int(json, "responder", p->cpu[1 - d]);
    pa_thread_placement threads[2] = {p->placed[d], p->placed[1 - d]};
    pa_result_context(json, threads, 2, NULL);
    pa_result_samples(json, "latency_ns", "ns", p->values[d], p->seconds[d], samples);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "one-way latency = the time of a sample / (2 x its round trips); a round "
                       "trip: the initiator writes sequence number 2r+1 into the shared line, the "
                       "responder reads it and writes 2r+2, the initiator reads that");
    pa_json_key_int(json, "round_trips_per_sample", (long long)p->round_trips);
    pa_json_key_int(json, "line_alignment_bytes", LINE_ALIGN);
    pa_json_key_int(json, "round_trips_sent", (long long)p->sent[d]);
    pa_json_key_int(json, "round_trips_answered", (long long)p->answered[d]);
    pa_json_key_bool(json, "sequence_checked", p->sent[d] == p->answered[d]);
    pa_json_key_bool(json, "interleaved", both);
    pa_json_key_int(json, "pair_index", index);
    pa_json_key_int(json, "pairs", npairs);
    pa_json_key_bool(json, "verified", p->sent[d] == p->answered[d]);
    pa_json_end_object(json);
    pa_result_end(json);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-cpu-core-to-core",
                  "one-way cache-line transfer latency between every pair of CPUs", params,
                  sizeof params / sizeof *params, argc, argv);
    int ncpus;
    const int *cpus = pa_arg_cpus(&args, "cpus", &ncpus);
    if (ncpus < 2)
        pa_fail(2, "cpus names %d CPU: core-to-core latency needs two", ncpus);
    pa_cpus_validate(cpus, ncpus);
    int first_only = strcmp(pa_arg_text(&args, "pairs"), "first") == 0;
    int both = strcmp(pa_arg_text(&args, "directions"), "both") == 0;
    int samples = (int)pa_arg_int(&args, "samples");
    double min_seconds = pa_arg_double(&args, "min_sample_time");
    const char *skip = getenv("PERFATLAS_CORE_TO_CORE_SKIP");
    skip_once = skip && strcmp(skip, "1") == 0;
    pa_timer_init();
    pa_numa_counters_start();

    court *c = pa_alloc_aligned(LINE_ALIGN, 1, sizeof *c, "the shared cache line");
    memset(c, 0, sizeof *c);
    pair p = {0};
    for (int d = 0; d < 2; d++) {
        p.seconds[d] = pa_alloc((size_t)samples, sizeof(double), "the sample times");
        p.values[d] = pa_alloc((size_t)samples, sizeof(double), "the latency samples");
    }
    long npairs = first_only ? ncpus - 1 : (long)ncpus * (ncpus - 1) / 2, index = 0;
    pa_json json; /* each pair's documents are written (and flushed) as soon as it is measured */
    pa_json_init(&json, pa_args_output(&args));
    pa_json_begin_array(&json);
    for (int i = 0; i < (first_only ? 1 : ncpus); i++)
        for (int j = i + 1; j < ncpus; j++, index++) {
            p.cpu[0] = cpus[i], p.cpu[1] = cpus[j];
            memset(p.sent, 0, sizeof p.sent);
            memset(p.answered, 0, sizeof p.answered);
            measure_pair(c, &p, samples, both, min_seconds);
            for (int d = 0; d < (both ? 2 : 1); d++)
                write_direction(&json, &args, &p, d, samples, both, index, npairs);
        }
    pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
