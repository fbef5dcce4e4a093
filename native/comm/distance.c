/* pa-comm-distance: latency and bandwidth from rank 0 to every other rank, one pair at a time,
 * one document per peer (the LANL Lightning report's rank-distance scan).
 *
 * For each peer r = 1 .. np-1 in turn, ranks 0 and r measure a ping-pong of latency_bytes and a
 * window of bandwidth_bytes messages (p2p.h) while every other rank sleeps; so each figure is one
 * link alone, and a rank whose figures stand apart from the others' (a slow cable, a far switch,
 * a rank on a loaded core) shows as an outlier in the report (perfatlas.comm_analysis). */
#include <stdlib.h>

#include "comm.h"
#include "p2p.h"
#include "result.h"

static const pa_param params[] = {
    {"latency_bytes", PA_SIZE, "8", "message size of the latency ping-pong", NULL, 0, 0x1p30},
    {"bandwidth_bytes", PA_SIZE, "1MiB", "message size of the bandwidth windows", NULL, 1, 0x1p30},
    {"window", PA_INT, "64", "nonblocking sends in flight per bandwidth iteration", NULL, 1, 4096},
    {"window_bytes", PA_SIZE, "4MiB",
     "at most this many bytes in flight (receive slots stay cache-sized)", NULL, 1, 0x1p34},
    PA_COMM_TIMING_PARAMS("11", "1ms", "1s"),
};

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-distance",
                  "MPI latency and bandwidth from rank 0 to every other rank", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    pa_comm_require(&world, world.size >= 2,
                    "the distance scan needs at least two ranks, but np=%d", world.size);
    size_t latency_bytes = pa_arg_size(&args, "latency_bytes");
    size_t bandwidth_bytes = pa_arg_size(&args, "bandwidth_bytes");
    int window = pa_p2p_window(bandwidth_bytes, (int)pa_arg_int(&args, "window"),
                               pa_arg_size(&args, "window_bytes"));
    size_t largest = latency_bytes > bandwidth_bytes ? latency_bytes : bandwidth_bytes;
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    pa_json json;
    if (world.rank == 0) {
        pa_json_init(&json, pa_args_output(&args));
        pa_json_begin_array(&json);
    }
    for (int peer = 1; peer < world.size; peer++) {
        int pair[2] = {0, peer};
        MPI_Comm comm = pa_comm_of(&world, pair, 2);
        if (comm != MPI_COMM_NULL) {
            pa_p2p p2p;
            pa_p2p_init(&p2p, comm, largest, (size_t)window * bandwidth_bytes, window);
            pa_p2p_result result;
            pa_p2p_measure_latency(&p2p, comm, latency_bytes, 0, &timing, &result);
            pa_p2p_measure_bandwidth(&p2p, comm, bandwidth_bytes, window, 0, &timing, &result);
            if (world.rank == 0) {
                pa_comm_doc_begin(&json, "comm.distance", &args, &world);
                pa_json_key(&json, "peer");
                pa_json_int(&json, peer);
                pa_comm_doc_context(&json, &world, pair, 2);
                pa_p2p_result_json(&json, &result);
                pa_json_end_object(&json);
                pa_result_end(&json);
            }
            pa_p2p_result_free(&result);
            pa_p2p_free(&p2p);
            MPI_Comm_free(&comm);
        }
        pa_comm_join(MPI_COMM_WORLD);
    }
    int failed = 0;
    if (world.rank == 0) {
        pa_json_end_array(&json);
        failed = pa_json_finish(&json);
    }
    return pa_comm_finish(&world, failed);
}
