/* pa-ipm-threads: under MPI_THREAD_MULTIPLE, 4 OpenMP threads per rank each make 10000
 * MPI_Sendrecv of 1 double with their own rank (tag = thread number) inside region "threaded",
 * for tests/test_ipm.py: a lost update in the profiler's table would show as a count below
 * 40000 or wrong bytes. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define THREADS 4
#define CALLS   10000

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "pa-ipm-threads: this MPI does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 3;
    }
    int rank, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#pragma omp parallel num_threads(THREADS) reduction(+ : failures)
    {
        int thread = omp_get_thread_num();
        MPI_Pcontrol(1, "threaded"); /* each thread's own region stack; one region, interned once */
        for (int call = 0; call < CALLS; call++) {
            double out = thread * CALLS + call, in = -1;
            MPI_Sendrecv(&out, 1, MPI_DOUBLE, rank, thread, &in, 1, MPI_DOUBLE, rank, thread,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            failures += in != out;
        }
        MPI_Pcontrol(-1, "threaded");
        failures += omp_get_num_threads() != THREADS;
    }
    if (failures)
        fprintf(stderr, "pa-ipm-threads: %d wrong messages or thread counts\n", failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
