#define _POSIX_C_SOURCE 200809L
#include "alloc.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"

/* At least one byte: malloc(0) may return NULL, which is no failure. */
static size_t bytes_of(size_t count, size_t size) { return count && size ? count * size : 1; }

static noreturn void out_of_memory(size_t count, size_t size, const char *what)
{
    char bytes[32];
    if (size && count > SIZE_MAX / size)
        pa_fail(2, "cannot allocate %s: %zu x %zu bytes exceed the address space", what, count,
                size);
    pa_fail(2, "cannot allocate %s for %s: out of memory",
            pa_format_bytes((double)count * (double)size, bytes, sizeof bytes), what);
}

/* Overcommit lets malloc return address space that the OOM killer later takes back with SIGKILL
 * when it is touched: a request of PA_CHECKED_BYTES or more is first weighed against the memory
 * available, so that it fails here, in one sentence. */
#define PA_CHECKED_BYTES (64.0 * 1024 * 1024)

static void check_request(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size)
        out_of_memory(count, size, what);
    double bytes = (double)count * (double)size, available;
    if (bytes >= PA_CHECKED_BYTES && bytes > (available = pa_memory_available())) {
        char need[32], have[32];
        pa_fail(2, "cannot allocate %s for %s: more than the %s available",
                pa_format_bytes(bytes, need, sizeof need), what,
                pa_format_bytes(available, have, sizeof have));
    }
}

void *pa_alloc(size_t count, size_t size, const char *what)
{
    check_request(count, size, what);
    void *pointer = malloc(bytes_of(count, size));
    if (!pointer)
        out_of_memory(count, size, what);
    return pointer;
}

void *pa_calloc(size_t count, size_t size, const char *what)
{
    check_request(count, size, what);
    void *pointer = calloc(count ? count : 1, size ? size : 1);
    if (!pointer)
        out_of_memory(count, size, what);
    return pointer;
}

void *pa_realloc(void *pointer, size_t count, size_t size, const char *what)
{
    check_request(count, size, what);
    void *grown = realloc(pointer, bytes_of(count, size));
    if (!grown)
        out_of_memory(count, size, what);
    return grown;
}

void *pa_alloc_aligned(size_t alignment, size_t count, size_t size, const char *what)
{
    check_request(count, size, what);
    void *pointer = NULL;
    if (posix_memalign(&pointer, alignment, bytes_of(count, size)))
        out_of_memory(count, size, what);
    return pointer;
}

/* MemAvailable: the kernel's estimate of what can be allocated without swapping (Linux 3.14,
 * commit 34e431b0ae39, "/proc/meminfo: provide estimated available memory"). */
static double meminfo_available(void)
{
    FILE *file = fopen("/proc/meminfo", "r");
    if (!file)
        return -1;
    char line[256];
    double kib = -1;
    while (fgets(line, sizeof line, file))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
            break;
    fclose(file);
    return kib >= 0 ? kib * 1024.0 : -1;
}

double pa_memory_available(void)
{
    const char *given = getenv("PERFATLAS_MEMORY_AVAILABLE");
    if (given && *given) {
        char *end;
        errno = 0;
        double bytes = strtod(given, &end);
        if (*end || errno || !isfinite(bytes) || bytes < 0)
            pa_fail(2, "PERFATLAS_MEMORY_AVAILABLE=%s is not a number of bytes", given);
        return bytes;
    }
    double available = meminfo_available();
    if (available >= 0)
        return available;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
}

int pa_check_memory(double bytes, double available, const char *what, const char *purpose,
                    char *error, size_t size)
{
    if (bytes <= available)
        return 0;
    char need[32], have[32];
    snprintf(error, size, "%s: %s for %s, more than the %s available", what,
             pa_format_bytes(bytes, need, sizeof need), purpose,
             pa_format_bytes(available, have, sizeof have));
    return -1;
}

void pa_require_memory(double bytes, const char *what, const char *purpose)
{
    char error[512];
    if (pa_check_memory(bytes, pa_memory_available(), what, purpose, error, sizeof error))
        pa_fail(2, "%s", error);
}

const char *pa_format_bytes(double bytes, char *out, size_t size)
{
    static const char *units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (bytes >= 1000 && u < 6) {
        bytes /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(out, size, "%.0f bytes", bytes);
    else
        snprintf(out, size, "%.*f %s", bytes < 10 ? 1 : 0, bytes, units[u]);
    return out;
}
