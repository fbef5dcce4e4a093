#define _GNU_SOURCE
#include "comm.h"
#include "alloc.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "result.h"
#include "timer.h"

/* -- start-up and placement ------------------------------------------------------------------- */

static void cpu_list(const cpu_set_t *set, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE && used + 16 < size; cpu++) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        used += (size_t)snprintf(out + used, size - used, used ? ",%d" : "%d", cpu);
        if (last > cpu)
            used += (size_t)snprintf(out + used, size - used, "-%d", last);
        cpu = last;
    }
}

static void read_self(pa_rank_info *me)
{
    memset(me, 0, sizeof *me);
    int length = 0;
    MPI_Get_processor_name(me->host, &length);
    FILE *file = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (file) {
        if (!fgets(me->boot_id, sizeof me->boot_id, file))
            me->boot_id[0] = '\0';
        me->boot_id[strcspn(me->boot_id, "\n")] = '\0';
        fclose(file);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpu_list(&set, me->cpus_allowed, sizeof me->cpus_allowed);
    me->cpu = sched_getcpu();
    me->pid = (int)getpid();
}

void pa_comm_start(int *argc, char ***argv, pa_world *world)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world->size);
    int length = 0;
    MPI_Get_library_version(world->library, &length);
    world->library[strcspn(world->library, "\n")] = '\0';
    pa_timer_init();
    pa_rank_info me;
    read_self(&me);
    world->ranks = pa_calloc((size_t)world->size, sizeof *world->ranks, "ranks");
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, world->ranks, (int)sizeof me, MPI_BYTE,
                  MPI_COMM_WORLD);
    world->hosts = 0;
    for (int r = 0; r < world->size; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = pa_same_host(world, q, r);
        world->hosts += !seen;
    }
}

int pa_comm_finish(pa_world *world, int write_failed)
{
    MPI_Bcast(&write_failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(world->ranks);
    MPI_Finalize();
    return write_failed ? 2 : 0;
}

void pa_comm_docs_begin(pa_json *json, const pa_world *world, const pa_args *args)
{
    if (world->rank == 0) {
        pa_json_init(json, pa_args_output(args));
        pa_json_begin_array(json);
    }
}

int pa_comm_docs_finish(pa_json *json, pa_world *world)
{
    int failed = 0;
    if (world->rank == 0) {
        pa_json_end_array(json);
        failed = pa_json_finish(json);
    }
    return pa_comm_finish(world, failed);
}

void pa_comm_require(const pa_world *world, int ok, const char *format, ...)
{
    if (ok)
        return;
    if (world->rank == 0) {
        va_list ap;
        va_start(ap, format);
        pa_vmessage(format, ap);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

FILE *pa_comm_open_output(const pa_world *world, const char *path, const char *what)
{
    FILE *file = NULL;
    int ok = 1;
    char why[128] = "";
    if (world->rank == 0 && *path) {
        file = fopen(path, "wb");
        ok = file != NULL;
        if (!ok)
            snprintf(why, sizeof why, "%s", strerror(errno));
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pa_comm_require(world, ok, "cannot write %s %s: %s", what, path, why);
    return file;
}

/* One sentence, then status 3 for the whole job. A lone process has no other rank to bring down:
 * it finalizes and exits itself, a status both launchers pass on (MPICH's hydra returned 1 for a
 * lone process's MPI_Abort(3), a clean-clone CI run, 2026-11-28, and for 3 in 40 exits without
 * MPI_Finalize, 2026-12-04). */
static void say_and_abort(const char *format, va_list ap)
{
    pa_vmessage(format, ap);
    fflush(stderr);
    int initialized = 0, size = 1;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (size == 1) {
        if (initialized && !finalized)
            MPI_Finalize();
        exit(3);
    }
    MPI_Abort(MPI_COMM_WORLD, 3);
}

void pa_comm_wrong(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    say_and_abort(format, ap);
    va_end(ap);
    exit(3);
}

void pa_comm_wrong_everywhere(const char *format, ...)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, format);
        say_and_abort(format, ap);
        va_end(ap);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* until rank 0's MPI_Abort ends the job */
    exit(3);
}

int pa_same_host(const pa_world *world, int a, int b)
{
    return strcmp(world->ranks[a].host, world->ranks[b].host) == 0;
}

const char *pa_link_of(const pa_world *world, const int *ranks, int n)
{
    int same = 0, pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            pairs++;
            same += pa_same_host(world, ranks[i], ranks[j]);
        }
    if (same == pairs)
        return "intra-node";
    return same == 0 ? "inter-node" : "mixed";
}

/* The pause between polls doubles from 20 us to 1 ms (exponential backoff): a rank that waits
 * out a whole measurement wakes about 1000 times a second, not 50,000, so where ranks share cores
 * (hosts emulated on one machine, oversubscribed nodes) its wake-ups do not disturb the pair being
 * measured; a join costs at most ~1 ms more than the barrier itself. */
void pa_comm_join(MPI_Comm comm)
{
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    int done = 0;
    struct timespec pause = {0, 20000};
    for (;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 1000000)
            pause.tv_nsec = pause.tv_nsec * 2 < 1000000 ? pause.tv_nsec * 2 : 1000000;
    }
}

void pa_comm_serve(MPI_Comm comm)
{
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    for (int done = 0; !done;)
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

MPI_Comm pa_comm_of(const pa_world *world, const int *ranks, int n)
{
    int position = -1;
    for (int i = 0; i < n; i++)
        if (ranks[i] == world->rank)
            position = i;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, position >= 0 ? 0 : MPI_UNDEFINED, position, &comm);
    return comm;
}

/* -- histograms ------------------------------------------------------------------------------- */

void pa_histogram_clear(pa_histogram *histogram)
{
    memset(histogram->counts, 0, sizeof histogram->counts);
    histogram->min_seconds = INFINITY;
    histogram->max_seconds = 0;
}

void pa_histogram_add(pa_histogram *histogram, double seconds)
{
    double ns = seconds * 1e9;
    int bin = ns <= 1.0 ? 0 : (int)floor(log2(ns) * PA_HIST_PER_DOUBLING);
    histogram->counts[bin < PA_HIST_BINS ? bin : PA_HIST_BINS - 1]++;
    if (seconds < histogram->min_seconds)
        histogram->min_seconds = seconds;
    if (seconds > histogram->max_seconds)
        histogram->max_seconds = seconds;
}

void pa_histogram_reduce(pa_histogram *histogram, int root, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    pa_histogram sum;
    MPI_Reduce(histogram->counts, sum.counts, PA_HIST_BINS, MPI_LONG_LONG, MPI_SUM, root, comm);
    MPI_Reduce(&histogram->min_seconds, &sum.min_seconds, 1, MPI_DOUBLE, MPI_MIN, root, comm);
    MPI_Reduce(&histogram->max_seconds, &sum.max_seconds, 1, MPI_DOUBLE, MPI_MAX, root, comm);
    if (rank == root)
        *histogram = sum;
}

void pa_histogram_json(pa_json *json, const pa_histogram *histogram, double scale)
{
    int first = 0, last = PA_HIST_BINS - 1;
    long long total = 0;
    for (int b = 0; b < PA_HIST_BINS; b++)
        total += histogram->counts[b];
    while (first < last && histogram->counts[first] == 0)
        first++;
    while (last > first && histogram->counts[last] == 0)
        last--;
    pa_json_key(json, "iteration_histogram");
    pa_json_begin_object(json);
    pa_json_key_int(json, "iterations", total);
    pa_json_key_int(json, "bins_per_doubling", PA_HIST_PER_DOUBLING);
    pa_json_key_double(json, "scale", scale);
    /* bin b covers [2^(b/k), 2^((b+1)/k)) ns * scale */
    pa_json_key_double(json, "first_bin_lower_ns",
                       pow(2.0, (double)first / PA_HIST_PER_DOUBLING) * scale);
    pa_json_key_int(json, "first_bin", first);
    pa_json_key(json, "counts");
    pa_json_begin_array(json);
    for (int b = first; b <= last && total; b++)
        pa_json_int(json, histogram->counts[b]);
    pa_json_end_array(json);
    pa_json_key_double(json, "min_ns", total ? histogram->min_seconds * 1e9 * scale : NAN);
    pa_json_key_double(json, "max_ns", total ? histogram->max_seconds * 1e9 * scale : NAN);
    pa_json_end_object(json);
}

/* -- timing ----------------------------------------------------------------------------------- */

void pa_timing_from_args(pa_timing *timing, const pa_args *args)
{
    timing->warmup = (int)pa_arg_int(args, "warmup");
    timing->warmup_time = pa_arg_double(args, "warmup_time");
    timing->samples = (int)pa_arg_int(args, "samples");
    timing->min_sample_time = pa_arg_double(args, "min_sample_time");
    timing->time_limit = pa_arg_double(args, "time_limit");
}

static double longest(MPI_Comm comm, double seconds)
{
    double result;
    MPI_Allreduce(&seconds, &result, 1, MPI_DOUBLE, MPI_MAX, comm);
    return result;
}

/* The distribution of single iterations, from a pass of its own after the samples: a timestamp
 * per iteration costs about one timer resolution (~20 ns), which the timed samples must not
 * carry. The pass runs a quarter of the samples' iterations (at least one batch). */
static void distribution(MPI_Comm agree, pa_batch_fn *fn, void *context, long iterations, int count,
                         pa_histogram *histogram)
{
    long laps_count = iterations * count / 4;
    laps_count = laps_count < iterations ? iterations : laps_count;
    uint64_t *laps = pa_alloc(((size_t)laps_count + 1), sizeof *laps, "the lap times");
    pa_histogram_clear(histogram);
    MPI_Barrier(agree);
    fn(context, laps_count, laps);
    for (long j = 0; j < laps_count; j++)
        pa_histogram_add(histogram, pa_ticks_to_seconds(laps[j + 1] - laps[j]));
    free(laps);
}

void pa_comm_measure(MPI_Comm agree, pa_batch_fn *fn, void *context, const pa_timing *timing,
                     pa_series *series, pa_histogram *histogram)
{
    uint64_t start = pa_ticks();
    /* Warm-up (connections, buffers, caches, and the start of a step: the ranks outside it going
     * to sleep in pa_comm_join disturbed the first 3-5 ms of a pair on the netns test bed, which
     * a warm-up of 20 iterations left in the first two samples): one iteration at a time until
     * both `warmup` iterations and warmup_time have passed, ended early once it has taken a
     * tenth of time_limit, so that a slow link cannot stretch it. */
    series->warmed = 0;
    for (int i = 0;; i++) {
        double spent = longest(agree, pa_ticks_to_seconds(pa_ticks() - start));
        if (spent > 0.1 * timing->time_limit ||
            (i >= timing->warmup && spent >= timing->warmup_time))
            break;
        fn(context, 1, NULL);
        series->warmed = i + 1;
    }
    /* Calibrate: grow the batch until the slowest rank's batch lasts min_sample_time (aiming 25 %
     * above it), by at least 1.5x and at most 100x per step, as native/common/sampler.c does. */
    long iterations = 1;
    double seconds;
    for (;;) {
        MPI_Barrier(agree);
        seconds = longest(agree, fn(context, iterations, NULL));
        if (seconds >= timing->min_sample_time)
            break;
        double factor = seconds > 0 ? 1.25 * timing->min_sample_time / seconds : 100.0;
        factor = factor > 100.0 ? 100.0 : factor < 1.5 ? 1.5 : factor;
        iterations = (long)ceil((double)iterations * factor);
    }
    /* Bound the time: as many samples as fit in what is left of time_limit, at least 3. */
    double spent = longest(agree, pa_ticks_to_seconds(pa_ticks() - start));
    int count = timing->samples;
    if (seconds > 0 && spent + count * seconds > timing->time_limit) {
        double fit = floor((timing->time_limit - spent) / seconds);
        count = fit < PA_MIN_SAMPLES ? PA_MIN_SAMPLES : fit < count ? (int)fit : count;
        if (count > timing->samples)
            count = timing->samples;
    }
    series->iterations = iterations;
    series->requested = timing->samples;
    series->count = count;
    series->seconds = pa_calloc((size_t)count, sizeof(double), "seconds");
    for (int i = 0; i < count; i++) {
        MPI_Barrier(agree);
        series->seconds[i] = fn(context, iterations, NULL);
    }
    if (histogram)
        distribution(agree, fn, context, iterations, count, histogram);
    series->elapsed = pa_ticks_to_seconds(pa_ticks() - start);
}

void pa_series_free(pa_series *series)
{
    free(series->seconds);
    series->seconds = NULL;
}

int pa_comm_collect(const pa_world *world, const pa_series *mine, int *count, double **values,
                    int **ranks)
{
    int my_count = mine ? mine->count : 0;
    MPI_Allreduce(&my_count, count, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double *row = pa_calloc((size_t)*count + 1, sizeof(double), "row");
    row[0] = mine ? 1.0 : 0.0; /* first element: does this rank contribute? */
    for (int i = 0; mine && i < mine->count; i++)
        row[i + 1] = mine->seconds[i];
    double *all = NULL;
    if (world->rank == 0)
        all = pa_calloc((size_t)world->size * (size_t)(*count + 1), sizeof(double),
                        "the gathered series");
    MPI_Gather(row, *count + 1, MPI_DOUBLE, all, *count + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(row);
    if (world->rank != 0)
        return 0;
    *values = pa_calloc((size_t)world->size * (size_t)*count + 1, sizeof(double), "values");
    *ranks = pa_calloc((size_t)world->size, sizeof(int), "ranks");
    int contributors = 0;
    for (int r = 0; r < world->size; r++) {
        const double *from = all + (size_t)r * (size_t)(*count + 1);
        if (from[0] == 0.0)
            continue;
        memcpy(*values + (size_t)contributors * (size_t)*count, from + 1,
               (size_t)*count * sizeof(double));
        (*ranks)[contributors++] = r;
    }
    free(all);
    return contributors;
}

/* -- documents -------------------------------------------------------------------------------- */

void pa_comm_doc_begin(pa_json *json, const char *benchmark, const pa_args *args,
                       const pa_world *world)
{
    pa_result_begin(json, benchmark, args);
    pa_json_key_int(json, "np", world->size);
}

static void rank_json(pa_json *json, const pa_world *world, int r)
{
    const pa_rank_info *info = &world->ranks[r];
    pa_json_begin_object(json);
    pa_json_key_int(json, "rank", r);
    pa_json_key_string(json, "host", info->host);
    pa_json_key_string(json, "cpus_allowed", info->cpus_allowed);
    pa_json_key_int(json, "cpu", info->cpu);
    pa_json_key_int(json, "pid", info->pid);
    pa_json_key_string(json, "boot_id", info->boot_id);
    pa_json_end_object(json);
}

void pa_comm_doc_context(pa_json *json, const pa_world *world, const int *involved, int n)
{
    pa_json_end_object(json); /* params */
    pa_json_key(json, "placement");
    pa_json_begin_object(json);
    pa_json_key(json, "ranks");
    pa_json_begin_array(json);
    for (int r = 0; r < world->size; r++)
        rank_json(json, world, r);
    pa_json_end_array(json);
    pa_json_key_int(json, "hosts", world->hosts);
    pa_json_key(json, "involved");
    pa_json_begin_array(json);
    for (int i = 0; i < n; i++)
        pa_json_int(json, involved[i]);
    pa_json_end_array(json);
    pa_json_key(json, "link");
    if (n > 1)
        pa_json_string(json, pa_link_of(world, involved, n));
    else
        pa_json_null(json);
    pa_json_key_string(json, "mpi_library", world->library);
    pa_json_end_object(json);
    pa_timer_json(json);
}

void pa_comm_doc_samples(pa_json *json, const pa_metric *metrics, int nmetrics,
                         const double *seconds, int nseconds)
{
    pa_result_metrics(json, metrics, nmetrics, seconds, nseconds);
}

void pa_comm_timing_json(pa_json *json, const pa_timing *timing, const pa_series *series)
{
    pa_json_key_int(json, "iterations_per_sample", series->iterations);
    pa_json_key_int(json, "samples_requested", series->requested);
    pa_json_key_int(json, "samples_taken", series->count);
    pa_json_key_double(json, "time_limit_s", timing->time_limit);
    pa_json_key_int(json, "warmup_iterations", series->warmed);
}

void pa_comm_doc_end(pa_json *json, const pa_timing *timing, const pa_series *series,
                     const pa_histogram *histogram)
{
    pa_comm_timing_json(json, timing, series);
    pa_histogram_json(json, histogram, 1.0);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
    pa_result_end(json);
}

void *pa_comm_alloc(size_t bytes)
{
    void *memory = pa_alloc_aligned(4096, bytes, 1, "a message buffer");
    memset(memory, 0, bytes ? bytes : 1);
    return memory;
}
