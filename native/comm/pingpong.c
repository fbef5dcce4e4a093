/* pa-comm-pingpong: point-to-point latency and bandwidth between rank 0 and one peer, for every
 * message size from min_bytes to max_bytes (0, then doubling), one document per size.
 *
 * Method (p2p.h; OSU osu_latency / osu_bw / osu_bibw): latency is half a round trip (or, with
 * direction=bi, one simultaneous exchange); bandwidth keeps a window of nonblocking sends in
 * flight. Each sample is a batch of iterations calibrated to last min_sample_time, after a
 * warm-up; every iteration's duration also goes into a histogram, so the distribution is kept.
 * The link is labelled intra-node or inter-node from the host names the two ranks report.
 * Ranks other than 0 and the peer sleep until the measurement is over. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "p2p.h"
#include "result.h"

static const pa_param params[] = {
    {"min_bytes", PA_SIZE, "0", "smallest message (then doubling sizes)", NULL, 0, 0x1p30},
    {"max_bytes", PA_SIZE, "4MiB", "largest message", NULL, 0, 0x1p30},
    {"direction", PA_CHOICE, "uni",
     "uni: ping-pong and one-way windows; bi: both ranks send at once", "uni,bi", 0, 0},
    {"peer", PA_INT, "1", "the rank that rank 0 exchanges messages with", NULL, 1, 1e7},
    {"window", PA_INT, "64", "nonblocking sends in flight per bandwidth iteration", NULL, 1, 4096},
    {"window_bytes", PA_SIZE, "4MiB",
     "at most this many bytes in flight: fewer sends for large messages, so that the receive "
     "slots stay cache-sized and the figure is the transport's, not DRAM's",
     NULL, 1, 0x1p34},
    PA_COMM_TIMING_PARAMS("11", "1ms", "2s"),
};

/* 0 (when min_bytes is 0), then min_bytes (at least 1) doubling up to max_bytes. */
static int message_sizes(size_t min_bytes, size_t max_bytes, size_t *sizes, int capacity)
{
    int n = 0;
    if (min_bytes == 0)
        sizes[n++] = 0;
    for (size_t s = min_bytes ? min_bytes : 1; s <= max_bytes && n < capacity; s *= 2)
        sizes[n++] = s;
    return n;
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-pingpong",
                  "MPI point-to-point latency and bandwidth vs message size", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    int peer = (int)pa_arg_int(&args, "peer");
    pa_comm_require(&world, world.size >= 2,
                    "a ping-pong needs two ranks, but np=%d: launch with np=2 or more", world.size);
    pa_comm_require(&world, peer < world.size,
                    "peer=%d is not a rank of this job (np=%d): choose a peer between 1 and %d",
                    peer, world.size, world.size - 1);
    size_t min_bytes = pa_arg_size(&args, "min_bytes"), max_bytes = pa_arg_size(&args, "max_bytes");
    pa_comm_require(&world, min_bytes <= max_bytes, "min_bytes=%zu exceeds max_bytes=%zu",
                    min_bytes, max_bytes);
    size_t sizes[64];
    int nsizes = message_sizes(min_bytes, max_bytes, sizes, 64);
    int bidirectional = strcmp(pa_arg_text(&args, "direction"), "bi") == 0;
    int window = (int)pa_arg_int(&args, "window");
    size_t window_bytes = pa_arg_size(&args, "window_bytes");
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    int pair[2] = {0, peer};
    MPI_Comm comm = pa_comm_of(&world, pair, 2);
    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    pa_p2p p2p;
    if (comm != MPI_COMM_NULL)
        pa_p2p_init(&p2p, comm, sizes[nsizes - 1],
                    pa_p2p_recv_bytes(sizes[nsizes - 1], window, window_bytes), window);
    for (int s = 0; s < nsizes && comm != MPI_COMM_NULL; s++) {
        pa_p2p_result result;
        pa_p2p_measure_latency(&p2p, comm, sizes[s], bidirectional, &timing, &result);
        if (sizes[s] > 0) /* no bandwidth of empty messages */
            pa_p2p_measure_bandwidth(&p2p, comm, sizes[s],
                                     pa_p2p_window(sizes[s], window, window_bytes), bidirectional,
                                     &timing, &result);
        if (world.rank == 0) {
            pa_comm_doc_begin(&json, "comm.pingpong", &args, &world);
            pa_json_key_int(&json, "bytes", (long long)sizes[s]);
            pa_comm_doc_context(&json, &world, pair, 2);
            pa_p2p_result_json(&json, &result);
            pa_json_end_object(&json); /* derived */
            pa_result_end(&json);
        }
        pa_p2p_result_free(&result);
    }
    if (comm != MPI_COMM_NULL) {
        pa_p2p_free(&p2p);
        MPI_Comm_free(&comm);
    }
    pa_comm_join(MPI_COMM_WORLD);
    return pa_comm_docs_finish(&json, &world);
}
