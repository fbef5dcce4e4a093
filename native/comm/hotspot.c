/* pa-comm-hotspot: k senders stream to one receiver (rank 0) at once, for k = 1 .. max_senders;
 * the bandwidth each sender gets as k grows, and what the receiver takes in (one document per k).
 *
 * Each iteration: the receiver pre-posts a window of receives for every sender (each into its own
 * slot); every sender keeps its window of nonblocking sends in flight and waits for the
 * receiver's acknowledgement. A sender's bandwidth is its window's bytes over its own time; the
 * aggregate is all windows' bytes over the receiver's time. Ranks beyond k sleep. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "p2p.h"
#include "timer.h"

static const pa_param params[] = {
    {"bytes", PA_SIZE, "1MiB", "message size", NULL, 1, 0x1p30},
    {"max_senders", PA_INT, "0", "largest number of senders k (0: np-1)", NULL, 0, 1e7},
    {"window", PA_INT, "16", "nonblocking sends in flight per sender and iteration", NULL, 1, 4096},
    {"receive_bytes", PA_SIZE, "16MiB",
     "at most this much receive space at rank 0 (fewer sends in flight for many senders)", NULL, 1,
     0x1p36},
    PA_COMM_TIMING_PARAMS("11", "1ms", "2s"),
};

enum {
    TAG_DATA = 31,
    TAG_ACK = 32
};

typedef struct {
    MPI_Comm comm; /* receiver 0, senders 1 .. k */
    int me, senders, window, count;
    size_t bytes;
    unsigned char *buffer; /* the receiver: senders x window slots; a sender: one message */
    MPI_Request *requests;
} hotspot;

static unsigned char pattern(size_t i, int sender)
{
    return (unsigned char)((i * 131u + (unsigned)sender * 61u + 17u) & 0xffu);
}

/* The receiver's slot for window message w of sender s (1 .. k). */
static unsigned char *slot(const hotspot *h, int s, int w)
{
    return h->buffer + ((size_t)(s - 1) * (size_t)h->window + (size_t)w) * h->bytes;
}

static double iterate(void *context, long iterations, uint64_t *laps)
{
    hotspot *h = context;
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        int posted = 0;
        if (h->me == 0) {
            for (int s = 1; s <= h->senders; s++)
                for (int w = 0; w < h->window; w++)
                    MPI_Irecv(slot(h, s, w), h->count, MPI_BYTE, s, TAG_DATA, h->comm,
                              &h->requests[posted++]);
            MPI_Waitall(posted, h->requests, MPI_STATUSES_IGNORE);
            for (int s = 1; s <= h->senders; s++)
                MPI_Send(NULL, 0, MPI_BYTE, s, TAG_ACK, h->comm);
        } else {
            for (int w = 0; w < h->window; w++)
                MPI_Isend(h->buffer, h->count, MPI_BYTE, 0, TAG_DATA, h->comm,
                          &h->requests[posted++]);
            MPI_Waitall(posted, h->requests, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_ACK, h->comm, MPI_STATUS_IGNORE);
        }
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

static void verify(const hotspot *h)
{
    if (h->me != 0)
        return;
    for (int s = 1; s <= h->senders; s++)
        for (int w = 0; w < h->window; w++) {
            const unsigned char *data = slot(h, s, w);
            for (size_t i = 0; i < h->bytes; i++)
                if (data[i] != pattern(i, s))
                    pa_comm_wrong("the receiver found a wrong byte %zu from sender %d: the "
                                  "message data are corrupt",
                                  i, s);
        }
}

static void write_document(pa_json *json, const pa_args *args, const pa_world *world,
                           const hotspot *h, const pa_timing *timing, const pa_series *receiver,
                           const pa_histogram *histogram, int count, const double *sender_seconds,
                           const int *sender_ranks)
{
    int k = h->senders;
    double window_bytes = (double)h->window * (double)h->bytes;
    double *per_sender = pa_calloc((size_t)(k * count) + 1, sizeof(double), "per_sender");
    double *aggregate = pa_calloc((size_t)count + 1, sizeof(double), "aggregate");
    double *seconds = pa_calloc((size_t)((k + 1) * count) + 1, sizeof(double), "seconds");
    for (int s = 0; s < k; s++)
        for (int i = 0; i < count; i++) {
            double t = sender_seconds[s * count + i];
            per_sender[s * count + i] = window_bytes * (double)receiver->iterations / t;
            seconds[s * count + i] = t;
        }
    for (int i = 0; i < count; i++) {
        aggregate[i] = k * window_bytes * (double)receiver->iterations / receiver->seconds[i];
        seconds[k * count + i] = receiver->seconds[i];
    }
    int *involved = pa_calloc((size_t)k + 1, sizeof(int), "involved");
    for (int r = 0; r <= k; r++)
        involved[r] = r;

    pa_comm_doc_begin(json, "comm.hotspot", args, world);
    pa_json_key_int(json, "senders", k);
    pa_comm_doc_context(json, world, involved, k + 1);
    pa_metric metrics[2] = {{"bandwidth_per_sender_Bps", "byte/s", per_sender, k * count},
                            {"aggregate_bandwidth_Bps", "byte/s", aggregate, count}};
    pa_comm_doc_samples(json, metrics, 2, seconds, (k + 1) * count);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key(json, "sender_ranks");
    pa_json_begin_array(json);
    for (int s = 0; s < k; s++)
        pa_json_int(json, sender_ranks[s]);
    pa_json_end_array(json);
    pa_json_key(json, "sender_links");
    pa_json_begin_array(json);
    for (int s = 0; s < k; s++) {
        int pair[2] = {0, sender_ranks[s]};
        pa_json_string(json, pa_link_of(world, pair, 2));
    }
    pa_json_end_array(json);
    pa_json_key_string(json, "samples_layout",
                       "bandwidth_per_sender_Bps is sender-major: sample s*n+i is sender "
                       "sender_ranks[s] in sample i (n samples per sender)");
    pa_json_key_int(json, "window", h->window);
    pa_json_key_double(json, "bytes_per_sender_per_iteration", window_bytes);
    pa_json_key_double(json, "bytes_per_iteration", k * window_bytes);
    pa_comm_doc_end(json, timing, receiver, histogram);
    free(per_sender);
    free(aggregate);
    free(seconds);
    free(involved);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-hotspot",
                  "MPI bandwidth per sender when k senders stream to one receiver", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    int max_senders = (int)pa_arg_int(&args, "max_senders");
    if (max_senders == 0)
        max_senders = world.size - 1;
    pa_comm_require(&world, world.size >= 2, "a hotspot needs a receiver and a sender: np=%d",
                    world.size);
    pa_comm_require(&world, max_senders < world.size,
                    "max_senders=%d needs np of at least %d (rank 0 receives), but np=%d",
                    max_senders, max_senders + 1, world.size);
    size_t bytes = pa_arg_size(&args, "bytes");
    int window = pa_p2p_window(bytes, (int)pa_arg_int(&args, "window"),
                               pa_arg_size(&args, "receive_bytes") / (size_t)max_senders);
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    hotspot h = {.bytes = bytes, .window = window, .count = (int)bytes};
    size_t slots = world.rank == 0 ? (size_t)max_senders * (size_t)window : 1;
    h.buffer = pa_comm_alloc(slots * bytes);
    h.requests = pa_calloc(slots > (size_t)window ? slots : (size_t)window, sizeof(MPI_Request),
                           "the MPI requests");
    for (size_t i = 0; world.rank > 0 && i < bytes; i++)
        h.buffer[i] = pattern(i, world.rank);

    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    int *group = pa_calloc((size_t)world.size, sizeof(int), "group");
    for (int r = 0; r < world.size; r++)
        group[r] = r;
    for (int k = 1; k <= max_senders; k++) {
        h.senders = k;
        h.comm = pa_comm_of(&world, group, k + 1);
        pa_series series = {0};
        pa_histogram histogram;
        pa_histogram_clear(&histogram);
        if (h.comm != MPI_COMM_NULL) {
            MPI_Comm_rank(h.comm, &h.me);
            pa_comm_measure(h.comm, iterate, &h, &timing, &series, &histogram);
            verify(&h);
            if (h.me == 0)
                memset(h.buffer, 0, (size_t)k * (size_t)window * bytes);
            MPI_Comm_free(&h.comm);
        }
        pa_comm_join(MPI_COMM_WORLD);
        int count = 0, *ranks = NULL;
        double *values = NULL;
        int senders = pa_comm_collect(&world, world.rank > 0 && world.rank <= k ? &series : NULL,
                                      &count, &values, &ranks);
        if (world.rank == 0) {
            if (senders != k)
                pa_comm_wrong("expected %d senders' samples, got %d (a perfatlas bug)", k, senders);
            write_document(&json, &args, &world, &h, &timing, &series, &histogram, count, values,
                           ranks);
            free(values);
            free(ranks);
        }
        pa_series_free(&series);
    }
    free(group);
    free(h.buffer);
    free(h.requests);
    return pa_comm_docs_finish(&json, &world);
}
