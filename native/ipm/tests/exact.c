/* pa-ipm-exact: an MPI program whose calls are known exactly, for tests/test_ipm.py.
 *
 * Exactly 2 ranks; `other` is the other rank. In program order (regions by MPI_Pcontrol):
 *   phase1:       rank 0 sends 3 x 100 doubles to rank 1 (MPI_Send), rank 1 receives them
 *   (none):       MPI_Allreduce of 1 double, MPI_Barrier
 *   outer:        MPI_Bcast of 10 ints from root 0
 *   outer/inner:  2 x MPI_Reduce of 4 doubles to root 1
 *   outer:        MPI_Barrier
 *   (none):       MPI_Irecv + MPI_Isend of 16 ints with `other`, one MPI_Waitall;
 *                 MPI_Sendrecv of 1 int with `other`
 *   split:        in a communicator with the ranks reversed, sub-rank 0 (world rank 1) sends 5
 *                 chars to sub-rank 1 (world rank 0) with MPI_Isend + MPI_Wait, which receives
 *                 them with MPI_Recv: the peers recorded must be world ranks
 *   phase1 again: MPI_Barrier (the same region as before)
 *   inner:        MPI_Barrier (a region of the same name at the top level: a region of its own)
 *   wild:         rank 0 sends 6 ints to rank 1, which receives them with MPI_Recv from
 *                 MPI_ANY_SOURCE into room for 100, with MPI_STATUS_IGNORE; rank 1 sends 3 ints
 *                 to rank 0, which receives them with MPI_Irecv from MPI_ANY_SOURCE into room for
 *                 100 and MPI_Waitany with MPI_STATUS_IGNORE: the bytes recorded are those that
 *                 arrived, the peers the real sources
 *   io (perfatlas_ipm.h): open + write of 1000 bytes + fsync + close of DIR/posix-RANK.dat;
 *                 fopen + fwrite of 10 doubles + fclose of DIR/stdio-RANK.dat; MPI_File_open of
 *                 DIR/shared.dat, MPI_File_write_at_all of 16 ints at 64 x rank,
 *                 MPI_File_read_at of them back, MPI_File_close (the POSIX I/O MPI-IO does
 *                 underneath is not counted)
 * DIR is the first argument (default "."). Every received value is checked; a wrong one exits
 * with status 1. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "perfatlas_ipm.h"
#include "two_ranks.h"

int main(int argc, char **argv)
{
    int rank, size;
    if (!two_ranks(&argc, &argv, "pa-ipm-exact", &rank, &size))
        return 2;
    int other = 1 - rank;

    double message[100];
    MPI_Pcontrol(1, "phase1");
    for (int m = 0; m < 3; m++) {
        if (rank == 0) {
            for (int i = 0; i < 100; i++)
                message[i] = m * 100 + i;
            MPI_Send(message, 100, MPI_DOUBLE, 1, m, MPI_COMM_WORLD);
        } else {
            MPI_Recv(message, 100, MPI_DOUBLE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            expect(message[0] == m * 100 && message[99] == m * 100 + 99, "phase1 message");
        }
    }
    MPI_Pcontrol(-1, "phase1");

    double one = 1.0, sum = 0.0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect(sum == 2.0, "allreduce sum");
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Pcontrol(1, "outer");
    int ints[10] = {0};
    if (rank == 0)
        for (int i = 0; i < 10; i++)
            ints[i] = i + 1;
    MPI_Bcast(ints, 10, MPI_INT, 0, MPI_COMM_WORLD);
    expect(ints[9] == 10, "broadcast");
    MPI_Pcontrol(1, "inner");
    double four[4] = {1, 2, 3, 4}, reduced[4];
    for (int r = 0; r < 2; r++) {
        MPI_Reduce(four, reduced, 4, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
        if (rank == 1)
            expect(reduced[3] == 8.0, "reduce");
    }
    MPI_Pcontrol(-1, "inner");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "outer");

    int out[16], in[16];
    for (int i = 0; i < 16; i++)
        out[i] = rank * 16 + i;
    MPI_Request requests[2];
    MPI_Irecv(in, 16, MPI_INT, other, 7, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(out, 16, MPI_INT, other, 7, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    expect(in[15] == other * 16 + 15, "irecv");
    int mine = rank, theirs = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, other, 8, &theirs, 1, MPI_INT, other, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    expect(theirs == other, "sendrecv");

    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
    int sub_rank;
    MPI_Comm_rank(reversed, &sub_rank);
    expect(sub_rank == other, "split rank");
    MPI_Pcontrol(1, "split");
    char text[5] = "abcd";
    if (sub_rank == 0) {
        MPI_Request request;
        MPI_Isend(text, 5, MPI_CHAR, 1, 9, reversed, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        char got[5] = "";
        MPI_Recv(got, 5, MPI_CHAR, 0, 9, reversed, MPI_STATUS_IGNORE);
        expect(got[3] == 'd', "split message");
    }
    MPI_Pcontrol(-1, "split");
    MPI_Comm_free(&reversed);

    MPI_Pcontrol(1, "phase1");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "phase1");
    MPI_Pcontrol(1, "inner");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "inner");

    MPI_Pcontrol(1, "wild");
    int room[100] = {0};
    if (rank == 0) {
        int six[6] = {1, 2, 3, 4, 5, 6};
        MPI_Send(six, 6, MPI_INT, 1, 10, MPI_COMM_WORLD);
        MPI_Request request;
        int index = -1;
        MPI_Irecv(room, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
        MPI_Waitany(1, &request, &index, MPI_STATUS_IGNORE);
        expect(index == 0 && room[2] == 30, "wildcard irecv");
    } else {
        MPI_Recv(room, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        expect(room[5] == 6, "wildcard recv");
        int three[3] = {10, 20, 30};
        MPI_Send(three, 3, MPI_INT, 0, 11, MPI_COMM_WORLD);
    }
    MPI_Pcontrol(-1, "wild");

    perfatlas_ipm_begin("io");
    const char *folder = argc > 1 ? argv[1] : ".";
    char path[4096];
    char bytes[1000] = {0};
    snprintf(path, sizeof path, "%s/posix-%d.dat", folder, rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    expect(fd >= 0 && write(fd, bytes, sizeof bytes) == 1000, "posix write");
    expect(fsync(fd) == 0 && close(fd) == 0, "posix close");
    snprintf(path, sizeof path, "%s/stdio-%d.dat", folder, rank);
    FILE *file = fopen(path, "w");
    double ten[10] = {0};
    expect(file != NULL && fwrite(ten, sizeof ten[0], 10, file) == 10, "stdio write");
    expect(fclose(file) == 0, "stdio close");
    snprintf(path, sizeof path, "%s/shared.dat", folder);
    MPI_File shared;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &shared);
    int sixteen[16], back[16] = {0};
    for (int i = 0; i < 16; i++)
        sixteen[i] = rank * 100 + i;
    MPI_File_write_at_all(shared, 64 * rank, sixteen, 16, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at(shared, 64 * rank, back, 16, MPI_INT, MPI_STATUS_IGNORE);
    expect(back[15] == rank * 100 + 15, "MPI-IO read");
    MPI_File_close(&shared);
    perfatlas_ipm_end("io");

    MPI_Finalize();
    return failures ? 1 : 0;
}
