/* pa-comm-distance: latency and bandwidth from rank 0 to every other rank, one pair at a time,
 * one document per peer (the LANL Lightning report's rank-distance scan).
 *
 * For each peer r = 1 .. np-1 in turn, ranks 0 and r measure a ping-pong of latency_bytes and a
 * window of bandwidth_bytes messages (p2p.h) while every other rank sleeps; so each figure is one
 * link alone, and a rank whose figures stand apart from the others' (a slow cable, a far switch,
 * a rank on a loaded core) shows as an outlier in the report (perfatlas.comm.analysis_comm). */
#include <stdlib.h>

#include "comm.h"
#include "p2p.h"
#include "result.h"

static const pa_param params[] = {
    PA_P2P_PAIR_PARAMS("at most this many bytes in flight (receive slots stay cache-sized)"),
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
    pa_p2p_pair sizes;
    pa_p2p_pair_from_args(&sizes, &args);
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    for (int peer = 1; peer < world.size; peer++) {
        int pair[2] = {0, peer};
        MPI_Comm comm = pa_comm_of(&world, pair, 2);
        if (comm != MPI_COMM_NULL) {
            pa_p2p_result result;
            pa_p2p_measure_pair(&sizes, comm, comm, &timing, &result);
            if (world.rank == 0) {
                pa_comm_doc_begin(&json, "comm.distance", &args, &world);
                pa_json_key_int(&json, "peer", peer);
                pa_comm_doc_context(&json, &world, pair, 2);
                pa_p2p_result_json(&json, &result);
                pa_json_end_object(&json);
                pa_result_end(&json);
            }
            pa_p2p_result_free(&result);
            MPI_Comm_free(&comm);
        }
        pa_comm_join(MPI_COMM_WORLD);
    }
    return pa_comm_docs_finish(&json, &world);
}
