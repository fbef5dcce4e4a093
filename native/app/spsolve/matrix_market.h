/* Matrix Market coordinate files (NIST, "The Matrix Market Exchange Formats", Boisvert, Pozo and
 * Remington 1996): fields real, integer and pattern (every entry 1), symmetry general and
 * symmetric (the lower triangle stored, mirrored here).
 *
 * A file is input from anyone: the reader refuses what is not a regular file (a FIFO must not
 * hang it), a size line whose order or entry count is out of range or cannot fit the memory
 * available (checked before anything of that size is allocated), indices outside the matrix,
 * values that are not finite (NaN, Inf, or duplicates whose sum overflows: duplicates are summed,
 * as the format's coordinate convention has it) and lines with NUL bytes; each in one sentence
 * naming the file and the line (docs/safety/native.md). */
#ifndef PA_MATRIX_MARKET_H
#define PA_MATRIX_MARKET_H

#include <stddef.h>
#include <stdio.h>

#include "sparse.h"

typedef struct {
    char field[32];    /* real, integer, pattern */
    char symmetry[32]; /* general, symmetric */
    long long entries; /* entries in the file */
} pa_mm_info;

/* What the size line is checked against before anything is allocated: the memory the reader may
 * take for the matrix and the caller for its vectors after reading (refused when 20 bytes per row
 * and 40 per stored entry, pa_sparse_from_triplets' arrays, plus `vector_bytes_per_row` per row
 * exceed `available_bytes`); and, for a caller that needs every diagonal entry (a positive
 * definite matrix has a_ii = e_i^T A e_i > 0), a file with fewer diagonal entries than rows is
 * refused once its entries are read, before anything of order n is allocated. */
typedef struct {
    double available_bytes;      /* pa_memory_available(), or a fuzzer's limit */
    double vector_bytes_per_row; /* what the caller allocates per row once the matrix is read */
    int needs_diagonal;          /* refuse fewer diagonal entries than rows */
} pa_mm_budget;

/* Reads `path` into `a` (both triangles). Returns 0, or -1 with one sentence in `error` naming the
 * file and, for a malformed file, the line. A general matrix is read as given: whether it is
 * symmetric is the caller's question. */
int pa_mm_read(const char *path, const pa_mm_budget *budget, pa_sparse *a, pa_mm_info *info,
               char *error, size_t size);
/* The same from an open stream; `name` names it in messages (the fuzz target reads memory). */
int pa_mm_read_stream(FILE *file, const char *name, const pa_mm_budget *budget, pa_sparse *a,
                      pa_mm_info *info, char *error, size_t size);

#endif
