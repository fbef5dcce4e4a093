#define _POSIX_C_SOURCE 200809L
#include "matrix_market.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "files.h"

/* Bytes pa_sparse_from_triplets takes: per row, five int arrays of n + 1 (the by-row and final
 * column pointers, next, count, last_row); per stored entry, the triplet (int, int, double) and
 * two (int, double) copies (by row, then the result). */
#define PA_MM_BYTES_PER_ROW (5.0 * sizeof(int))
#define PA_MM_BYTES_PER_ENTRY \
    (2.0 * sizeof(int) + sizeof(double) + 2.0 * (sizeof(int) + sizeof(double)))

typedef struct {
    const char *path;
    FILE *file;
    const pa_mm_budget *budget;
    char *line;
    size_t capacity;
    long number; /* of the line just read, from 1 */
    char *error;
    size_t size;
} reader;

static int fail(reader *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *format, ...)
{
    int used = snprintf(r->error, r->size, "%s line %ld: ", r->path, r->number);
    va_list ap;
    va_start(ap, format);
    if (used >= 0 && (size_t)used < r->size)
        vsnprintf(r->error + used, r->size - (size_t)used, format, ap);
    va_end(ap);
    return -1;
}

/* The next line without its newline: 1, 0 at the end of the file, -1 (and the sentence) for a
 * line holding a NUL byte, which would hide the rest of the line from the parser. */
static int next_line(reader *r)
{
    ssize_t length = getline(&r->line, &r->capacity, r->file);
    if (length < 0)
        return 0;
    r->number++;
    if (strlen(r->line) != (size_t)length)
        return fail(r, "the line holds a NUL byte: this is not a text file");
    r->line[strcspn(r->line, "\r\n")] = '\0';
    return 1;
}

static int blank(const char *line) { return line[strspn(line, " \t")] == '\0'; }

/* "%%MatrixMarket matrix coordinate FIELD SYMMETRY" (case-insensitive, as the format allows). */
static int read_banner(reader *r, pa_mm_info *info)
{
    char banner[32], object[32], format[32], field[32], symmetry[32], extra[2];
    int got = next_line(r);
    if (got < 0)
        return -1;
    if (!got)
        return fail(r, "the file is empty, not a Matrix Market file");
    int words = sscanf(r->line, "%31s %31s %31s %31s %31s %1s", banner, object, format, field,
                       symmetry, extra);
    if (words < 1 || strcmp(banner, "%%MatrixMarket"))
        return fail(r,
                    "not a Matrix Market file (the first line must start with %%%%MatrixMarket)");
    if (words != 5)
        return fail(r, "the header must read '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY'");
    if (strcasecmp(object, "matrix"))
        return fail(r, "the object is '%s'; only 'matrix' is supported", object);
    if (strcasecmp(format, "coordinate"))
        return fail(r, "the format is '%s'; only sparse 'coordinate' files are supported", format);
    if (strcasecmp(field, "real") && strcasecmp(field, "integer") && strcasecmp(field, "pattern"))
        return fail(r, "the field is '%s'; only real, integer and pattern matrices are supported",
                    field);
    if (strcasecmp(symmetry, "general") && strcasecmp(symmetry, "symmetric"))
        return fail(r,
                    "the symmetry is '%s'; only general and symmetric matrices are supported (a "
                    "solve by Cholesky needs a symmetric positive definite matrix)",
                    symmetry);
    for (char *c = field; *c; c++)
        *c = (char)(*c | 0x20); /* lower case, for the document */
    for (char *c = symmetry; *c; c++)
        *c = (char)(*c | 0x20);
    snprintf(info->field, sizeof info->field, "%s", field);
    snprintf(info->symmetry, sizeof info->symmetry, "%s", symmetry);
    return 0;
}

/* Whitespace-separated integers and (optionally) one number; counts what it found. */
static int parse_index(const char **p, long long *value)
{
    char *end;
    errno = 0;
    *value = strtoll(*p, &end, 10);
    if (end == *p || errno || (*end && *end != ' ' && *end != '\t'))
        return 0;
    *p = end;
    return 1;
}

/* The declared order and entries against the memory budget, before anything is allocated. */
static int check_budget(reader *r, long long n, long long stored)
{
    char what[96], why[256];
    double vectors = r->budget->vector_bytes_per_row * (double)n;
    double matrix = PA_MM_BYTES_PER_ROW * (double)n + PA_MM_BYTES_PER_ENTRY * (double)stored;
    snprintf(what, sizeof what, "the file declares %lld rows", n);
    if (pa_check_memory(vectors, r->budget->available_bytes, what, "the vectors alone", why,
                        sizeof why) == 0) {
        snprintf(what, sizeof what, "the file declares %lld rows and %lld stored entries", n,
                 stored);
        if (pa_check_memory(vectors + matrix, r->budget->available_bytes, what,
                            "the matrix and its vectors", why, sizeof why) == 0)
            return 0;
    }
    return fail(r, "%s", why);
}

/* "ROWS COLUMNS ENTRIES" after the comments. */
static int read_size(reader *r, const pa_mm_info *info, long long *rows, long long *cols,
                     long long *entries)
{
    int got;
    do
        if ((got = next_line(r)) <= 0)
            return got < 0 ? -1
                           : fail(r, "the file ends before the size line 'ROWS COLUMNS ENTRIES'");
    while (r->line[0] == '%' || blank(r->line));
    const char *p = r->line;
    if (!parse_index(&p, rows) || !parse_index(&p, cols) || !parse_index(&p, entries) ||
        !blank(p) || *rows < 0 || *cols < 0 || *entries < 0)
        return fail(r, "expected the size line 'ROWS COLUMNS ENTRIES', found '%s'", r->line);
    if (*rows != *cols)
        return fail(r, "the matrix is %lld x %lld, not square", *rows, *cols);
    if (*rows == 0 || *rows > 0x7ffffffeLL)
        return fail(r, "the order %lld is outside 1 .. 2^31 - 2", *rows);
    int symmetric = !strcmp(info->symmetry, "symmetric");
    double most = symmetric ? (double)*rows * ((double)*rows + 1) / 2 : (double)*rows * *rows;
    if ((double)*entries > most)
        return fail(r,
                    "the size line announces %lld entries, more than the %.0f a%s %lld x %lld "
                    "matrix holds",
                    *entries, most, symmetric ? " symmetric" : "", *rows, *rows);
    long long stored = symmetric ? 2 * *entries : *entries; /* the mirror of each off-diagonal */
    if (stored > 0x7fffffffLL)
        return fail(r,
                    "the size line announces %lld entries (%lld stored), beyond the 2^31 - 1 "
                    "this program indexes",
                    *entries, stored);
    if (check_budget(r, *rows, stored))
        return -1;
    return 0;
}

/* One entry "I J [VALUE]" with 1-based indices; a symmetric file holds only i >= j. */
static int read_entry(reader *r, const pa_mm_info *info, long long n, int *row, int *col,
                      double *value)
{
    int pattern = !strcmp(info->field, "pattern"), integer = !strcmp(info->field, "integer");
    const char *expected = pattern ? "'row column'" : "'row column value'";
    const char *p = r->line;
    long long i, j;
    if (!parse_index(&p, &i) || !parse_index(&p, &j))
        return fail(r, "expected %s, found '%s'", expected, r->line);
    *value = 1.0;
    if (!pattern) {
        char *end;
        p += strspn(p, " \t");
        errno = 0;
        if (integer) {
            long long v = strtoll(p, &end, 10);
            *value = (double)v;
        } else {
            *value = strtod(p, &end);
            if (errno == ERANGE && fabs(*value) <= DBL_MIN)
                errno = 0; /* underflow: a subnormal or zero is still the value written */
        }
        if (end == p || (errno && errno != ERANGE))
            return fail(r, "expected %s, found '%s'", expected, r->line);
        if (errno == ERANGE || !isfinite(*value))
            return fail(r,
                        "the value '%.*s' is not a finite number: a matrix holds only finite "
                        "values",
                        (int)(end - p), p);
        p = end;
    }
    if (!blank(p))
        return fail(r, "expected %s, found '%s'", expected, r->line);
    if (i < 1 || i > n || j < 1 || j > n)
        return fail(r, "the entry (%lld, %lld) lies outside the %lld x %lld matrix", i, j, n, n);
    if (!strcmp(info->symmetry, "symmetric") && i < j)
        return fail(r,
                    "the entry (%lld, %lld) lies above the diagonal, but a symmetric file stores "
                    "only the lower triangle",
                    i, j);
    *row = (int)(i - 1);
    *col = (int)(j - 1);
    return 0;
}

static int read_entries(reader *r, const pa_mm_info *info, long long n, long long entries,
                        pa_triplets *t)
{
    int symmetric = !strcmp(info->symmetry, "symmetric"), got;
    long long found = 0, diagonal = 0;
    long long stored = symmetric ? 2 * entries : entries; /* checked against the budget */
    t->row = pa_alloc((size_t)stored, sizeof(int), "the matrix's row indices");
    t->col = pa_alloc((size_t)stored, sizeof(int), "the matrix's column indices");
    t->value = pa_alloc((size_t)stored, sizeof(double), "the matrix's values");
    t->capacity = stored ? stored : 1;
    while ((got = next_line(r)) > 0) {
        if (blank(r->line) || r->line[0] == '%')
            continue;
        if (found == entries)
            return fail(r, "more entries than the %lld the size line announces", entries);
        int row = 0, col = 0;
        double value = 0;
        if (read_entry(r, info, n, &row, &col, &value))
            return -1;
        char why[160];
        if (pa_triplets_add(t, row, col, value, why, sizeof why) ||
            (symmetric && row != col && pa_triplets_add(t, col, row, value, why, sizeof why)))
            return fail(r, "%s", why);
        found++;
        diagonal += row == col;
    }
    if (got < 0)
        return -1;
    if (found < entries) {
        snprintf(r->error, r->size,
                 "%s ends at line %ld after %lld of the %lld entries its size "
                 "line announces",
                 r->path, r->number, found, entries);
        return -1;
    }
    /* Before anything of order n is allocated: a positive definite A has a_ii = e_i^T A e_i > 0,
     * so a file declaring 1e8 rows and one entry is refused here, not by the solver minutes and
     * gigabytes later. pa-spsolve checks each diagonal entry once the matrix is assembled. */
    if (r->budget->needs_diagonal && diagonal < n) {
        snprintf(r->error, r->size,
                 "%s holds %lld diagonal entries for %lld rows: a positive definite matrix needs "
                 "all %lld",
                 r->path, diagonal, n, n);
        return -1;
    }
    return 0;
}

/* Duplicates are summed: two finite values may sum to an infinity. */
static int check_sums(const char *path, const pa_sparse *a, char *error, size_t size)
{
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            if (!isfinite(a->values[p])) {
                snprintf(error, size,
                         "%s: the duplicate entries at (%d, %d) sum to %g: a matrix holds only "
                         "finite values",
                         path, a->rowind[p] + 1, j + 1, a->values[p]);
                return -1;
            }
    return 0;
}

int pa_mm_read_stream(FILE *file, const char *name, const pa_mm_budget *budget, pa_sparse *a,
                      pa_mm_info *info, char *error, size_t size)
{
    reader r = {.path = name, .file = file, .budget = budget, .error = error, .size = size};
    long long rows = 0, cols = 0;
    pa_triplets t = {0};
    int status = read_banner(&r, info);
    if (!status)
        status = read_size(&r, info, &rows, &cols, &info->entries);
    if (!status)
        status = read_entries(&r, info, rows, info->entries, &t);
    if (!status) {
        pa_sparse_from_triplets(&t, (int)rows, a);
        if ((status = check_sums(name, a, error, size)))
            pa_sparse_free(a);
    }
    pa_triplets_free(&t);
    free(r.line);
    return status;
}

int pa_mm_read(const char *path, const pa_mm_budget *budget, pa_sparse *a, pa_mm_info *info,
               char *error, size_t size)
{
    /* a FIFO would block the open forever, a device or a folder is no matrix */
    FILE *file = pa_open_regular(path, "the matrix file", "give a Matrix Market file", error, size);
    if (!file)
        return -1;
    int status = pa_mm_read_stream(file, path, budget, a, info, error, size);
    fclose(file);
    return status;
}
