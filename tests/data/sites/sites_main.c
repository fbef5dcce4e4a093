/* The call-site tests' C program (tests/test_ipm_sites.py), on 2 ranks: the same call from
 * several lines of the executable and of a shared library, with other counts and sizes at each.
 * Each line that calls MPI is marked "site: NAME". */
#include <mpi.h>

#include "sites.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* site: main-rank */
    double one = 1, two[2] = {1, 2}, sum[2];
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&one, sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site: main-sum-1 */
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(two, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site: main-sum-2 */
    if (rank == 0)
        sites_lib_send(1, 6); /* site: main-calls-lib */
    else
        sites_lib_receive(0, 6); /* site: main-calls-lib */
    MPI_Barrier(MPI_COMM_WORLD); /* site: main-barrier */
    MPI_Finalize();
    return 0;
}
