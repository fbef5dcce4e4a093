#define _POSIX_C_SOURCE 200809L
#include "matrix_market.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *path;
    FILE *file;
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

/* The next line without its newline; 0 at the end of the file. */
static int next_line(reader *r)
{
    ssize_t length = getline(&r->line, &r->capacity, r->file);
    if (length < 0)
        return 0;
    r->number++;
    r->line[strcspn(r->line, "\r\n")] = '\0';
    return 1;
}

static int blank(const char *line) { return line[strspn(line, " \t")] == '\0'; }

/* "%%MatrixMarket matrix coordinate FIELD SYMMETRY" (case-insensitive, as the format allows). */
static int read_banner(reader *r, pa_mm_info *info)
{
    char banner[32], object[32], format[32], field[32], symmetry[32], extra[2];
    if (!next_line(r))
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

/* "ROWS COLUMNS ENTRIES" after the comments. */
static int read_size(reader *r, long long *rows, long long *cols, long long *entries)
{
    do
        if (!next_line(r))
            return fail(r, "the file ends before the size line 'ROWS COLUMNS ENTRIES'");
    while (r->line[0] == '%' || blank(r->line));
    const char *p = r->line;
    if (!parse_index(&p, rows) || !parse_index(&p, cols) || !parse_index(&p, entries) ||
        !blank(p) || *rows < 0 || *cols < 0 || *entries < 0)
        return fail(r, "expected the size line 'ROWS COLUMNS ENTRIES', found '%s'", r->line);
    if (*rows != *cols)
        return fail(r, "the matrix is %lld x %lld, not square", *rows, *cols);
    if (*rows == 0 || *rows > 0x7ffffffeLL)
        return fail(r, "the order %lld is outside 1 .. 2^31 - 2", *rows);
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
        errno = 0;
        if (integer) {
            long long v = strtoll(p, &end, 10);
            *value = (double)v;
        } else {
            *value = strtod(p, &end);
        }
        if (end == p || errno)
            return fail(r, "expected %s, found '%s'", expected, r->line);
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
    int symmetric = !strcmp(info->symmetry, "symmetric");
    long long found = 0;
    while (next_line(r)) {
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
    }
    if (found < entries) {
        snprintf(r->error, r->size,
                 "%s ends at line %ld after %lld of the %lld entries its size "
                 "line announces",
                 r->path, r->number, found, entries);
        return -1;
    }
    return 0;
}

int pa_mm_read(const char *path, pa_sparse *a, pa_mm_info *info, char *error, size_t size)
{
    reader r = {.path = path, .error = error, .size = size};
    r.file = fopen(path, "r");
    if (!r.file) {
        snprintf(error, size, "cannot read the matrix file %s: %s", path, strerror(errno));
        return -1;
    }
    long long rows = 0, cols = 0;
    pa_triplets t = {0};
    int status = read_banner(&r, info);
    if (!status)
        status = read_size(&r, &rows, &cols, &info->entries);
    if (!status)
        status = read_entries(&r, info, rows, info->entries, &t);
    if (!status)
        status = pa_sparse_from_triplets(&t, (int)rows, a, error, size);
    pa_triplets_free(&t);
    free(r.line);
    fclose(r.file);
    return status;
}
