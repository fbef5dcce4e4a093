/* pa-ipm-partial: a program that never reaches MPI_Finalize, for tests/test_ipm.py.
 *
 * Every rank makes 2 MPI_Barrier in region "before". Then, with the argument "abort", the last
 * rank calls MPI_Abort (the launcher kills the others, which wait in a barrier); with "exit",
 * every rank returns from main without MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int aborting = argc > 1 && strcmp(argv[1], "abort") == 0;
    if (!aborting && !(argc > 1 && strcmp(argv[1], "exit") == 0)) {
        if (rank == 0)
            fprintf(stderr, "pa-ipm-partial: say abort or exit\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Pcontrol(1, "before");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "before");
    if (aborting) {
        if (rank == size - 1)
            MPI_Abort(MPI_COMM_WORLD, 5);
        MPI_Barrier(MPI_COMM_WORLD); /* never completes: the last rank is gone */
    }
    return 0;
}
