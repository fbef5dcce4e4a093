/* Dense matrix kernels (BLAS-2/3 shapes, one LU step), sparse matrix-vector, and the traversals
 * that walk a row-major matrix the unfavourable way (transpose, columns).
 *
 * Matrices are m x m, row-major, of small integers (a power of two as the LU pivot), so every
 * product and sum is exact: results are compared with plainly computed references bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "kernels.h"

#define PANEL          16 /* rows of C one dgemm invocation computes: milliseconds at any size */
#define TILE_K         64 /* dgemm_blocked: a 64 x 256 tile of B (128 KiB) serves the whole panel */
#define TILE_J         256
#define TRANSPOSE_TILE 32
#define SPARSE_ROW     8 /* nonzeros per row of the spmv matrix */

static double a_value(size_t i, size_t j) { return (double)((i + 2 * j) % 4); }
static double b_value(size_t i, size_t j) { return (double)((3 * i + j) % 4); }
static double x_value(size_t j) { return (double)(j % 3); }

/* The largest m with `per_element` * m^2 + `per_row` * m <= bytes, rounded down to `multiple`. */
static size_t order_for(size_t bytes, size_t per_element, size_t per_row, size_t multiple)
{
    size_t m = (size_t)sqrt((double)bytes / (double)per_element);
    while (m > 0 && per_element * m * m + per_row * m > bytes)
        m--;
    return m / multiple * multiple;
}

static void fill(double *x, size_t m, double (*value)(size_t, size_t))
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            x[i * m + j] = value ? value(i, j) : 0;
}

/* -- y = A x (array 0: A, 1: x, 2: y) ---------------------------------------------------- */
static size_t matvec_shape(pb_instance *k, size_t bytes)
{
    size_t m = order_for(bytes, 8, 16, 1);
    k->n = m;
    k->iterations = m * m;
    k->array_bytes[0] = 8 * m * m;
    k->array_bytes[1] = k->array_bytes[2] = 8 * m;
    k->output = 2;
    return 24;
}
static void matvec_init(pb_instance *k)
{
    double *x = k->array[1], *y = k->array[2];
    fill(k->array[0], k->n, a_value);
    for (size_t j = 0; j < k->n; j++)
        x[j] = x_value(j), y[j] = 0;
}
/* y[i] against sum_j A(i, j) x[j], or sum_j A(j, i) x[j] when transposed. */
static int matvec_check(pb_instance *k, int transposed, char *why, size_t size)
{
    const double *y = k->array[2];
    for (size_t i = 0; i < k->n; i++) {
        double expected = 0;
        for (size_t j = 0; j < k->n; j++)
            expected += (transposed ? a_value(j, i) : a_value(i, j)) * x_value(j);
        if (pb_expect(k, "element of y", i, y[i], expected, 0, why, size))
            return -1;
    }
    return 0;
}

size_t pb_dgemv_shape(pb_instance *k, size_t bytes) { return matvec_shape(k, bytes); }
void pb_dgemv_init(pb_instance *k) { matvec_init(k); }
void pb_dgemv_pass(pb_instance *k)
{
    const double *restrict a = k->array[0], *restrict x = k->array[1];
    double *restrict y = k->array[2];
    const size_t m = k->n;
    for (size_t i = 0; i < m; i++) {
        double sum = 0;
#pragma omp simd reduction(+ : sum)
        for (size_t j = 0; j < m; j++)
            sum += a[i * m + j] * x[j];
        y[i] = sum;
    }
}
int pb_dgemv_check(pb_instance *k, char *why, size_t size) { return matvec_check(k, 0, why, size); }

size_t pb_dgemv_t_shape(pb_instance *k, size_t bytes) { return matvec_shape(k, bytes); }
void pb_dgemv_t_init(pb_instance *k) { matvec_init(k); }
void pb_dgemv_t_pass(pb_instance *k)
{
    const double *restrict a = k->array[0], *restrict x = k->array[1];
    double *restrict y = k->array[2];
    const size_t m = k->n;
    for (size_t j = 0; j < m; j++) {
        double sum = 0;
        for (size_t i = 0; i < m; i++)
            sum += a[i * m + j] * x[i];
        y[j] = sum;
    }
}
int pb_dgemv_t_check(pb_instance *k, char *why, size_t size)
{
    return matvec_check(k, 1, why, size);
}

/* -- C = A B, one panel of PANEL rows per pass, the panels in turn (0: A, 1: B, 2: C) ------- */
static size_t matmul_shape(pb_instance *k, size_t bytes)
{
    size_t m = order_for(bytes, 24, 0, PANEL);
    k->n = m;
    k->iterations = (uint64_t)PANEL * m * m;
    k->array_bytes[0] = k->array_bytes[1] = k->array_bytes[2] = 8 * m * m;
    k->output = 2;
    return 24 * PANEL * PANEL;
}
static void matmul_init(pb_instance *k)
{
    fill(k->array[0], k->n, a_value);
    fill(k->array[1], k->n, b_value);
    fill(k->array[2], k->n, NULL);
}
/* The first row of this pass's panel: the panels in turn, 0 first. */
static size_t panel_row(const pb_instance *k)
{
    return (size_t)(k->passes % (k->n / PANEL)) * PANEL;
}

/* Rows of computed panels: their sum and (j + 1)-weighted sum against A's row times B's row sums
 * (exact: integers), and three elements directly; rows not yet computed must still be zero. */
static int matmul_check(pb_instance *k, char *why, size_t size)
{
    const double *c = k->array[2];
    const size_t m = k->n;
    size_t computed = (size_t)(k->passes < m / PANEL ? k->passes : m / PANEL) * PANEL;
    double *b_sum = pa_calloc(2 * m, sizeof *b_sum, "b_sum"), *b_weighted = b_sum + m;
    for (size_t l = 0; l < m; l++)
        for (size_t j = 0; j < m; j++)
            b_sum[l] += b_value(l, j), b_weighted[l] += b_value(l, j) * (double)(j + 1);
    int failed = 0;
    for (size_t i = 0; i < m && !failed; i++) {
        double sum = 0, weighted = 0, expected_sum = 0, expected_weighted = 0;
        for (size_t j = 0; j < m; j++)
            sum += c[i * m + j], weighted += (double)(j + 1) * c[i * m + j];
        for (size_t l = 0; i < computed && l < m; l++)
            expected_sum += a_value(i, l) * b_sum[l],
                expected_weighted += a_value(i, l) * b_weighted[l];
        failed = pb_expect(k, "sum of row", i, sum, expected_sum, 0, why, size) ||
                 pb_expect(k, "weighted sum of row", i, weighted, expected_weighted, 0, why, size);
        for (size_t j = 0; !failed && i < computed && j < m; j += m / 2 ? m / 2 : 1) {
            double expected = 0;
            for (size_t l = 0; l < m; l++)
                expected += a_value(i, l) * b_value(l, j);
            failed = pb_expect(k, "element", i * m + j, c[i * m + j], expected, 0, why, size);
        }
    }
    free(b_sum);
    return failed ? -1 : 0;
}

size_t pb_dgemm_naive_shape(pb_instance *k, size_t bytes) { return matmul_shape(k, bytes); }
void pb_dgemm_naive_init(pb_instance *k) { matmul_init(k); }
void pb_dgemm_naive_pass(pb_instance *k)
{
    const double *restrict a = k->array[0], *restrict b = k->array[1];
    double *restrict c = k->array[2];
    const size_t m = k->n, first = panel_row(k);
    for (size_t i = first; i < first + PANEL; i++)
        for (size_t j = 0; j < m; j++) {
            double sum = 0;
            for (size_t l = 0; l < m; l++)
                sum += a[i * m + l] * b[l * m + j];
            c[i * m + j] = sum;
        }
}
int pb_dgemm_naive_check(pb_instance *k, char *why, size_t size)
{
    return matmul_check(k, why, size);
}

size_t pb_dgemm_blocked_shape(pb_instance *k, size_t bytes) { return matmul_shape(k, bytes); }
void pb_dgemm_blocked_init(pb_instance *k) { matmul_init(k); }
void pb_dgemm_blocked_pass(pb_instance *k)
{
    const double *restrict a = k->array[0], *restrict b = k->array[1];
    double *restrict c = k->array[2];
    const size_t m = k->n, first = panel_row(k);
    for (size_t i = first; i < first + PANEL; i++)
        for (size_t j = 0; j < m; j++)
            c[i * m + j] = 0;
    for (size_t l0 = 0; l0 < m; l0 += TILE_K) {
        size_t l1 = l0 + TILE_K < m ? l0 + TILE_K : m;
        for (size_t j0 = 0; j0 < m; j0 += TILE_J) {
            size_t j1 = j0 + TILE_J < m ? j0 + TILE_J : m;
            for (size_t i = first; i < first + PANEL; i++)
                for (size_t l = l0; l < l1; l++) {
                    const double ail = a[i * m + l];
#pragma omp simd
                    for (size_t j = j0; j < j1; j++)
                        c[i * m + j] += ail * b[l * m + j];
                }
        }
    }
}
int pb_dgemm_blocked_check(pb_instance *k, char *why, size_t size)
{
    return matmul_check(k, why, size);
}

/* -- One right-looking LU step without pivoting (Golub & Van Loan, 3.2): B22 = A22 - l21 u12,
 * l21 = A21 / a11; a11 = 8, a power of two, keeps it exact (0: A, 1: B) ------------------- */
static double lu_value(size_t i, size_t j) { return i == 0 && j == 0 ? 8.0 : a_value(i, j); }
size_t pb_lu_step_shape(pb_instance *k, size_t bytes)
{
    size_t m = order_for(bytes, 16, 0, 1);
    k->n = m >= 2 ? m : 0;
    k->iterations = (uint64_t)(m - 1) * (m - 1);
    k->array_bytes[0] = k->array_bytes[1] = 8 * m * m;
    k->output = 1;
    return 64;
}
void pb_lu_step_init(pb_instance *k)
{
    fill(k->array[0], k->n, lu_value);
    fill(k->array[1], k->n, NULL);
}
void pb_lu_step_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    const size_t m = k->n;
    for (size_t i = 1; i < m; i++) {
        const double l = a[i * m] / a[0];
#pragma omp simd
        for (size_t j = 1; j < m; j++)
            b[i * m + j] = a[i * m + j] - l * a[j];
    }
}
int pb_lu_step_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    const size_t m = k->n;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++) {
            double expected = i && j ? lu_value(i, j) - lu_value(i, 0) / 8.0 * lu_value(0, j) : 0;
            if (pb_expect(k, "element", i * m + j, b[i * m + j], expected, 0, why, size))
                return -1;
        }
    return 0;
}

/* -- CSR y = A x: SPARSE_ROW nonzeros per row at scattered columns (0: values, 1: 32-bit
 * columns, 2: row starts, 3: x, 4: y) ----------------------------------------------------- */
size_t pb_spmv_shape(pb_instance *k, size_t bytes)
{
    const size_t per_row = SPARSE_ROW * 12 + 4 + 16;
    size_t rows = bytes > 4 ? (bytes - 4) / per_row : 0;
    if (rows > UINT32_MAX / SPARSE_ROW)
        rows = UINT32_MAX / SPARSE_ROW;
    k->n = rows;
    k->iterations = (uint64_t)SPARSE_ROW * rows;
    k->array_bytes[0] = 8 * SPARSE_ROW * rows;
    k->array_bytes[1] = 4 * SPARSE_ROW * rows;
    k->array_bytes[2] = 4 * (rows + 1);
    k->array_bytes[3] = k->array_bytes[4] = 8 * rows;
    k->output = 4;
    return per_row + 4;
}
void pb_spmv_init(pb_instance *k)
{
    double *value = k->array[0], *x = k->array[3], *y = k->array[4];
    uint32_t *column = k->array[1], *start = k->array[2];
    const size_t rows = k->n;
    for (size_t i = 0; i <= rows; i++)
        start[i] = (uint32_t)(SPARSE_ROW * i);
    for (size_t i = 0; i < rows; i++) {
        for (size_t t = 0; t < SPARSE_ROW; t++) {
            column[SPARSE_ROW * i + t] = (uint32_t)(pb_mix(SPARSE_ROW * i + t) % rows);
            value[SPARSE_ROW * i + t] = (double)((i + t) % 5) - 2.0;
        }
        x[i] = (double)(i % 7), y[i] = 0;
    }
}
void pb_spmv_pass(pb_instance *k)
{
    const double *restrict value = k->array[0], *restrict x = k->array[3];
    const uint32_t *restrict column = k->array[1], *restrict start = k->array[2];
    double *restrict y = k->array[4];
    for (size_t i = 0; i < k->n; i++) {
        double sum = 0;
        for (uint32_t p = start[i]; p < start[i + 1]; p++)
            sum += value[p] * x[column[p]];
        y[i] = sum;
    }
}
int pb_spmv_check(pb_instance *k, char *why, size_t size)
{
    const double *y = k->array[4];
    for (size_t i = 0; i < k->n; i++) {
        double expected = 0;
        for (size_t t = 0; t < SPARSE_ROW; t++)
            expected +=
                ((double)((i + t) % 5) - 2.0) * (double)((pb_mix(SPARSE_ROW * i + t) % k->n) % 7);
        if (pb_expect(k, "element of y", i, y[i], expected, 0, why, size))
            return -1;
    }
    return 0;
}

/* -- Transposes and a column walk (0: A, 1: B); A(i, j) = i m + j, exact to 2^53 ----------- */
static size_t transpose_shape(pb_instance *k, size_t bytes, int arrays)
{
    size_t m = order_for(bytes, 8 * (size_t)arrays, 0, 1);
    k->n = m;
    k->iterations = (uint64_t)m * m;
    for (int a = 0; a < arrays; a++)
        k->array_bytes[a] = 8 * m * m;
    k->output = arrays == 2 ? 1 : -1;
    return 8 * (size_t)arrays;
}
static void transpose_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    const size_t m = k->n;
    for (size_t i = 0; i < m * m; i++)
        a[i] = (double)i, b[i] = 0;
}
static int transpose_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    const size_t m = k->n;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            if (pb_expect(k, "element", i * m + j, b[i * m + j], (double)(j * m + i), 0, why, size))
                return -1;
    return 0;
}

size_t pb_transpose_shape(pb_instance *k, size_t bytes) { return transpose_shape(k, bytes, 2); }
void pb_transpose_init(pb_instance *k) { transpose_init(k); }
void pb_transpose_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    const size_t m = k->n;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++)
            b[j * m + i] = a[i * m + j];
}
int pb_transpose_check(pb_instance *k, char *why, size_t size)
{
    return transpose_check(k, why, size);
}

size_t pb_transpose_blocked_shape(pb_instance *k, size_t bytes)
{
    return transpose_shape(k, bytes, 2);
}
void pb_transpose_blocked_init(pb_instance *k) { transpose_init(k); }
void pb_transpose_blocked_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    const size_t m = k->n;
    for (size_t i0 = 0; i0 < m; i0 += TRANSPOSE_TILE)
        for (size_t j0 = 0; j0 < m; j0 += TRANSPOSE_TILE) {
            size_t i1 = i0 + TRANSPOSE_TILE < m ? i0 + TRANSPOSE_TILE : m;
            size_t j1 = j0 + TRANSPOSE_TILE < m ? j0 + TRANSPOSE_TILE : m;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    b[j * m + i] = a[i * m + j];
        }
}
int pb_transpose_blocked_check(pb_instance *k, char *why, size_t size)
{
    return transpose_check(k, why, size);
}

size_t pb_column_sum_shape(pb_instance *k, size_t bytes) { return transpose_shape(k, bytes, 1); }
void pb_column_sum_init(pb_instance *k) { fill(k->array[0], k->n, a_value); }
void pb_column_sum_pass(pb_instance *k)
{
    const double *a = k->array[0];
    const size_t m = k->n;
    double sum = 0;
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < m; i++)
            sum += a[i * m + j];
    k->result = sum;
}
int pb_column_sum_check(pb_instance *k, char *why, size_t size)
{
    double expected = 0;
    for (size_t i = 0; i < k->n; i++)
        for (size_t j = 0; j < k->n; j++)
            expected += a_value(i, j);
    return pb_expect(k, "the sum of pass", (size_t)k->passes, k->result, expected, 0, why, size);
}
