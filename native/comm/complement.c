/* pa-comm-complement: every rank i paired with rank np-1-i, all pairs at once (the complement
 * permutation of the LANL Lightning report): latency and bandwidth per pair, one document each.
 *
 * The pairs run concurrently, so on a fabric each pair's messages cross the network at the same
 * time as everyone else's (on a fat tree the complement permutation crosses the bisection). The
 * lower rank of each pair initiates (p2p.h); all pairs share iteration counts and start every
 * sample together (a barrier of all ranks), so the samples overlap in time. A pair whose figures
 * stand apart from the others' is an anomaly (perfatlas.comm.analysis_comm). */
#include <stdlib.h>

#include "alloc.h"
#include "comm.h"
#include "p2p.h"
#include "result.h"

static const pa_param params[] = {
    PA_P2P_PAIR_PARAMS(
        "at most this many bytes in flight per pair (receive slots stay cache-sized)"),
    PA_COMM_TIMING_PARAMS("11", "1ms", "2s"),
};

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-complement",
                  "MPI latency and bandwidth of every pair (i, np-1-i), all pairs at once", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    pa_comm_require(&world, world.size >= 2 && world.size % 2 == 0,
                    "the complement pattern pairs rank i with rank np-1-i, so np must be even "
                    "(and at least 2), but np=%d",
                    world.size);
    pa_p2p_pair sizes;
    pa_p2p_pair_from_args(&sizes, &args);
    pa_timing timing;
    pa_timing_from_args(&timing, &args);

    int pairs = world.size / 2;
    int low = world.rank < pairs ? world.rank : world.size - 1 - world.rank;
    MPI_Comm pair_comm; /* the lower rank is 0 in it, so it initiates */
    MPI_Comm_split(MPI_COMM_WORLD, low, world.rank, &pair_comm);
    pa_p2p_result mine;
    pa_p2p_measure_pair(&sizes, pair_comm, MPI_COMM_WORLD, &timing, &mine);
    MPI_Comm_free(&pair_comm);

    /* every initiator's result to rank 0, one pair at a time */
    pa_p2p_result *results =
        world.rank == 0 ? pa_calloc((size_t)pairs, sizeof *results, "results") : NULL;
    if (world.rank == 0)
        results[0] = mine;
    for (int i = 1; i < pairs; i++) {
        if (world.rank == i)
            pa_p2p_result_to_root(&mine, i, world.rank);
        else if (world.rank == 0)
            pa_p2p_result_to_root(&results[i], i, world.rank);
    }
    if (world.rank != 0)
        pa_p2p_result_free(&mine);

    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    if (world.rank == 0) {
        for (int i = 0; i < pairs; i++) {
            int pair[2] = {i, world.size - 1 - i};
            pa_comm_doc_begin(&json, "comm.complement", &args, &world);
            pa_json_key(&json, "pair");
            pa_json_begin_array(&json);
            pa_json_int(&json, pair[0]);
            pa_json_int(&json, pair[1]);
            pa_json_end_array(&json);
            pa_comm_doc_context(&json, &world, pair, 2);
            pa_p2p_result_json(&json, &results[i]);
            pa_json_key_int(&json, "concurrent_pairs", pairs);
            pa_json_end_object(&json);
            pa_result_end(&json);
            pa_p2p_result_free(&results[i]);
        }
        free(results);
    }
    return pa_comm_docs_finish(&json, &world);
}
