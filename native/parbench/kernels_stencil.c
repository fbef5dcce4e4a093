/* Stencils in 1, 2 and 3 dimensions and the two classic relaxation sweeps for the Poisson
 * equation (Jacobi out of place, Gauss-Seidel in place; Saad, "Iterative Methods for Sparse
 * Linear Systems", 4.1).
 *
 * The grids hold small integers and the weights are powers of two, so the out-of-place results
 * are exact whatever order the compiler adds in: they are compared bit for bit with the formula.
 * Gauss-Seidel changes its grid every pass; its check repeats the same passes on a fresh grid
 * with the plain loop and allows rounding differences of 1e-12. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kernels.h"

static double grid_value(size_t i, size_t j, size_t l)
{
    return (double)((3 * i + 5 * j + 7 * l) % 11);
}

/* -- 1-D ----------------------------------------------------------------------------------- */
size_t pb_stencil1d_shape(pb_instance *k, size_t bytes)
{
    size_t n = bytes / 16;
    k->n = n >= 3 ? n : 0;
    k->iterations = n - 2;
    k->array_bytes[0] = k->array_bytes[1] = 8 * n;
    k->output = 1;
    return 48;
}
void pb_stencil1d_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        a[i] = grid_value(i, 0, 0), b[i] = 0;
}
void pb_stencil1d_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    for (size_t i = 1; i + 1 < k->n; i++)
        b[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
}
int pb_stencil1d_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    for (size_t i = 0; i < k->n; i++) {
        double expected = 0; /* the two ends are never written */
        if (i > 0 && i + 1 < k->n)
            expected = 0.25 * grid_value(i - 1, 0, 0) + 0.5 * grid_value(i, 0, 0) +
                       0.25 * grid_value(i + 1, 0, 0);
        if (pb_expect(k, "point", i, b[i], expected, 0, why, size))
            return -1;
    }
    return 0;
}

/* -- 2-D: an n x n grid per array, row-major --------------------------------------------- */
static size_t square_shape(pb_instance *k, size_t bytes, int arrays, int output)
{
    size_t n = (size_t)sqrt((double)bytes / (8.0 * arrays));
    while ((n + 1) * (n + 1) * 8 * (size_t)arrays <= bytes)
        n++;
    while (n > 0 && n * n * 8 * (size_t)arrays > bytes)
        n--;
    k->n = n >= 3 ? n : 0;
    k->iterations = (n - 2) * (n - 2);
    for (int a = 0; a < arrays; a++)
        k->array_bytes[a] = 8 * n * n;
    k->output = output;
    return 72 * (size_t)arrays;
}

static void square_init(pb_instance *k, int arrays)
{
    size_t n = k->n;
    for (int a = 0; a < arrays; a++) {
        double *x = k->array[a];
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                x[i * n + j] = a == 0 ? grid_value(i, j, 0) : a == 1 ? 0 : grid_value(j, i, 1);
    }
}

/* 0.5 centre + 0.125 (north + south + west + east) */
static double five_point(const double *x, size_t n, size_t i, size_t j)
{
    return 0.5 * x[i * n + j] +
           0.125 * (x[(i - 1) * n + j] + x[(i + 1) * n + j] + x[i * n + j - 1] + x[i * n + j + 1]);
}

size_t pb_stencil2d_shape(pb_instance *k, size_t bytes) { return square_shape(k, bytes, 2, 1); }
void pb_stencil2d_init(pb_instance *k) { square_init(k, 2); }
void pb_stencil2d_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    const size_t n = k->n;
    for (size_t i = 1; i + 1 < n; i++)
        for (size_t j = 1; j + 1 < n; j++)
            b[i * n + j] = 0.5 * a[i * n + j] + 0.125 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                                         a[i * n + j - 1] + a[i * n + j + 1]);
}
int pb_stencil2d_check(pb_instance *k, char *why, size_t size)
{
    const double *a = k->array[0], *b = k->array[1];
    const size_t n = k->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int interior = i > 0 && j > 0 && i + 1 < n && j + 1 < n;
            if (pb_expect(k, "point", i * n + j, b[i * n + j],
                          interior ? five_point(a, n, i, j) : 0, 0, why, size))
                return -1;
        }
    return 0;
}

/* -- 3-D: an n x n x n grid per array --------------------------------------------------- */
size_t pb_stencil3d_shape(pb_instance *k, size_t bytes)
{
    size_t n = (size_t)cbrt((double)bytes / 16.0);
    while ((n + 1) * (n + 1) * (n + 1) * 16 <= bytes)
        n++;
    while (n > 0 && n * n * n * 16 > bytes)
        n--;
    k->n = n >= 3 ? n : 0;
    k->iterations = (n - 2) * (n - 2) * (n - 2);
    k->array_bytes[0] = k->array_bytes[1] = 8 * n * n * n;
    k->output = 1;
    return 16 * 27;
}
void pb_stencil3d_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    const size_t n = k->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            for (size_t l = 0; l < n; l++)
                a[(i * n + j) * n + l] = grid_value(i, j, l), b[(i * n + j) * n + l] = 0;
}
#define AT(x, i, j, l) x[((i)*n + (j)) * n + (l)]
void pb_stencil3d_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    const size_t n = k->n;
    for (size_t i = 1; i + 1 < n; i++)
        for (size_t j = 1; j + 1 < n; j++)
            for (size_t l = 1; l + 1 < n; l++)
                AT(b, i, j, l) =
                    0.25 * AT(a, i, j, l) +
                    0.125 * (AT(a, i - 1, j, l) + AT(a, i + 1, j, l) + AT(a, i, j - 1, l) +
                             AT(a, i, j + 1, l) + AT(a, i, j, l - 1) + AT(a, i, j, l + 1));
}
int pb_stencil3d_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    const size_t n = k->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            for (size_t l = 0; l < n; l++) {
                double expected = 0;
                if (i && j && l && i + 1 < n && j + 1 < n && l + 1 < n)
                    expected = 0.25 * grid_value(i, j, l) +
                               0.125 * (grid_value(i - 1, j, l) + grid_value(i + 1, j, l) +
                                        grid_value(i, j - 1, l) + grid_value(i, j + 1, l) +
                                        grid_value(i, j, l - 1) + grid_value(i, j, l + 1));
                if (pb_expect(k, "point", (i * n + j) * n + l, AT(b, i, j, l), expected, 0, why,
                              size))
                    return -1;
            }
    return 0;
}

/* -- Jacobi: u (array 0), v = the new iterate (array 1), f = h^2 times the source (array 2) -- */
size_t pb_jacobi2d_shape(pb_instance *k, size_t bytes) { return square_shape(k, bytes, 3, 1); }
void pb_jacobi2d_init(pb_instance *k) { square_init(k, 3); }
void pb_jacobi2d_pass(pb_instance *k)
{
    const double *restrict u = k->array[0], *restrict f = k->array[2];
    double *restrict v = k->array[1];
    const size_t n = k->n;
    for (size_t i = 1; i + 1 < n; i++)
        for (size_t j = 1; j + 1 < n; j++)
            v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                   u[i * n + j + 1] + f[i * n + j]);
}
int pb_jacobi2d_check(pb_instance *k, char *why, size_t size)
{
    const double *v = k->array[1];
    const size_t n = k->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double expected = 0;
            if (i && j && i + 1 < n && j + 1 < n)
                expected = 0.25 * (grid_value(i - 1, j, 0) + grid_value(i + 1, j, 0) +
                                   grid_value(i, j - 1, 0) + grid_value(i, j + 1, 0) +
                                   grid_value(j, i, 1));
            if (pb_expect(k, "point", i * n + j, v[i * n + j], expected, 0, why, size))
                return -1;
        }
    return 0;
}

/* -- Gauss-Seidel: u (array 0) in place, f (array 1) ------------------------------------ */
static void gauss_seidel_sweep(double *restrict u, const double *restrict f, size_t n)
{
    for (size_t i = 1; i + 1 < n; i++)
        for (size_t j = 1; j + 1 < n; j++)
            u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                   u[i * n + j + 1] + f[i * n + j]);
}
static void gauss_seidel_start(double *u, double *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            u[i * n + j] = grid_value(i, j, 0), f[i * n + j] = grid_value(j, i, 1);
}
size_t pb_gauss_seidel2d_shape(pb_instance *k, size_t bytes)
{
    return square_shape(k, bytes, 2, 0);
}
void pb_gauss_seidel2d_init(pb_instance *k) { gauss_seidel_start(k->array[0], k->array[1], k->n); }
void pb_gauss_seidel2d_pass(pb_instance *k) { gauss_seidel_sweep(k->array[0], k->array[1], k->n); }
int pb_gauss_seidel2d_check(pb_instance *k, char *why, size_t size)
{
    const size_t n = k->n;
    double *u = pa_alloc(n * n, sizeof(double), "the reference grid");
    double *f = pa_alloc(n * n, sizeof(double), "the reference source");
    gauss_seidel_start(u, f, n);
    for (uint64_t p = 0; p < k->passes; p++)
        gauss_seidel_sweep(u, f, n);
    const double *measured = k->array[0];
    int failed = 0;
    for (size_t i = 0; i < n * n && !failed; i++)
        failed = pb_expect(k, "point", i, measured[i], u[i], 1e-12, why, size);
    free(u), free(f);
    return failed;
}
