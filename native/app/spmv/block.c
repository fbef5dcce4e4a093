/* The row-block partition: rank 0 turns the whole matrix into rows and scatters the blocks; each
 * rank then indexes its columns once (owner, place in the owner's block, distinct remote
 * columns), the inspector step every variant shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "spmv.h"

double pa_x_value(int j) { return 1.0 + (double)((37LL * j) % 101) / 128.0; }

int pa_owner_of(const pa_block *b, int column)
{
    int lo = 0, hi = b->np - 1; /* the last p with first_row[p] <= column */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (b->first_row[mid] <= column)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Rank 0: the rows of the CSC matrix, columns increasing within each row (the transpose by
 * counting sort, walking the columns in order). */
static int rows_of(const pa_sparse *a, int **rowptr, int **colind, double **values)
{
    long long nnz = pa_sparse_nnz(a);
    *rowptr = pa_calloc((size_t)a->n + 1, sizeof(int), "rowptr");
    *colind = pa_alloc((size_t)(nnz ? nnz : 1), sizeof(int), "colind");
    *values = pa_alloc((size_t)(nnz ? nnz : 1), sizeof(double), "values");
    int *next = pa_alloc((size_t)a->n, sizeof(int), "next");
    for (long long p = 0; p < nnz; p++)
        (*rowptr)[a->rowind[p] + 1]++;
    for (int i = 0; i < a->n; i++) {
        (*rowptr)[i + 1] += (*rowptr)[i];
        next[i] = (*rowptr)[i];
    }
    for (int j = 0; j < a->n; j++)
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            int q = next[a->rowind[p]]++;
            (*colind)[q] = j;
            (*values)[q] = a->values[p];
        }
    free(next);
    return 0;
}

int pa_block_scatter(const pa_sparse *a, int n, pa_block *b, char *error, size_t size)
{
    memset(b, 0, sizeof *b);
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->np);
    b->n = n;
    b->first_row = pa_alloc(((size_t)b->np + 1), sizeof(int), "first_row");
    for (int p = 0; p <= b->np; p++)
        b->first_row[p] = (int)((long long)p * n / b->np);
    b->lo = b->first_row[b->rank];
    b->rows = b->first_row[b->rank + 1] - b->lo;

    int *all_rowptr = NULL, *all_colind = NULL, *row_counts = NULL, *row_displs = NULL;
    int *nnz_counts = NULL, *nnz_displs = NULL;
    double *all_values = NULL;
    int failed = 0;
    if (b->rank == 0) {
        failed = rows_of(a, &all_rowptr, &all_colind, &all_values);
        row_counts = pa_alloc((size_t)b->np, sizeof(int), "row_counts");
        row_displs = pa_alloc((size_t)b->np, sizeof(int), "row_displs");
        nnz_counts = pa_alloc((size_t)b->np, sizeof(int), "nnz_counts");
        nnz_displs = pa_alloc((size_t)b->np, sizeof(int), "nnz_displs");
        failed |= !row_counts || !row_displs || !nnz_counts || !nnz_displs;
        for (int p = 0; !failed && p < b->np; p++) {
            row_displs[p] = b->first_row[p];
            row_counts[p] = b->first_row[p + 1] - b->first_row[p];
            nnz_displs[p] = all_rowptr[b->first_row[p]];
            nnz_counts[p] = all_rowptr[b->first_row[p + 1]] - nnz_displs[p];
        }
    }
    int nnz = 0;
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!failed)
        MPI_Scatter(nnz_counts, 1, MPI_INT, &nnz, 1, MPI_INT, 0, MPI_COMM_WORLD);
    b->nnz = nnz;
    int *lengths = pa_alloc((size_t)(b->rows ? b->rows : 1), sizeof(int), "lengths");
    b->rowptr = pa_alloc(((size_t)b->rows + 1), sizeof(int), "rowptr");
    b->colind = pa_alloc((size_t)(nnz ? nnz : 1), sizeof(int), "colind");
    b->values = pa_alloc((size_t)(nnz ? nnz : 1), sizeof(double), "values");
    b->x_mine = pa_alloc((size_t)(b->rows ? b->rows : 1), sizeof(double), "x_mine");
    b->x_all = pa_alloc((size_t)n, sizeof(double), "x_all");
    int mine_failed = !lengths || !b->rowptr || !b->colind || !b->values || !b->x_mine || !b->x_all;
    MPI_Allreduce(MPI_IN_PLACE, &mine_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed || mine_failed) {
        snprintf(error, size, "out of memory for the rows of a matrix of order %d", n);
        free(lengths);
        free(all_rowptr), free(all_colind), free(all_values);
        free(row_counts), free(row_displs), free(nnz_counts), free(nnz_displs);
        return -1;
    }
    int *all_lengths = NULL;
    if (b->rank == 0) {
        all_lengths = pa_alloc((size_t)n, sizeof(int), "all_lengths");
        for (int i = 0; i < n; i++)
            all_lengths[i] = all_rowptr[i + 1] - all_rowptr[i];
    }
    MPI_Scatterv(all_lengths, row_counts, row_displs, MPI_INT, lengths, b->rows, MPI_INT, 0,
                 MPI_COMM_WORLD);
    MPI_Scatterv(all_colind, nnz_counts, nnz_displs, MPI_INT, b->colind, nnz, MPI_INT, 0,
                 MPI_COMM_WORLD);
    MPI_Scatterv(all_values, nnz_counts, nnz_displs, MPI_DOUBLE, b->values, nnz, MPI_DOUBLE, 0,
                 MPI_COMM_WORLD);
    b->rowptr[0] = 0;
    for (int i = 0; i < b->rows; i++)
        b->rowptr[i + 1] = b->rowptr[i] + lengths[i];
    for (int i = 0; i < b->rows; i++)
        b->x_mine[i] = pa_x_value(b->lo + i);
    for (int j = 0; j < n; j++)
        b->x_all[j] = pa_x_value(j);
    free(lengths);
    free(all_lengths);
    free(all_rowptr), free(all_colind), free(all_values);
    free(row_counts), free(row_displs), free(nnz_counts), free(nnz_displs);
    return 0;
}

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int pa_block_index(pa_block *b)
{
    size_t nnz = (size_t)(b->nnz ? b->nnz : 1);
    b->owner = pa_alloc(nnz, sizeof(int), "owner");
    b->offset = pa_alloc(nnz, sizeof(int), "offset");
    b->ghosts = pa_alloc(nnz, sizeof(int), "ghosts");
    b->remote_accesses = 0;
    b->nghosts = 0;
    for (long long k = 0; k < b->nnz; k++) {
        int j = b->colind[k], p = pa_owner_of(b, j);
        b->owner[k] = p;
        b->offset[k] = j - b->first_row[p];
        if (p != b->rank) {
            b->ghosts[b->nghosts++] = j;
            b->remote_accesses++;
        }
    }
    qsort(b->ghosts, (size_t)b->nghosts, sizeof(int), compare_ints);
    int distinct = 0;
    for (int g = 0; g < b->nghosts; g++)
        if (distinct == 0 || b->ghosts[g] != b->ghosts[distinct - 1])
            b->ghosts[distinct++] = b->ghosts[g];
    b->nghosts = distinct;
    return 0;
}

void pa_block_free(pa_block *b)
{
    free(b->first_row), free(b->rowptr), free(b->colind), free(b->values);
    free(b->x_mine), free(b->x_all), free(b->owner), free(b->offset), free(b->ghosts);
    memset(b, 0, sizeof *b);
}
