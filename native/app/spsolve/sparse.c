#include "sparse.h"
#include "alloc.h"

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
        t->row = pa_realloc(t->row, (size_t)capacity, sizeof(int), "the matrix's row indices");
        t->col = pa_realloc(t->col, (size_t)capacity, sizeof(int), "the matrix's column indices");
        t->value = pa_realloc(t->value, (size_t)capacity, sizeof(double), "the matrix's values");
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

void pa_sparse_alloc(pa_sparse *a, int n, long long nnz)
{
    a->n = n;
    a->colptr = pa_calloc((size_t)n + 1, sizeof(int), "the matrix's column pointers");
    a->rowind = pa_alloc((size_t)nnz, sizeof(int), "the matrix's row indices");
    a->values = pa_alloc((size_t)nnz, sizeof(double), "the matrix's values");
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
void pa_sparse_from_triplets(const pa_triplets *t, int n, pa_sparse *a)
{
    pa_sparse by_row; /* the triplets bucketed by row: the transpose, unsorted within rows */
    pa_sparse_alloc(&by_row, n, t->count);
    int *next = pa_calloc((size_t)n + 1, sizeof(int), "the matrix's assembly pointers");
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
    int *count = pa_calloc((size_t)n + 1, sizeof(int), "the matrix's column counts");
    int *last_row = pa_alloc((size_t)n, sizeof(int), "the matrix's assembly rows");
    pa_sparse_alloc(a, n, t->count);
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
