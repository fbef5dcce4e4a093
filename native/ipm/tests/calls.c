/* pa-ipm-calls: the calls of calls.def beyond pa-ipm-exact's, each made a known number of times
 * with known bytes and peers, for tests/test_ipm_calls.py.
 *
 * Exactly 2 ranks; `other` is the other rank. In program order (regions by MPI_Pcontrol):
 *   (none): MPI_Comm_rank, MPI_Comm_size, 2 x MPI_Wtime
 *   p2p:    rank 0 MPI_Ssend 10 ints to 1 (MPI_Recv);
 *           rank 1 MPI_Buffer_attach, MPI_Bsend 5 doubles to 0 (MPI_Recv), MPI_Buffer_detach;
 *           rank 0 MPI_Irecv of 3 ints, MPI_Barrier, then rank 1 MPI_Rsend 3 ints, rank 0 MPI_Wait;
 *           rank 0 MPI_Issend 4 ints to 1 + MPI_Wait (MPI_Recv);
 *           rank 1 MPI_Send 6 chars to 0, which MPI_Probe, MPI_Get_count and MPI_Recv them;
 *           rank 0 MPI_Send 2 doubles to 1, which MPI_Mprobe and MPI_Mrecv them;
 *           rank 0 MPI_Send_init of 4 ints to 1, rank 1 MPI_Recv_init of 4 ints from 0, each
 *           2 x (MPI_Start + MPI_Wait), then MPI_Request_free;
 *           MPI_Sendrecv_replace of 1 int with `other`
 *   coll:   MPI_Scatter of 2 ints per rank from root 0; MPI_Gatherv of rank + 1 ints to root 1;
 *           MPI_Allgatherv of rank + 1 doubles; MPI_Alltoallv of rank + j + 1 ints to rank j;
 *           MPI_Reduce_scatter_block of 3 doubles per rank; MPI_Scan of 1 int;
 *           MPI_Iallreduce of 2 doubles + MPI_Wait
 *   rma:    MPI_Win_create over 4 ints; MPI_Win_fence; rank 0 MPI_Put 2 ints into rank 1, rank 1
 *           MPI_Get 1 int from rank 0; MPI_Win_fence; MPI_Accumulate (MPI_SUM) of 1 int into
 *           `other`; MPI_Win_fence; MPI_Win_free
 *   types:  MPI_Type_contiguous of 3 ints, MPI_Type_commit; rank 0 MPI_Send 2 of them to 1
 *           (MPI_Recv); MPI_Type_free; then the same with 5 ints (a new type, likely under the
 *           freed one's handle: its size must not be the old one's)
 *   io:     MPI_File_open (MPI_COMM_SELF) of DIR/calls-RANK.dat, MPI_File_write of 10 ints,
 *           MPI_File_seek to 0, MPI_File_read into room for 20 ints (10 arrive), MPI_File_close
 * DIR is the first argument (default "."). Every received value is checked; a wrong one exits
 * with status 1. */
#include <mpi.h>
#include <stdio.h>

#include "two_ranks.h"

static void point_to_point(int rank, int other)
{
    int ints[10] = {0};
    if (rank == 0) {
        for (int i = 0; i < 10; i++)
            ints[i] = i;
        MPI_Ssend(ints, 10, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(ints, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(ints[9] == 9, "ssend");
    }

    double doubles[5] = {0};
    if (rank == 1) {
        static char buffer[5 * sizeof(double) + MPI_BSEND_OVERHEAD];
        for (int i = 0; i < 5; i++)
            doubles[i] = 0.5 * i;
        MPI_Buffer_attach(buffer, sizeof buffer);
        MPI_Bsend(doubles, 5, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        void *detached;
        int detached_size;
        MPI_Buffer_detach(&detached, &detached_size);
    } else {
        MPI_Recv(doubles, 5, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(doubles[4] == 2.0, "bsend");
    }

    int three[3] = {0};
    MPI_Request request;
    if (rank == 0) { /* a ready send needs its receive posted first: the barrier orders them */
        MPI_Irecv(three, 3, MPI_INT, 1, 3, MPI_COMM_WORLD, &request);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        expect(three[2] == 3, "rsend");
    } else {
        three[0] = 1, three[1] = 2, three[2] = 3;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Rsend(three, 3, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }

    int synchronous[4] = {0};
    if (rank == 0) {
        synchronous[3] = 7;
        MPI_Issend(synchronous, 4, MPI_INT, 1, 4, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(synchronous, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(synchronous[3] == 7, "issend");
    }

    char text[6] = "hello";
    MPI_Status status;
    if (rank == 1) {
        MPI_Send(text, 6, MPI_CHAR, 0, 5, MPI_COMM_WORLD);
    } else {
        int length = 0;
        char got[6] = "";
        MPI_Probe(1, 5, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_CHAR, &length);
        MPI_Recv(got, length, MPI_CHAR, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(length == 6 && got[4] == 'o', "probe");
    }

    double two[2] = {1.5, 2.5};
    if (rank == 0) {
        MPI_Send(two, 2, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD);
    } else {
        MPI_Message message;
        two[0] = two[1] = 0;
        MPI_Mprobe(0, 6, MPI_COMM_WORLD, &message, &status);
        MPI_Mrecv(two, 2, MPI_DOUBLE, &message, MPI_STATUS_IGNORE);
        expect(two[1] == 2.5, "mrecv");
    }

    int four[4] = {0};
    if (rank == 0)
        MPI_Send_init(four, 4, MPI_INT, 1, 7, MPI_COMM_WORLD, &request);
    else
        MPI_Recv_init(four, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &request);
    for (int round = 1; round <= 2; round++) {
        if (rank == 0)
            four[3] = round;
        MPI_Start(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        expect(four[3] == round, "persistent");
    }
    MPI_Request_free(&request);

    int value = rank;
    MPI_Sendrecv_replace(&value, 1, MPI_INT, other, 8, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect(value == other, "sendrecv_replace");
}

static void collectives(int rank)
{
    int scattered[4] = {10, 11, 20, 21}, part[2] = {0};
    MPI_Scatter(scattered, 2, MPI_INT, part, 2, MPI_INT, 0, MPI_COMM_WORLD);
    expect(part[1] == 10 * (rank + 1) + 1, "scatter");

    int mine[2] = {rank, rank}, gathered[3] = {0}, counts[2] = {1, 2}, displs[2] = {0, 1};
    MPI_Gatherv(mine, rank + 1, MPI_INT, gathered, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
    if (rank == 1)
        expect(gathered[0] == 0 && gathered[2] == 1, "gatherv");

    double my_doubles[2] = {rank, rank}, all[3] = {0};
    MPI_Allgatherv(my_doubles, rank + 1, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE,
                   MPI_COMM_WORLD);
    expect(all[0] == 0 && all[2] == 1, "allgatherv");

    /* rank r sends r + j + 1 ints to rank j, each the value 10 r + j */
    int send_counts[2] = {rank + 1, rank + 2}, send_displs[2] = {0, rank + 1};
    int recv_counts[2] = {rank + 1, rank + 2}, recv_displs[2] = {0, rank + 1};
    int out[5], in[5] = {0};
    for (int j = 0, at = 0; j < 2; j++)
        for (int i = 0; i < send_counts[j]; i++)
            out[at++] = 10 * rank + j;
    MPI_Alltoallv(out, send_counts, send_displs, MPI_INT, in, recv_counts, recv_displs, MPI_INT,
                  MPI_COMM_WORLD);
    expect(in[0] == rank && in[recv_displs[1]] == 10 + rank, "alltoallv");

    double blocks[6] = {1, 2, 3, 4, 5, 6}, block[3] = {0};
    MPI_Reduce_scatter_block(blocks, block, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect(block[2] == 2 * blocks[3 * rank + 2], "reduce_scatter_block");

    int one = 1, prefix = 0;
    MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect(prefix == rank + 1, "scan");

    double pair[2] = {1, 2}, sums[2] = {0};
    MPI_Request request;
    MPI_Iallreduce(pair, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(sums[1] == 4, "iallreduce");
}

static void one_sided(int rank, int other)
{
    int exposed[4] = {0, 0, 100 * rank, 40 + rank};
    MPI_Win win;
    MPI_Win_create(exposed, sizeof exposed, sizeof exposed[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    int put[2] = {7, 8}, got = -1;
    if (rank == 0)
        MPI_Put(put, 2, MPI_INT, 1, 0, 2, MPI_INT, win);
    else
        MPI_Get(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    int added = 1 + rank;
    MPI_Accumulate(&added, 1, MPI_INT, other, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    expect(exposed[2] == 100 * rank + 1 + other, "accumulate");
    if (rank == 1)
        expect(exposed[1] == 8 && got == 40, "put and get");
}

/* Two of a contiguous type of `ints` ints from rank 0 to rank 1, the type freed after. */
static void contiguous_pair(int rank, int ints)
{
    MPI_Datatype type;
    MPI_Type_contiguous(ints, MPI_INT, &type);
    MPI_Type_commit(&type);
    int values[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    if (rank == 0) {
        MPI_Send(values, 2, type, 1, 9, MPI_COMM_WORLD);
    } else {
        values[2 * ints - 1] = 0;
        MPI_Recv(values, 2, type, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(values[2 * ints - 1] == 2 * ints - 1, "derived datatype");
    }
    MPI_Type_free(&type);
}

static void datatypes(int rank)
{
    contiguous_pair(rank, 3);
    contiguous_pair(rank, 5);
}

static void file_io(int rank, const char *folder)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/calls-%d.dat", folder, rank);
    MPI_File file;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    int ten[10], back[20] = {0};
    for (int i = 0; i < 10; i++)
        ten[i] = rank * 10 + i;
    MPI_File_write(file, ten, 10, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_seek(file, 0, MPI_SEEK_SET);
    MPI_File_read(file, back, 20, MPI_INT, MPI_STATUS_IGNORE); /* 10 are there */
    expect(back[9] == rank * 10 + 9 && back[10] == 0, "MPI-IO read");
    MPI_File_close(&file);
}

int main(int argc, char **argv)
{
    int rank, size;
    if (!two_ranks(&argc, &argv, "pa-ipm-calls", &rank, &size))
        return 2;
    double started = MPI_Wtime();
    expect(MPI_Wtime() >= started, "MPI_Wtime");

    MPI_Pcontrol(1, "p2p");
    point_to_point(rank, 1 - rank);
    MPI_Pcontrol(-1, "p2p");
    MPI_Pcontrol(1, "coll");
    collectives(rank);
    MPI_Pcontrol(-1, "coll");
    MPI_Pcontrol(1, "rma");
    one_sided(rank, 1 - rank);
    MPI_Pcontrol(-1, "rma");
    MPI_Pcontrol(1, "types");
    datatypes(rank);
    MPI_Pcontrol(-1, "types");
    MPI_Pcontrol(1, "io");
    file_io(rank, argc > 1 ? argv[1] : ".");
    MPI_Pcontrol(-1, "io");

    MPI_Finalize();
    return failures ? 1 : 0;
}
