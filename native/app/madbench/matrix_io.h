/* Out-of-core matrices: MADbench writes every bin's dS/dC_b and W_b to disk and reads them back
 * one at a time, so only a few matrices are ever in memory.
 *
 * io=files: each process its own file per kind (DIR/dSdC.RANK, DIR/W.RANK), written and read
 * with POSIX pwrite/pread; bin b's share lies at offset b x (share bytes).
 * io=shared: one file per kind (DIR/dSdC, DIR/W) through MPI-IO, holding every bin's whole matrix
 * in column-major order, bin b at byte b n^2 8; each process's view is its block-cyclic elements
 * (MPI_Type_create_darray over the world grid), written and read with independent
 * MPI_File_write_at / MPI_File_read_at.
 *
 * Throttling (MADbench's RMOD and WMOD): at most k = max(1, np / mod) processes read (or write) at
 * once. The ranks form k token chains, rank r in chain r mod k after rank r - k: a rank waits for
 * a zero-byte token from its predecessor, does its I/O, then passes the token to rank r + k.
 * The first k ranks start at once; each chain carries one token, so k transfers are in flight.
 * mod = 1 means no tokens at all. */
#ifndef PA_MADBENCH_MATRIX_IO_H
#define PA_MADBENCH_MATRIX_IO_H

#include <mpi.h>
#include <pthread.h>

#include "grid.h"

typedef struct {
    int shared; /* io=shared */
    const char *dir;
    int rank, size;
    int readers, writers;             /* at once */
    MPI_Comm tokens;                  /* a duplicate of MPI_COMM_WORLD for the tokens */
    double bytes_read, bytes_written; /* by this process, since the last reset */
    double wait_s; /* this process's calling thread blocked on transfers (tokens included) and on
                      the helper thread's, since the last reset */
} pa_io;

void pa_io_init(pa_io *io, int shared, const char *dir, int rmod, int wmod);
void pa_io_free(pa_io *io);
/* How many processes do I/O at once: max(1, processes / mod). */
int pa_io_concurrent(int processes, int mod);

typedef struct {
    pa_io *io;
    const pa_block_matrix *layout; /* the world-grid matrix whose shares are stored */
    char path[4096];
    int fd;          /* io=files */
    MPI_File handle; /* io=shared */
    MPI_Datatype view;
} pa_matrix_file;

/* Opens (creating when `create`) the file of matrix kind `name`; collective. An error is one
 * sentence and exit status 2 on every rank. */
void pa_matrix_file_open(pa_matrix_file *file, pa_io *io, const char *name,
                         const pa_block_matrix *layout, int create);
void pa_matrix_file_write(pa_matrix_file *file, int bin, const double *share);
void pa_matrix_file_read(pa_matrix_file *file, int bin, double *share);
void pa_matrix_file_close(pa_matrix_file *file);

/* Transfers that overlap computation: pa_matrix_file_begin runs the listed reads and writes, in
 * order, on a helper thread (POSIX pread/pwrite, no MPI call on it), pa_matrix_file_end waits for
 * them, counts their bytes and reports a failure (one sentence, MPI_Abort). Only where no token
 * orders the ranks' I/O: io=files without throttling (pa_matrix_file_can_overlap). */
#define PA_MATRIX_JOBS 2
typedef struct {
    pa_matrix_file *file;
    int bin, writing;
    double *share;
} pa_matrix_job;
typedef struct {
    pa_matrix_job jobs[PA_MATRIX_JOBS];
    int count;
    const char *why[PA_MATRIX_JOBS]; /* NULL, or why job k failed */
    int running;                     /* a helper thread runs them */
    pthread_t thread;
} pa_matrix_async;
int pa_matrix_file_can_overlap(const pa_io *io);
void pa_matrix_file_begin(pa_matrix_async *async);
void pa_matrix_file_end(pa_matrix_async *async);
/* Removes the files of kind `name`; collective. */
void pa_matrix_file_remove(pa_io *io, const char *name);

#endif
