/* The shared library of the call-site tests (tests/test_ipm_sites.py): MPI calls from known lines
 * of a library the program links. Each line that calls MPI is marked "site: NAME". */
#include <mpi.h>

#include "sites.h"

void sites_lib_send(int peer, int times)
{
    double buffer[4] = {0};
    for (int i = 0; i < times; i++)
        MPI_Send(buffer, 4, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD); /* site: lib-send */
    MPI_Barrier(MPI_COMM_WORLD); /* site: lib-barrier */
}

void sites_lib_receive(int peer, int times)
{
    double buffer[4];
    for (int i = 0; i < times; i++)
        MPI_Recv(buffer, 4, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* site: lib-recv */
    MPI_Barrier(MPI_COMM_WORLD); /* site: lib-barrier */
}
