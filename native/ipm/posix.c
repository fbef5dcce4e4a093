/* POSIX and stdio I/O of the profiled program (posix.def), interposed by symbol (LD_PRELOAD)
 * and forwarded to the next definition (dlsym RTLD_NEXT).
 *
 * Only files the program opened itself are counted: open, creat and fopen outside MPI calls mark
 * the descriptor, close and fclose unmark it. Sockets and pipes of the MPI runtime, the terminal,
 * and the files MPI-IO opens (inside an MPI call, whose time is MPI-IO's) are never counted. The
 * 64-bit-offset variants (open64, pread64, ...) are the same calls under other names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "ipm.h"
#include "timer.h"

#define PA_IPM_MAX_FDS 4096

static atomic_uchar opened_by_program[PA_IPM_MAX_FDS];

/* The next definition of `name` (libc's), resolved on first use. */
#define PA_IPM_NEXT(name)                 \
    static __typeof__(name) *next_##name; \
    if (next_##name == NULL)              \
    next_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int counted(int fd)
{
    return pa_ipm_active && !pa_ipm_self.in_mpi && fd >= 0 && fd < PA_IPM_MAX_FDS &&
           atomic_load_explicit(&opened_by_program[fd], memory_order_relaxed);
}

static void mark(int fd, unsigned char opened)
{
    if (fd >= 0 && fd < PA_IPM_MAX_FDS && !pa_ipm_self.in_mpi)
        atomic_store_explicit(&opened_by_program[fd], opened, memory_order_relaxed);
}

static uint64_t moved(ssize_t result) { return result > 0 ? (uint64_t)result : 0; }

/* Evaluates `call` (of type `type`); when `fd` is counted, times it and records it as `id` with
 * the bytes `bytes` computes from `result`. */
#define PA_IPM_FILE_CALL(type, id, fd, call, bytes)                                      \
    do {                                                                                 \
        if (!counted(fd))                                                                \
            return call;                                                                 \
        uint64_t start = pa_ticks_unfenced();                                            \
        type result = call;                                                              \
        uint64_t ticks = pa_ticks_unfenced() - start;                                    \
        pa_ipm_record(PA_IPM_ID_##id, bytes, -1, MPI_COMM_NULL, ticks, PA_IPM_CALLER()); \
        return result;                                                                   \
    } while (0)

/* An open-like call returning a descriptor: marks it, and records the call while active. */
#define PA_IPM_OPEN_CALL(id, call)                                                       \
    do {                                                                                 \
        uint64_t start = pa_ticks_unfenced();                                            \
        int fd = call;                                                                   \
        uint64_t ticks = pa_ticks_unfenced() - start;                                    \
        mark(fd, 1);                                                                     \
        if (fd >= 0 && pa_ipm_active && !pa_ipm_self.in_mpi)                             \
            pa_ipm_record(PA_IPM_ID_##id, 0, -1, MPI_COMM_NULL, ticks, PA_IPM_CALLER()); \
        return fd;                                                                       \
    } while (0)

static mode_t mode_argument(int flags, va_list rest)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(rest, int) : 0;
}

PA_IPM_EXPORT int open(const char *path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    mode_t mode = mode_argument(flags, rest);
    va_end(rest);
    PA_IPM_NEXT(open);
    PA_IPM_OPEN_CALL(open, next_open(path, flags, mode));
}

PA_IPM_EXPORT int open64(const char *path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    mode_t mode = mode_argument(flags, rest);
    va_end(rest);
    PA_IPM_NEXT(open64);
    PA_IPM_OPEN_CALL(open, next_open64(path, flags, mode));
}

PA_IPM_EXPORT int creat(const char *path, mode_t mode)
{
    PA_IPM_NEXT(creat);
    PA_IPM_OPEN_CALL(open, next_creat(path, mode));
}

PA_IPM_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
    PA_IPM_NEXT(read);
    PA_IPM_FILE_CALL(ssize_t, read, fd, next_read(fd, buf, count), moved(result));
}

PA_IPM_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
    PA_IPM_NEXT(write);
    PA_IPM_FILE_CALL(ssize_t, write, fd, next_write(fd, buf, count), moved(result));
}

PA_IPM_EXPORT ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
    PA_IPM_NEXT(pread);
    PA_IPM_FILE_CALL(ssize_t, pread, fd, next_pread(fd, buf, count, offset), moved(result));
}

PA_IPM_EXPORT ssize_t pread64(int fd, void *buf, size_t count, off64_t offset)
{
    PA_IPM_NEXT(pread64);
    PA_IPM_FILE_CALL(ssize_t, pread, fd, next_pread64(fd, buf, count, offset), moved(result));
}

PA_IPM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    PA_IPM_NEXT(pwrite);
    PA_IPM_FILE_CALL(ssize_t, pwrite, fd, next_pwrite(fd, buf, count, offset), moved(result));
}

PA_IPM_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
    PA_IPM_NEXT(pwrite64);
    PA_IPM_FILE_CALL(ssize_t, pwrite, fd, next_pwrite64(fd, buf, count, offset), moved(result));
}

PA_IPM_EXPORT int fsync(int fd)
{
    PA_IPM_NEXT(fsync);
    PA_IPM_FILE_CALL(int, fsync, fd, next_fsync(fd), 0);
}

PA_IPM_EXPORT int close(int fd)
{
    PA_IPM_NEXT(close);
    int was_counted = counted(fd);
    mark(fd, 0);
    if (!was_counted)
        return next_close(fd);
    uint64_t start = pa_ticks_unfenced();
    int result = next_close(fd);
    pa_ipm_record(PA_IPM_ID_close, 0, -1, MPI_COMM_NULL, pa_ticks_unfenced() - start,
                  PA_IPM_CALLER());
    return result;
}

/* fopen's descriptor is marked like open's (glibc opens it internally, past the interposed open). */
#define PA_IPM_FOPEN_CALL(call)                                                           \
    do {                                                                                  \
        uint64_t start = pa_ticks_unfenced();                                             \
        FILE *stream = call;                                                              \
        uint64_t ticks = pa_ticks_unfenced() - start;                                     \
        if (stream != NULL)                                                               \
            mark(fileno(stream), 1);                                                      \
        if (stream != NULL && pa_ipm_active && !pa_ipm_self.in_mpi)                       \
            pa_ipm_record(PA_IPM_ID_fopen, 0, -1, MPI_COMM_NULL, ticks, PA_IPM_CALLER()); \
        return stream;                                                                    \
    } while (0)

PA_IPM_EXPORT FILE *fopen(const char *path, const char *mode)
{
    PA_IPM_NEXT(fopen);
    PA_IPM_FOPEN_CALL(next_fopen(path, mode));
}

PA_IPM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    PA_IPM_NEXT(fopen64);
    PA_IPM_FOPEN_CALL(next_fopen64(path, mode));
}

PA_IPM_EXPORT size_t fread(void *buf, size_t size, size_t items, FILE *stream)
{
    PA_IPM_NEXT(fread);
    PA_IPM_FILE_CALL(size_t, fread, fileno(stream), next_fread(buf, size, items, stream),
                     (uint64_t)result * size);
}

PA_IPM_EXPORT size_t fwrite(const void *buf, size_t size, size_t items, FILE *stream)
{
    PA_IPM_NEXT(fwrite);
    PA_IPM_FILE_CALL(size_t, fwrite, fileno(stream), next_fwrite(buf, size, items, stream),
                     (uint64_t)result * size);
}

PA_IPM_EXPORT int fclose(FILE *stream)
{
    PA_IPM_NEXT(fclose);
    int fd = fileno(stream);
    int was_counted = counted(fd);
    mark(fd, 0);
    if (!was_counted)
        return next_fclose(stream);
    uint64_t start = pa_ticks_unfenced();
    int result = next_fclose(stream);
    pa_ipm_record(PA_IPM_ID_fclose, 0, -1, MPI_COMM_NULL, pa_ticks_unfenced() - start,
                  PA_IPM_CALLER());
    return result;
}
