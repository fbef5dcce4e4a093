/* Checked allocation and the memory budget (docs/safety/native.md).
 *
 * Every allocation in native/ goes through pa_alloc, pa_calloc or pa_realloc: the element count
 * times the element size is checked for overflow, and a failure ends the program with ONE
 * sentence naming what was being allocated and how many bytes, and exit status 2 (the size asked
 * for is more than this machine gives: bad input, docs/contract.md). They never return NULL.
 *
 * A size that an input file or an argument declares is checked against the memory available
 * BEFORE anything of that size is allocated (pa_require_memory), so that a three-line file
 * declaring 4e8 rows is refused in one sentence instead of crashing or paging for minutes. */
#ifndef PA_ALLOC_H
#define PA_ALLOC_H

#include <stddef.h>

/* malloc(count * size); `what` names the thing for the message ("the right-hand side"). */
void *pa_alloc(size_t count, size_t size, const char *what);
/* calloc(count, size), zeroed. */
void *pa_calloc(size_t count, size_t size, const char *what);
/* realloc(pointer, count * size). */
void *pa_realloc(void *pointer, size_t count, size_t size, const char *what);
/* count * size bytes aligned to `alignment` (a power of two, a multiple of sizeof(void *)). */
void *pa_alloc_aligned(size_t alignment, size_t count, size_t size, const char *what);

/* The bytes this machine can still give without swapping: MemAvailable of /proc/meminfo (Linux
 * >= 3.14), else free pages x page size (sysconf). PERFATLAS_MEMORY_AVAILABLE (a plain number
 * of bytes) overrides it, so that the refusals can be tested alike on any machine. */
double pa_memory_available(void);

/* 0 when `bytes` fit in `available`; else -1 and one sentence in `error`: "<what>: 3.2 GB for
 * <purpose>, more than the 2 GB available" (`what` says where the size came from: "the file
 * declares 400000000 rows"; `purpose` what it is for: "the vectors alone"). */
int pa_check_memory(double bytes, double available, const char *what, const char *purpose,
                    char *error, size_t size);
/* pa_check_memory against pa_memory_available(); on refusal, the sentence and exit status 2. */
void pa_require_memory(double bytes, const char *what, const char *purpose);

/* "3.2 GB", "512 MB", "4 kB", "17 bytes" (decimal units, docs/architecture.md, Units). */
const char *pa_format_bytes(double bytes, char *out, size_t size);

#endif
