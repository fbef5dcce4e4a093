/* pa-ipm-threads: under MPI_THREAD_MULTIPLE, 4 OpenMP threads per rank each make 10000
 * MPI_Sendrecv of 1 double with their own rank (tag = thread number) inside region "threaded",
 * for tests/test_ipm.py: a lost update in the profiler's table would show as a count below
 * 40000 or wrong bytes.
 *
 * pa-ipm-threads FOLDER exchange: instead, on exactly 2 ranks, 8 threads per rank each make 2000
 * x (MPI_Irecv + MPI_Isend + MPI_Waitall) of 32 bytes with the other rank (tag = thread number),
 * outside any region: request handles are freed and reused by other threads between a
 * completion and its record (requests.c). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define THREADS 4
#define CALLS   10000

#define EXCHANGE_THREADS 8
#define EXCHANGES        2000

static int exchange(int rank)
{
    int failures = 0;
#pragma omp parallel num_threads(EXCHANGE_THREADS) reduction(+ : failures)
    {
        int thread = omp_get_thread_num();
        for (int i = 0; i < EXCHANGES; i++) {
            int out[8] = {rank, thread, i}, in[8] = {-1};
            MPI_Request requests[2];
            MPI_Irecv(in, 8, MPI_INT, 1 - rank, thread, MPI_COMM_WORLD, &requests[0]);
            MPI_Isend(out, 8, MPI_INT, 1 - rank, thread, MPI_COMM_WORLD, &requests[1]);
            MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
            failures += in[0] != 1 - rank || in[1] != thread || in[2] != i;
        }
        failures += omp_get_num_threads() != EXCHANGE_THREADS;
    }
    return failures;
}

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
    if (argc > 2 && strcmp(argv[2], "exchange") == 0) {
        failures = exchange(rank);
        if (failures)
            fprintf(stderr, "pa-ipm-threads: %d wrong messages or thread counts\n", failures);
        MPI_Finalize();
        return failures ? 1 : 0;
    }
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
