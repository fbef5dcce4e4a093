/* pa-ipm-polls: polls whose counts are known exactly (tests/test_ipm.py), for the sampled timing
 * of the Test family (polls.c). Exactly 2 ranks. Rank 0 posts a receive that rank 1 satisfies
 * only when told to, so that every poll before that fails:
 *   region "spin":  1000 MPI_Test        (a run longer than the exactly timed first 64 calls)
 *   region "short":   10 MPI_Testany of 2 requests (a run timed exactly)
 *   region "spin" again: 500 MPI_Test   (the same region's run resumed after another region)
 * Before the receive is posted (so that no request is tracked and a call's time is all in
 * PMPI_Testany), region "periodic": 1000000 MPI_Testany of null requests, every tenth (call
 * i = 5 mod 10) over PERIODIC_SLOW of them, the others over one: a poll cost periodic in the
 * call count, which sampling every k-th call (k even) would never see.
 * then rank 0 tells rank 1 to send, and MPI_Test until the receive completes (outside regions,
 * at least one call: the completing one). */
#include <stdlib.h>

#include "two_ranks.h"

#define PERIODIC_CALLS 1000000
#define PERIODIC_SLOW  500

static void periodic(void)
{
    static MPI_Request nulls[PERIODIC_SLOW];
    int index, flag;
    for (int i = 0; i < PERIODIC_SLOW; i++)
        nulls[i] = MPI_REQUEST_NULL;
    MPI_Pcontrol(1, "periodic");
    for (int i = 0; i < PERIODIC_CALLS; i++)
        MPI_Testany(i % 10 == 5 ? PERIODIC_SLOW : 1, nulls, &index, &flag, MPI_STATUS_IGNORE);
    MPI_Pcontrol(-1, "periodic");
}

int main(int argc, char **argv)
{
    int rank, size, flag = 0, index, go = 1, value = 0;
    if (!two_ranks(&argc, &argv, "pa-ipm-polls", &rank, &size))
        return 2;
    if (rank == 0) {
        MPI_Request requests[2];
        periodic();
        MPI_Irecv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &requests[0]);
        requests[1] = MPI_REQUEST_NULL;
        MPI_Pcontrol(1, "spin");
        for (int i = 0; i < 1000; i++)
            MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
        MPI_Pcontrol(-1, "spin");
        MPI_Pcontrol(1, "short");
        for (int i = 0; i < 10; i++)
            MPI_Testany(2, requests, &index, &flag, MPI_STATUS_IGNORE);
        MPI_Pcontrol(-1, "short");
        MPI_Pcontrol(1, "spin");
        for (int i = 0; i < 500; i++)
            MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
        MPI_Pcontrol(-1, "spin");
        expect(!flag, "completion: the receive completed before rank 1 was told to send");
        MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
        while (!flag)
            MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
        expect(value == 42, "value received");
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        value = 42;
        MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
