/* pa-comm-collectives: MPI_Allreduce and MPI_Barrier latency vs process count, one launch.
 *
 * Process counts: every P from min_processes to np when np <= 16, else the powers of two and np.
 * For each P the first P ranks form a sub-communicator (MPI_Comm_split), so all process counts
 * are measured with the same placement in one launch; the other ranks sleep meanwhile. Each
 * rank times its own calls, back to back as an application makes them, in batches calibrated to
 * last min_sample_time after a warm-up; every rank's batches are kept (so the report gives min,
 * median and max across ranks and samples) and every call's duration goes into one histogram.
 * Allreduce sums doubles (MPI_SUM) and checks the exact sum on every rank. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "timer.h"

static const pa_param params[] = {
    {"op", PA_CHOICE, "allreduce", "the collective", "allreduce,barrier", 0, 0},
    {"min_bytes", PA_SIZE, "8", "smallest allreduce vector (doubles: a multiple of 8 bytes)", NULL,
     8, 0x1p30},
    {"max_bytes", PA_SIZE, "8", "largest allreduce vector (sizes double from min_bytes)", NULL, 8,
     0x1p30},
    {"min_processes", PA_INT, "2", "smallest process count", NULL, 1, 1e7},
    PA_COMM_TIMING_PARAMS("11", "1ms", "1s"),
};

typedef struct {
    MPI_Comm comm;
    int barrier;
    int elements;
    double *send, *recv;
} collective;

static double iterate(void *context, long iterations, uint64_t *laps)
{
    collective *c = context;
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        if (c->barrier)
            MPI_Barrier(c->comm);
        else
            MPI_Allreduce(c->send, c->recv, c->elements, MPI_DOUBLE, MPI_SUM, c->comm);
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

/* Rank r contributes r + 1 + j to element j: the sum over P ranks is P(P+1)/2 + P j, exact. */
static void fill(collective *c, int rank)
{
    for (int j = 0; j < c->elements; j++) {
        c->send[j] = rank + 1.0 + j;
        c->recv[j] = -1.0;
    }
}

static void verify(const collective *c, int processes)
{
    for (int j = 0; j < c->elements && !c->barrier; j++) {
        double expected = processes * (processes + 1) / 2.0 + (double)processes * j;
        if (c->recv[j] != expected)
            pa_comm_wrong("MPI_Allreduce over %d ranks gave %.17g in element %d instead of %.17g",
                          processes, c->recv[j], j, expected);
    }
}

static int process_counts(int smallest, int np, int *counts)
{
    int n = 0;
    for (int p = smallest; p <= np; p++)
        if (np <= 16 || (p & (p - 1)) == 0 || p == np)
            counts[n++] = p;
    return n;
}

static void write_document(pa_json *json, const pa_args *args, const pa_world *world, int barrier,
                           int processes, size_t bytes, const pa_timing *timing,
                           const pa_series *series, const pa_histogram *histogram, int count,
                           const double *seconds)
{
    int n = processes * count;
    double *latency = pa_calloc((size_t)n + 1, sizeof(double), "latency");
    for (int i = 0; i < n; i++)
        latency[i] = seconds[i] * 1e9 / (double)series->iterations;
    int *involved = pa_calloc((size_t)processes, sizeof(int), "involved");
    for (int r = 0; r < processes; r++)
        involved[r] = r;
    pa_comm_doc_begin(json, barrier ? "comm.barrier" : "comm.allreduce", args, world);
    pa_json_key_int(json, "processes", processes);
    pa_json_key_int(json, "bytes", (long long)bytes);
    pa_comm_doc_context(json, world, involved, processes);
    pa_metric metric = {"latency_ns", "ns", latency, n};
    pa_comm_doc_samples(json, &metric, 1, seconds, n);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "samples_layout",
                       "rank-major: sample r*n+i is rank r's mean time per call in its sample "
                       "i (n samples per rank, ranks 0 .. processes-1)");
    pa_json_key_int(json, "samples_per_rank", count);
    pa_json_key_int(json, "elements", barrier ? 0 : (long long)(bytes / 8));
    pa_json_key_string(json, "datatype", barrier ? "none" : "MPI_DOUBLE, MPI_SUM");
    pa_comm_doc_end(json, timing, series, histogram);
    free(latency);
    free(involved);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-collectives",
                  "MPI_Allreduce and MPI_Barrier latency vs process count", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    int barrier = strcmp(pa_arg_text(&args, "op"), "barrier") == 0;
    size_t min_bytes = pa_arg_size(&args, "min_bytes"), max_bytes = pa_arg_size(&args, "max_bytes");
    int smallest = (int)pa_arg_int(&args, "min_processes");
    pa_comm_require(&world, min_bytes % 8 == 0 && min_bytes <= max_bytes,
                    "min_bytes=%zu must be a multiple of 8 (doubles) and at most max_bytes=%zu",
                    min_bytes, max_bytes);
    pa_comm_require(&world, smallest <= world.size,
                    "min_processes=%d exceeds np=%d: launch more ranks", smallest, world.size);
    pa_timing timing;
    pa_timing_from_args(&timing, &args);
    size_t sizes[40];
    int nsizes = 0;
    for (size_t b = min_bytes; b <= max_bytes && nsizes < 40; b *= 2)
        sizes[nsizes++] = barrier ? 0 : b;
    if (barrier)
        nsizes = 1;
    int *counts = pa_calloc((size_t)world.size + 1, sizeof(int), "counts");
    int ncounts = process_counts(smallest, world.size, counts);
    int *ranks = pa_calloc((size_t)world.size, sizeof(int), "ranks");
    for (int r = 0; r < world.size; r++)
        ranks[r] = r;

    collective c = {.barrier = barrier};
    c.send = pa_comm_alloc(barrier ? 8 : max_bytes);
    c.recv = pa_comm_alloc(barrier ? 8 : max_bytes);
    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    for (int p = 0; p < ncounts; p++) {
        c.comm = pa_comm_of(&world, ranks, counts[p]);
        for (int s = 0; s < nsizes; s++) {
            pa_series series = {0};
            pa_histogram histogram;
            pa_histogram_clear(&histogram);
            if (c.comm != MPI_COMM_NULL) {
                c.elements = (int)(sizes[s] / 8);
                fill(&c, world.rank);
                pa_comm_measure(c.comm, iterate, &c, &timing, &series, &histogram);
                verify(&c, counts[p]);
                pa_histogram_reduce(&histogram, 0, c.comm);
            }
            pa_comm_join(MPI_COMM_WORLD);
            int count = 0, *contributors = NULL;
            double *values = NULL;
            pa_comm_collect(&world, c.comm != MPI_COMM_NULL ? &series : NULL, &count, &values,
                            &contributors);
            if (world.rank == 0) {
                write_document(&json, &args, &world, barrier, counts[p], sizes[s], &timing, &series,
                               &histogram, count, values);
                free(values);
                free(contributors);
            }
            pa_series_free(&series);
        }
        if (c.comm != MPI_COMM_NULL)
            MPI_Comm_free(&c.comm);
    }
    free(c.send);
    free(c.recv);
    free(counts);
    free(ranks);
    return pa_comm_docs_finish(&json, &world);
}
