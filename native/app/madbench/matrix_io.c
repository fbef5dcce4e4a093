#include "matrix_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "timer.h"

enum {
    TOKEN_TAG = 7
};

int pa_io_concurrent(int processes, int mod)
{
    int k = processes / mod;
    return k > 0 ? k : 1;
}

void pa_io_init(pa_io *io, int shared, const char *dir, int rmod, int wmod)
{
    *io = (pa_io){.shared = shared, .dir = dir};
    MPI_Comm_rank(MPI_COMM_WORLD, &io->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &io->size);
    io->readers = pa_io_concurrent(io->size, rmod);
    io->writers = pa_io_concurrent(io->size, wmod);
    MPI_Comm_dup(MPI_COMM_WORLD, &io->tokens);
}

void pa_io_free(pa_io *io) { MPI_Comm_free(&io->tokens); }

/* A failure on some ranks: the lowest of them says why in one sentence, every rank exits 2. */
static void agree(const pa_io *io, int ok, const char *sentence)
{
    int first = ok ? io->size : io->rank;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == io->size)
        return;
    if (first == io->rank) {
        fprintf(stderr, "%s: %s\n", pa_program, sentence);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(2);
}

/* An I/O call that failed halfway through the run: one sentence and MPI_Abort. */
static noreturn void broken(const pa_matrix_file *file, const char *what, const char *why)
{
    fprintf(stderr, "%s: cannot %s %s: %s\n", pa_program, what, file->path, why);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static void token_wait(const pa_io *io, int concurrent)
{
    if (io->rank - concurrent >= 0)
        MPI_Recv(NULL, 0, MPI_BYTE, io->rank - concurrent, TOKEN_TAG, io->tokens,
                 MPI_STATUS_IGNORE);
}

static void token_pass(const pa_io *io, int concurrent)
{
    if (io->rank + concurrent < io->size)
        MPI_Send(NULL, 0, MPI_BYTE, io->rank + concurrent, TOKEN_TAG, io->tokens);
}

/* The darray view of this process's block-cyclic elements in the column-major whole matrix. */
static MPI_Datatype darray_view(const pa_block_matrix *layout, int rank, int size)
{
    const pa_grid *grid = layout->grid;
    int sizes[2] = {layout->n, layout->n};
    int distributions[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int blocks[2] = {layout->nb, layout->nb};
    int processes[2] = {grid->rows, grid->cols}; /* rank = row x cols + col, as BLACS "Row" */
    MPI_Datatype view;
    MPI_Type_create_darray(size, rank, 2, sizes, distributions, blocks, processes,
                           MPI_ORDER_FORTRAN, MPI_DOUBLE, &view);
    MPI_Type_commit(&view);
    return view;
}

void pa_matrix_file_open(pa_matrix_file *file, pa_io *io, const char *name,
                         const pa_block_matrix *layout, int create)
{
    *file = (pa_matrix_file){.io = io, .layout = layout, .fd = -1};
    char sentence[4600];
    if (io->shared) {
        snprintf(file->path, sizeof file->path, "%s/%s", io->dir, name);
        int mode = create ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
        int status = MPI_File_open(MPI_COMM_WORLD, file->path, mode, MPI_INFO_NULL, &file->handle);
        char why[MPI_MAX_ERROR_STRING] = "";
        int length = 0;
        if (status != MPI_SUCCESS)
            MPI_Error_string(status, why, &length);
        snprintf(sentence, sizeof sentence, "cannot %s %s through MPI-IO: %s",
                 create ? "create" : "open", file->path, why);
        agree(io, status == MPI_SUCCESS, sentence);
        if (create) /* emptied, as O_TRUNC does for io=files: nbin whole matrices follow */
            MPI_File_set_size(file->handle, 0);
        file->view = darray_view(layout, io->rank, io->size);
        MPI_File_set_view(file->handle, 0, MPI_DOUBLE, file->view, "native", MPI_INFO_NULL);
        return;
    }
    snprintf(file->path, sizeof file->path, "%s/%s.%d", io->dir, name, io->rank);
    file->fd =
        create ? open(file->path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(file->path, O_RDONLY);
    snprintf(sentence, sizeof sentence, "cannot %s %s: %s", create ? "create" : "open", file->path,
             strerror(errno));
    agree(io, file->fd >= 0, sentence);
}

/* Bytes of one bin's share, and where it lies in a file of io=files. */
static size_t share_bytes(const pa_matrix_file *file)
{
    return pa_matrix_local_count(file->layout) * sizeof(double);
}

/* pread or pwrite of bin b's share, whole; NULL, or why it failed (strerror's or ours). Makes no
 * MPI call: a helper thread may run it (pa_matrix_file_begin). */
static const char *posix_transfer(const pa_matrix_file *file, int bin, double *share, int writing)
{
    size_t total = share_bytes(file), done = 0;
    off_t offset = (off_t)bin * (off_t)total;
    while (done < total) {
        char *at = (char *)share + done;
        ssize_t moved = writing ? pwrite(file->fd, at, total - done, offset + (off_t)done)
                                : pread(file->fd, at, total - done, offset + (off_t)done);
        if (moved < 0 && errno == EINTR)
            continue;
        if (moved < 0)
            return strerror(errno);
        if (moved == 0)
            return "the file ends early";
        done += (size_t)moved;
    }
    return NULL;
}

static void mpiio_transfer(pa_matrix_file *file, int bin, double *share, int writing)
{
    size_t count = pa_matrix_local_count(file->layout);
    MPI_Offset offset = (MPI_Offset)bin * (MPI_Offset)count; /* in doubles of this view */
    MPI_Status status;
    int error =
        writing ? MPI_File_write_at(file->handle, offset, share, (int)count, MPI_DOUBLE, &status)
                : MPI_File_read_at(file->handle, offset, share, (int)count, MPI_DOUBLE, &status);
    int moved = 0;
    if (error == MPI_SUCCESS)
        MPI_Get_count(&status, MPI_DOUBLE, &moved);
    if (error != MPI_SUCCESS || (size_t)moved != count) {
        char why[MPI_MAX_ERROR_STRING] = "the file ends early";
        int length = 0;
        if (error != MPI_SUCCESS)
            MPI_Error_string(error, why, &length);
        broken(file, writing ? "write" : "read", why);
    }
}

static void transfer(pa_matrix_file *file, int bin, double *share, int writing)
{
    pa_io *io = file->io;
    uint64_t start = pa_ticks();
    int concurrent = writing ? io->writers : io->readers;
    token_wait(io, concurrent);
    if (io->shared) {
        mpiio_transfer(file, bin, share, writing);
    } else {
        const char *why = posix_transfer(file, bin, share, writing);
        if (why)
            broken(file, writing ? "write" : "read", why);
    }
    token_pass(io, concurrent);
    *(writing ? &io->bytes_written : &io->bytes_read) += (double)share_bytes(file);
    io->wait_s += pa_ticks_to_seconds(pa_ticks() - start);
}

void pa_matrix_file_write(pa_matrix_file *file, int bin, const double *share)
{
    transfer(file, bin, (double *)share, 1);
}

void pa_matrix_file_read(pa_matrix_file *file, int bin, double *share)
{
    transfer(file, bin, share, 0);
}

int pa_matrix_file_can_overlap(const pa_io *io)
{
    return !io->shared && io->readers == io->size && io->writers == io->size;
}

static void *run_transfers(void *context)
{
    pa_matrix_async *async = context;
    for (int k = 0; k < async->count; k++) {
        const pa_matrix_job *job = &async->jobs[k];
        async->why[k] = posix_transfer(job->file, job->bin, job->share, job->writing);
    }
    return NULL;
}

/* The jobs' time since `start` counted as waited for (all jobs share one pa_io). */
static void add_wait(const pa_matrix_async *async, uint64_t start)
{
    if (async->count)
        async->jobs[0].file->io->wait_s += pa_ticks_to_seconds(pa_ticks() - start);
}

void pa_matrix_file_begin(pa_matrix_async *async)
{
    async->running = pthread_create(&async->thread, NULL, run_transfers, async) == 0;
    if (!async->running) { /* no thread to be had: the same transfers, in this thread */
        uint64_t start = pa_ticks();
        run_transfers(async);
        add_wait(async, start);
    }
}

void pa_matrix_file_end(pa_matrix_async *async)
{
    uint64_t start = pa_ticks();
    if (async->running)
        pthread_join(async->thread, NULL);
    add_wait(async, start); /* what the computation did not hide */
    for (int k = 0; k < async->count; k++) {
        const pa_matrix_job *job = &async->jobs[k];
        if (async->why[k])
            broken(job->file, job->writing ? "write" : "read", async->why[k]);
        *(job->writing ? &job->file->io->bytes_written : &job->file->io->bytes_read) +=
            (double)share_bytes(job->file);
    }
    *async = (pa_matrix_async){0};
}

void pa_matrix_file_close(pa_matrix_file *file)
{
    if (file->io->shared) {
        MPI_File_close(&file->handle);
        MPI_Type_free(&file->view);
    } else if (file->fd >= 0) {
        close(file->fd);
    }
}

void pa_matrix_file_remove(pa_io *io, const char *name)
{
    char path[4096];
    MPI_Barrier(MPI_COMM_WORLD);
    if (io->shared) {
        snprintf(path, sizeof path, "%s/%s", io->dir, name);
        if (io->rank == 0)
            unlink(path);
    } else {
        snprintf(path, sizeof path, "%s/%s.%d", io->dir, name, io->rank);
        unlink(path);
    }
}
