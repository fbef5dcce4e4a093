/* The frame the exact test programs share (tests/test_ipm*.py): exactly 2 ranks, and checks that
 * count their failures instead of stopping the program. */
#ifndef PA_IPM_TWO_RANKS_H
#define PA_IPM_TWO_RANKS_H

#include <mpi.h>
#include <stdio.h>

static const char *program_name;
static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: wrong %s\n", program_name, what);
        failures++;
    }
}

/* MPI_Init, MPI_Comm_rank, MPI_Comm_size (the calls the tests expect first, outside any region).
 * 1 with 2 ranks; else 0, after one sentence from rank 0 and MPI_Finalize. */
static int two_ranks(int *argc, char ***argv, const char *name, int *rank, int *size)
{
    program_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (*size == 2)
        return 1;
    if (*rank == 0)
        fprintf(stderr, "%s: run with exactly 2 ranks (np=2), not %d\n", name, *size);
    MPI_Finalize();
    return 0;
}

#endif
