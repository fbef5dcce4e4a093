/* Matrix Market coordinate files (NIST, "The Matrix Market Exchange Formats", Boisvert, Pozo and
 * Remington 1996): fields real, integer and pattern (every entry 1), symmetry general and
 * symmetric (the lower triangle stored, mirrored here). */
#ifndef PA_MATRIX_MARKET_H
#define PA_MATRIX_MARKET_H

#include <stddef.h>

#include "sparse.h"

typedef struct {
    char field[32];    /* real, integer, pattern */
    char symmetry[32]; /* general, symmetric */
    long long entries; /* entries in the file */
} pa_mm_info;

/* Reads `path` into `a` (both triangles). Returns 0, or -1 with one sentence in `error` naming the
 * file and, for a malformed file, the line. A general matrix is read as given: whether it is
 * symmetric is the caller's question. */
int pa_mm_read(const char *path, pa_sparse *a, pa_mm_info *info, char *error, size_t size);

#endif
