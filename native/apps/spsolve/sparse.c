#include "sparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int pa_triplets_add(pa_triplets *t, int row, int col, double value, char *error, size_t size)
{
    if (t->count == t->capacity) {
        long long capacity = t->capacity ? 2 * t->capacity : 1024;
        if (capacity > 0x7fffffffLL)
            capacity = 0x7fffffffLL;
        if (t->count == capacity) {
            snprintf(error, size, "the matrix has more than 2^31 - 1 entries, beyond this program");
            return -1;
        }
        int *r = realloc(t->row, sizeof(int) * (size_t)capacity);
        if (r)
            t->row = r;
        int *c = realloc(t->col, sizeof(int) * (size_t)capacity);
        if (c)
            t->col = c;
        double *v = realloc(t->value, sizeof(double) * (size_t)capacity);
        if (v)
            t->value = v;
        if (!r || !c || !v) {
            snprintf(error, size, "out of memory for %lld matrix entries", capacity);
            return -1;
        }
        t->capacity = capacity;
    }
    t->row[t->count] = row;
    t->col[t->count] = col;
    t->value[t->count] = value;
    t->count++;
    return 0;
}

void pa_triplets_free(pa_triplets *t)
{
    free(t->row);
    free(t->col);
    free(t->value);
    *t = (pa_triplets){0};
}

int pa_sparse_alloc(pa_sparse *a, int n, long long nnz)
{
    a->n = n;
    a->colptr = calloc((size_t)n + 1, sizeof(int));
    a->rowind = malloc(sizeof(int) * (size_t)(nnz ? nnz : 1));
    a->values = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
    if (a->colptr && a->rowind && a->values)
        return 0;
    pa_sparse_free(a);
    return -1;
}

void pa_sparse_free(pa_sparse *a)
{
    free(a->colptr);
    free(a->rowind);
    free(a->values);
    *a = (pa_sparse){0};
}

/* Counting sort by column, then by row within each column (the transpose twice, as in CSparse's
 * cs_compress + cs_dupl), summing duplicates. */
int pa_sparse_from_triplets(const pa_triplets *t, int n, pa_sparse *a, char *error, size_t size)
{
    pa_sparse by_row; /* the triplets bucketed by row: the transpose, unsorted within rows */
    if (pa_sparse_alloc(&by_row, n, t->count)) {
        snprintf(error, size, "out of memory for %lld matrix entries", t->count);
        return -1;
    }
    int *next = calloc((size_t)n + 1, sizeof(int));
    if (!next) {
        pa_sparse_free(&by_row);
        snprintf(error, size, "out of memory for a matrix of order %d", n);
        return -1;
    }
    for (long long k = 0; k < t->count; k++)
        by_row.colptr[t->row[k] + 1]++;
    for (int i = 0; i < n; i++)
        by_row.colptr[i + 1] += by_row.colptr[i];
    for (int i = 0; i < n; i++)
        next[i] = by_row.colptr[i];
    for (long long k = 0; k < t->count; k++) {
        int p = next[t->row[k]]++;
        by_row.rowind[p] = t->col[k]; /* the column, stored per row */
        by_row.values[p] = t->value[k];
    }
    /* Rows in increasing order per column: bucket by column walking rows in order. Duplicates
     * become neighbours and are summed. */
    int *count = calloc((size_t)n + 1, sizeof(int));
    int *last_row = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!count || !last_row || pa_sparse_alloc(a, n, t->count)) {
        free(count);
        free(last_row);
        free(next);
        pa_sparse_free(&by_row);
        snprintf(error, size, "out of memory for %lld matrix entries", t->count);
        return -1;
    }
    for (int j = 0; j < n; j++)
        last_row[j] = -1;
    for (int i = 0; i < n; i++) /* distinct entries per column */
        for (int p = by_row.colptr[i]; p < by_row.colptr[i + 1]; p++) {
            int j = by_row.rowind[p];
            if (last_row[j] != i) {
                last_row[j] = i;
                count[j + 1]++;
            }
        }
    for (int j = 0; j < n; j++) {
        count[j + 1] += count[j];
        a->colptr[j + 1] = count[j + 1];
        next[j] = count[j];
        last_row[j] = -1;
    }
    for (int i = 0; i < n; i++)
        for (int p = by_row.colptr[i]; p < by_row.colptr[i + 1]; p++) {
            int j = by_row.rowind[p];
            if (last_row[j] == i) {
                a->values[next[j] - 1] += by_row.values[p];
            } else {
                last_row[j] = i;
                a->rowind[next[j]] = i;
                a->values[next[j]] = by_row.values[p];
                next[j]++;
            }
        }
    free(count);
    free(last_row);
    free(next);
    pa_sparse_free(&by_row);
    return 0;
}

long long pa_sparse_nnz(const pa_sparse *a) { return a->colptr[a->n]; }

long long pa_sparse_nnz_lower(const pa_sparse *a)
{
    long long lower = 0;
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            lower += a->rowind[p] >= j;
    return lower;
}

void pa_sparse_multiply(const pa_sparse *a, const double *x, double *y)
{
    for (int i = 0; i < a->n; i++)
        y[i] = 0.0;
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            y[a->rowind[p]] += a->values[p] * x[j];
}

int pa_sparse_position(const pa_sparse *a, int row, int col)
{
    int lo = a->colptr[col], hi = a->colptr[col + 1];
    while (lo < hi) { /* binary search: the rows of a column are sorted */
        int mid = lo + (hi - lo) / 2;
        if (a->rowind[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double pa_sparse_at(const pa_sparse *a, int row, int col)
{
    int lo = pa_sparse_position(a, row, col);
    return lo < a->colptr[col + 1] && a->rowind[lo] == row ? a->values[lo] : 0.0;
}

int pa_sparse_is_symmetric(const pa_sparse *a, int *row, int *col, double *value, double *mirror)
{
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            int i = a->rowind[p];
            double v = a->values[p], m = pa_sparse_at(a, j, i);
            if (fabs(v - m) > 1e-12 * fmax(fabs(v), fabs(m))) {
                *row = i;
                *col = j;
                *value = v;
                *mirror = m;
                return 0;
            }
        }
    return 1;
}
