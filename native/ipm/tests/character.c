/* pa-ipm-character: exchanges of a known character, for the join of a profile with the comm
 * atlas (tests/test_profile_atlas.py).
 *
 *   pa-ipm-character halo ITERATIONS BYTES COMPUTE_US
 *       in region "exchange", each iteration: COMPUTE_US microseconds of work (the last rank 3
 *       times as long), then a ring halo exchange: BYTES to the right neighbour and BYTES to
 *       the left one, each by MPI_Sendrecv. Large BYTES: bandwidth-bound; 8: latency-bound; work on
 *       the last rank: the others wait.
 *   pa-ipm-character turns ITERATIONS BYTES COMPUTE_US
 *       the same as halo, but the rank that works 3 times as long is rank i % size in iteration
 *       i: every rank waits in turn and all wait alike (an imbalance that alternates).
 *   pa-ipm-character pairs ITERATIONS BYTES COMPUTE_US
 *       in region "exchange", the same work, then BYTES both ways with the partner rank
 *       (rank + size / 2) % size and 8 bytes both ways with the neighbour rank ^ 1, each by
 *       MPI_Sendrecv: heavy pairs and light ones, for the placement what-if (an even size).
 *   pa-ipm-character allreduce ITERATIONS BYTES COMPUTE_US
 *       in region "reduce", the same work, then MPI_Allreduce of BYTES / 8 doubles (sum).
 *   pa-ipm-character rma ITERATIONS BYTES COMPUTE_US
 *       in region "access", the same work, then MPI_Put of BYTES into the right neighbour's
 *       window (MPI_Win_allocate, made outside the region) and MPI_Win_fence; each rank checks
 *       what its left neighbour put. Iterations alternate between two halves of the window, so
 *       a put never overwrites what its target still reads.
 *
 * The ranks enter the region together (an MPI_Barrier outside it). Every message's content is
 * checked; a wrong one fails the program (exit status 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Busy work for `us` microseconds (the CPU kept busy, as computation keeps it). */
static void work(double us)
{
    double end = now() + 1e-6 * us;
    while (now() < end) {
    }
}

static int halo(int rank, int size, long bytes, char *out, char *in)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, wrong = 0;
    memset(out, 'a' + rank % 26, (size_t)bytes);
    MPI_Sendrecv(out, (int)bytes, MPI_CHAR, right, 1, in, (int)bytes, MPI_CHAR, left, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    wrong |= bytes > 0 && (in[0] != 'a' + left % 26 || in[bytes - 1] != 'a' + left % 26);
    MPI_Sendrecv(out, (int)bytes, MPI_CHAR, left, 2, in, (int)bytes, MPI_CHAR, right, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    wrong |= bytes > 0 && (in[0] != 'a' + right % 26 || in[bytes - 1] != 'a' + right % 26);
    return wrong;
}

/* BYTES both ways with one peer; whether what came back is wrong. */
static int exchange(int rank, int peer, long bytes, char *out, char *in)
{
    memset(out, 'a' + rank % 26, (size_t)bytes);
    MPI_Sendrecv(out, (int)bytes, MPI_CHAR, peer, 3, in, (int)bytes, MPI_CHAR, peer, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return bytes > 0 && (in[0] != 'a' + peer % 26 || in[bytes - 1] != 'a' + peer % 26);
}

static int pairs(int rank, int size, long bytes, char *out, char *in)
{
    return exchange(rank, (rank + size / 2) % size, bytes, out, in) |
           exchange(rank, rank ^ 1, 8, out, in);
}

/* One access epoch of iteration i: BYTES put into half i % 2 of the right neighbour's window;
 * whether what the left one put is wrong. */
static int put(int rank, int size, long i, long bytes, const char *out, char *window, MPI_Win win)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Put(out, (int)bytes, MPI_CHAR, right, (i % 2) * bytes, (int)bytes, MPI_CHAR, win);
    MPI_Win_fence(0, win);
    const char *got = window + (i % 2) * bytes, expected = (char)('a' + (left + i) % 26);
    return bytes > 0 && (got[0] != expected || got[bytes - 1] != expected);
}

static int reduce(int size, long bytes, double *out, double *in)
{
    long n = bytes / 8;
    for (long i = 0; i < n; i++)
        out[i] = (double)i;
    MPI_Allreduce(out, in, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return n > 0 && (in[0] != 0.0 || in[n - 1] != (double)(n - 1) * size);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int allreduce = argc == 5 && strcmp(argv[1], "allreduce") == 0;
    int turns = argc == 5 && strcmp(argv[1], "turns") == 0;
    int paired = argc == 5 && strcmp(argv[1], "pairs") == 0;
    int one_sided = argc == 5 && strcmp(argv[1], "rma") == 0;
    long iterations = argc == 5 ? atol(argv[2]) : 0, bytes = argc == 5 ? atol(argv[3]) : -1;
    double us = argc == 5 ? atof(argv[4]) : -1;
    if ((!allreduce && !turns && !paired && !one_sided &&
         (argc != 5 || strcmp(argv[1], "halo") != 0)) ||
        iterations < 1 || bytes < 0 || bytes > (1L << 30) || (allreduce && bytes % 8) || us < 0 ||
        (paired && size % 2)) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: pa-ipm-character halo|turns|pairs|allreduce|rma ITERATIONS BYTES "
                    "COMPUTE_US (allreduce: BYTES a multiple of 8; pairs: an even "
                    "number of ranks)\n");
        MPI_Finalize();
        return 2;
    }
    char *out = malloc((size_t)bytes + 8), *in = malloc((size_t)bytes + 8);
    int wrong = out == NULL || in == NULL;
    const char *region = allreduce ? "reduce" : one_sided ? "access" : "exchange";
    char *window = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (one_sided) {
        MPI_Win_allocate(2 * (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the ranks start the region together, connected */
    MPI_Pcontrol(1, region);
    for (long i = 0; i < iterations && !wrong; i++) {
        int longer = turns ? (int)(i % size) : size - 1; /* the rank that works 3x as long */
        work(rank == longer ? 3 * us : us);
        if (allreduce)
            wrong |= reduce(size, bytes, (double *)out, (double *)in);
        else if (one_sided) {
            memset(out, 'a' + (int)((rank + i) % 26), (size_t)bytes);
            wrong |= put(rank, size, i, bytes, out, window, win);
        } else
            wrong |= paired ? pairs(rank, size, bytes, out, in) : halo(rank, size, bytes, out, in);
    }
    MPI_Pcontrol(-1, region);
    if (one_sided)
        MPI_Win_free(&win);
    if (wrong)
        fprintf(stderr, "pa-ipm-character: rank %d received a wrong message\n", rank);
    free(out);
    free(in);
    MPI_Finalize();
    return wrong;
}
