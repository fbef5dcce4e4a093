/* A real sparse square matrix in compressed sparse column form, both triangles stored, row
 * indices sorted within each column, duplicates summed and explicit zeros kept (the structure of
 * an assembled finite-element matrix includes couplings whose value happens to be 0).
 *
 * The readers and generators produce it; the solvers take it (CHOLMOD reads its lower triangle,
 * MUMPS gets the lower triangle's triplets); the residual check multiplies by it. */
#ifndef PA_SPARSE_H
#define PA_SPARSE_H

#include <stddef.h>

typedef struct {
    int n;
    int *colptr; /* n + 1 */
    int *rowind; /* colptr[n] */
    double *values;
} pa_sparse;

/* Entries (row, column, value), 0-based, in any order, duplicates allowed. */
typedef struct {
    int *row, *col;
    double *value;
    long long count, capacity;
} pa_triplets;

/* Returns 0, or -1 with a sentence in `error` (more than 2^31 - 1 entries). Like every allocation
 * of native/ (alloc.h), running out of memory here ends the program with one sentence, status 2. */
int pa_triplets_add(pa_triplets *t, int row, int col, double value, char *error, size_t size);
/* Sorts and assembles, duplicates summed. */
void pa_sparse_from_triplets(const pa_triplets *t, int n, pa_sparse *a);
void pa_triplets_free(pa_triplets *t);

/* Allocates n + 1 column pointers (zeroed) and `nnz` entries. */
void pa_sparse_alloc(pa_sparse *a, int n, long long nnz);
void pa_sparse_free(pa_sparse *a);

long long pa_sparse_nnz(const pa_sparse *a);
/* Entries on and below the diagonal. */
long long pa_sparse_nnz_lower(const pa_sparse *a);
/* y = A x */
void pa_sparse_multiply(const pa_sparse *a, const double *x, double *y);
/* 1 when A = A^T (structure and values, relative tolerance 1e-12); else 0 and the first entry
 * (row, col, 0-based) whose mirror differs, with both values. */
int pa_sparse_is_symmetric(const pa_sparse *a, int *row, int *col, double *value, double *mirror);
/* Where (row, col) is, or would be inserted, among column col's entries (binary search). */
int pa_sparse_position(const pa_sparse *a, int row, int col);
/* The value at (row, col), 0 when it is not stored. */
double pa_sparse_at(const pa_sparse *a, int row, int col);

#endif
