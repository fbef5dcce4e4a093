/* What every MPI benchmark of native/comm shares: start-up, rank placement read back from the
 * ranks, timing loops with warm-up and a time bound, per-iteration histograms, and the JSON
 * documents that rank 0 writes (docs/contract.md, "The communication documents").
 *
 * Every rank calls the same functions in the same order (they are collective over the
 * communicators they take); only world rank 0 writes JSON. Ranks that take no part in a step
 * wait in pa_comm_join, which sleeps between progress polls so that an idle rank does not steal
 * the core of a measuring one on an oversubscribed host. */
#ifndef PA_COMM_H
#define PA_COMM_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "json.h"
#include "result.h"
#include "timer.h"

/* One rank as it reports itself (never what was asked of the launcher). */
typedef struct {
    char host[MPI_MAX_PROCESSOR_NAME]; /* MPI_Get_processor_name */
    char boot_id[40]; /* /proc/sys/kernel/random/boot_id: ranks that share it share a kernel */
    char cpus_allowed[256]; /* sched_getaffinity, as a Linux CPU list */
    int cpu;                /* sched_getcpu() when the placement was gathered */
    int pid;
} pa_rank_info;

typedef struct {
    int rank, size;
    pa_rank_info *ranks; /* every rank's, on every rank (MPI_Allgather) */
    int hosts;           /* distinct host names */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
} pa_world;

/* MPI_Init, the timer, and the placement of every rank. */
void pa_comm_start(int *argc, char ***argv, pa_world *world);
/* MPI_Finalize; returns the exit status (0, or 2 when rank 0 could not write its JSON). */
int pa_comm_finish(pa_world *world, int write_failed);
/* Rank 0 opens the output's array of documents. */
void pa_comm_docs_begin(pa_json *json, const pa_world *world, const pa_args *args);
/* Rank 0 closes that array; then pa_comm_finish. */
int pa_comm_docs_finish(pa_json *json, pa_world *world);

/* A condition every rank evaluates alike (np parity, ...): when false, rank 0 prints one sentence,
 * every rank finalizes, and the program exits with status 2. */
void pa_comm_require(const pa_world *world, int ok, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Rank 0 opens `path` (`what`: "the flux file") for writing before anything is measured, so that
 * a bad path fails at once (pa_comm_require); NULL on the other ranks and for an empty path. */
FILE *pa_comm_open_output(const pa_world *world, const char *path, const char *what);
/* A failed correctness check on one rank: one sentence and MPI_Abort with status 3. */
noreturn void pa_comm_wrong(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* A failed check that every rank found alike (replicated values): rank 0 says it in one sentence,
 * and MPI_Abort ends the job with status 3. */
noreturn void pa_comm_wrong_everywhere(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

int pa_same_host(const pa_world *world, int a, int b);
/* "intra-node" when all `ranks` share a host, "inter-node" when no two of them do, else "mixed". */
const char *pa_link_of(const pa_world *world, const int *ranks, int n);

/* A barrier that sleeps while it waits (MPI_Ibarrier, then MPI_Test with a pause that backs off
 * from 20 us to 1 ms). */
void pa_comm_join(MPI_Comm comm);
/* The barrier for a rank whose memory others access one-sided meanwhile: it polls without a
 * pause, so that a library that progresses such access only inside the target's MPI calls
 * (MPICH's ch4 without a progress thread) serves each access at once. */
void pa_comm_serve(MPI_Comm comm);
/* A communicator of the world ranks listed (MPI_COMM_NULL on the others), in that order.
 * Collective over MPI_COMM_WORLD. */
MPI_Comm pa_comm_of(const pa_world *world, const int *ranks, int n);

/* Per-iteration durations as a histogram: PA_HIST_PER_DOUBLING bins per doubling from 1 ns. */
#define PA_HIST_PER_DOUBLING 4
#define PA_HIST_BINS         (44 * PA_HIST_PER_DOUBLING)
typedef struct {
    long long counts[PA_HIST_BINS];
    double min_seconds, max_seconds;
} pa_histogram;
void pa_histogram_clear(pa_histogram *histogram);
void pa_histogram_add(pa_histogram *histogram, double seconds);
/* Sums the histograms of `comm` into root's. */
void pa_histogram_reduce(pa_histogram *histogram, int root, MPI_Comm comm);
/* "iteration_histogram": {...}, the per-iteration durations scaled by `scale` (e.g. 0.5 for the
 * one-way half of a round trip). */
void pa_histogram_json(pa_json *json, const pa_histogram *histogram, double scale);

/* Timing: warm-up, then samples of `iterations` each, the count calibrated so that a sample lasts
 * at least min_sample_time, and the number of samples cut so that the measurement ends within
 * time_limit (but never fewer than PA_MIN_SAMPLES). */
#define PA_MIN_SAMPLES 3
typedef struct {
    int warmup;         /* untimed iterations, at least */
    double warmup_time; /* seconds the warm-up lasts, at least */
    int samples;        /* samples wanted */
    double min_sample_time, time_limit;
} pa_timing;
/* The parameters warmup, warmup_time, samples, min_sample_time and time_limit of every comm
 * executable. */
#define PA_COMM_TIMING_PARAMS(samples_default, min_sample_time_default, time_limit_default)         \
    {"warmup", PA_INT, "10", "untimed iterations before calibration", NULL, 0, 1e9},                \
        {"warmup_time", PA_DURATION,                                                                \
         "10ms",        "the warm-up lasts at least this long (and at most a tenth of time_limit)", \
         NULL,          0,                                                                          \
         3600},                                                                                     \
        {"samples",                                                                                 \
         PA_INT,                                                                                    \
         samples_default,                                                                           \
         "timed samples wanted (each a batch of iterations)",                                       \
         NULL,                                                                                      \
         1,                                                                                         \
         1e6},                                                                                      \
        {"min_sample_time",                                                                         \
         PA_DURATION,                                                                               \
         min_sample_time_default,                                                                   \
         "a sample lasts at least this long (iterations per sample are calibrated)",                \
         NULL,                                                                                      \
         0,                                                                                         \
         3600},                                                                                     \
    {                                                                                               \
        "time_limit", PA_DURATION, time_limit_default,                                              \
            "stop sampling one measurement after this long (at least 3 samples are taken)", NULL,   \
            0, 86400                                                                                \
    }
void pa_timing_from_args(pa_timing *timing, const pa_args *args);

/* One batch of `iterations` of a kernel, collective over its participants. It returns this
 * rank's wall time for the batch; when `laps` is not NULL (the distribution pass) it also stores
 * the batch's start in laps[0] and the end of iteration i in laps[i + 1] (PA_LAP), so that every
 * iteration's duration reaches the histogram at the cost of one timestamp. */
typedef double pa_batch_fn(void *context, long iterations, uint64_t *laps);
#define PA_LAP(laps, i)               \
    do {                              \
        if (laps)                     \
            (laps)[(i)] = pa_ticks(); \
    } while (0)

typedef struct {
    long iterations; /* per sample */
    int warmed;      /* warm-up iterations run */
    int requested, count;
    double *seconds; /* this rank's wall time of each sample (malloc'd) */
    double elapsed;  /* this rank's time for the whole measurement, calibration included */
} pa_series;

/* Warm-up, calibration and samples of `fn` on every rank of `agree`, which agree on the counts by
 * taking the longest rank's times (MPI_Allreduce MAX); a barrier of `agree` starts each sample.
 * With a histogram, a pass of its own after the samples (a quarter of their iterations, at least
 * one batch) timestamps every iteration; the timed samples carry no per-iteration timer. */
void pa_comm_measure(MPI_Comm agree, pa_batch_fn *fn, void *context, const pa_timing *timing,
                     pa_series *series, pa_histogram *histogram);
void pa_series_free(pa_series *series);

/* Collects a series from every contributing rank to world rank 0, in rank order: on rank 0,
 * *values holds contributors x count seconds (row-major) and *ranks the contributors' world
 * ranks; returns the number of contributors. Collective over MPI_COMM_WORLD; `mine` is NULL on
 * ranks that did not take part. */
int pa_comm_collect(const pa_world *world, const pa_series *mine, int *count, double **values,
                    int **ranks);

/* The document of one result, written by rank 0:
 *   pa_comm_doc_begin    {"schema", "benchmark", "params": {declared ..., "np"   (left open)
 *   (caller)            extra params (bytes, peer, ...)
 *   pa_comm_doc_context  }, "placement": {ranks, hosts, involved, link}, "timer"
 *   pa_comm_doc_samples  "samples", "units", "sample_seconds"   (or pa_result_not_measurable)
 *   (caller)            "derived": {...}
 *   pa_result_end        "build" }                                                           */
void pa_comm_doc_begin(pa_json *json, const char *benchmark, const pa_args *args,
                       const pa_world *world);
void pa_comm_doc_context(pa_json *json, const pa_world *world, const int *involved, int n);
void pa_comm_doc_samples(pa_json *json, const pa_metric *metrics, int nmetrics,
                         const double *seconds, int nseconds);
/* Keys of "derived" every timed comm result carries: iterations_per_sample, samples_requested,
 * samples_taken, time_limit_s, warmup_iterations. */
void pa_comm_timing_json(pa_json *json, const pa_timing *timing, const pa_series *series);
/* The end of a verified timed result: its timing keys, the histogram (unscaled) and "verified"
 * close "derived"; then pa_result_end. */
void pa_comm_doc_end(pa_json *json, const pa_timing *timing, const pa_series *series,
                     const pa_histogram *histogram);

/* Buffers of the message-passing kernels: page-aligned, first-touched by the calling rank. */
void *pa_comm_alloc(size_t bytes);

#endif
