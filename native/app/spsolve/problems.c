#include "problems.h"

#include "alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Room for `order` unknowns and `nnz` entries in the int indices CHOLMOD and MUMPS take, and in
 * the memory available (checked before the matrix is allocated). */
static int check_size(const char *problem, int n, double order, double nnz, char *error,
                      size_t size)
{
    if (order >= 0x7fffffff || nnz >= 0x7fffffff) {
        snprintf(error, size,
                 "%s n=%d has %.3g unknowns and %.3g entries, beyond the 2^31 - 1 this "
                 "program indexes; choose a smaller n",
                 problem, n, order, nnz);
        return -1;
    }
    char what[96];
    snprintf(what, sizeof what, "%s n=%d has %.0f unknowns and %.0f entries", problem, n, order,
             nnz);
    double bytes = (order + 1) * sizeof(int) + nnz * (sizeof(int) + sizeof(double));
    return pa_check_memory(bytes, pa_memory_available(), what, "the matrix alone", error, size);
}

/* The d-dimensional Laplacian by the (2d+1)-point stencil, written column by column in row order:
 * the neighbours of point p are p - stride and p + stride along each axis (strides 1, n, n^2). */
static int laplace(int dims, int n, pa_sparse *a, char *error, size_t size)
{
    const char *name = dims == 2 ? "laplace2d" : "laplace3d";
    double order = pow(n, dims), nnz = (2 * dims + 1) * order - 2 * dims * pow(n, dims - 1);
    if (check_size(name, n, order, nnz, error, size))
        return -1;
    pa_sparse_alloc(a, (int)order, (long long)nnz);
    int stride[3] = {1, n, n * n}, coord[3] = {0, 0, 0};
    int q = 0;
    for (int p = 0; p < a->n; p++) {
        for (int axis = dims - 1; axis >= 0; axis--) /* below the diagonal, increasing rows */
            if (coord[axis] > 0) {
                a->rowind[q] = p - stride[axis];
                a->values[q++] = -1.0;
            }
        a->rowind[q] = p;
        a->values[q++] = 2.0 * dims;
        for (int axis = 0; axis < dims; axis++)
            if (coord[axis] < n - 1) {
                a->rowind[q] = p + stride[axis];
                a->values[q++] = -1.0;
            }
        a->colptr[p + 1] = q;
        for (int axis = 0; axis < dims && ++coord[axis] == n; axis++) /* next grid point */
            coord[axis] = 0;
    }
    return 0;
}

int pa_laplace2d(int n, pa_sparse *a, char *error, size_t size)
{
    return laplace(2, n, a, error, size);
}

int pa_laplace3d(int n, pa_sparse *a, char *error, size_t size)
{
    return laplace(3, n, a, error, size);
}

/* -- linear elasticity ------------------------------------------------------------------------ */

/* The 24 x 24 stiffness matrix of a cube of side h, trilinear (Q1) shape functions, isotropic
 * Hooke's law: K = sum over the 2 x 2 x 2 Gauss points of B^T D B det(J) (Hughes, "The Finite
 * Element Method", 2000, sections 3.5-3.9). Dof 3a + c is displacement component c of local node
 * a, whose corner is (a & 1, a >> 1 & 1, a >> 2 & 1). Strains in Voigt order xx, yy, zz, xy, yz,
 * zx with engineering shears. */
static void hexahedron_stiffness(double h, double youngs_modulus, double nu, double k[24][24])
{
    double lambda = youngs_modulus * nu / ((1 + nu) * (1 - 2 * nu));
    double mu = youngs_modulus / (2 * (1 + nu));
    double d[6][6] = {{0}};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            d[i][j] = lambda;
        d[i][i] += 2 * mu;
        d[i + 3][i + 3] = mu;
    }
    memset(k, 0, sizeof(double) * 24 * 24);
    const double g = 1 / sqrt(3.0), jacobian = h / 2, det = jacobian * jacobian * jacobian;
    for (int gp = 0; gp < 8; gp++) {
        double xi[3] = {gp & 1 ? g : -g, gp & 2 ? g : -g, gp & 4 ? g : -g};
        double b[6][24] = {{0}};
        for (int a = 0; a < 8; a++) {
            double s[3] = {a & 1 ? 1 : -1, a & 2 ? 1 : -1, a & 4 ? 1 : -1}, grad[3];
            for (int c = 0; c < 3; c++) /* dN_a/dx_c = dN_a/dxi_c / (h/2) */
                grad[c] = s[c] * (1 + s[(c + 1) % 3] * xi[(c + 1) % 3]) *
                          (1 + s[(c + 2) % 3] * xi[(c + 2) % 3]) / 8 / jacobian;
            for (int c = 0; c < 3; c++)
                b[c][3 * a + c] = grad[c];
            b[3][3 * a + 0] = grad[1], b[3][3 * a + 1] = grad[0]; /* gamma_xy */
            b[4][3 * a + 1] = grad[2], b[4][3 * a + 2] = grad[1]; /* gamma_yz */
            b[5][3 * a + 2] = grad[0], b[5][3 * a + 0] = grad[2]; /* gamma_zx */
        }
        double db[6][24];
        for (int r = 0; r < 6; r++)
            for (int col = 0; col < 24; col++) {
                db[r][col] = 0;
                for (int m = 0; m < 6; m++)
                    db[r][col] += d[r][m] * b[m][col];
            }
        for (int i = 0; i < 24; i++)
            for (int j = 0; j < 24; j++)
                for (int r = 0; r < 6; r++)
                    k[i][j] += b[r][i] * db[r][j] * det; /* Gauss weights are 1 */
    }
}

typedef struct {
    int n; /* elements per edge; node coordinates 0..n, free nodes have x >= 1 */
} grid;

/* The number of a free node (x >= 1), x fastest: increasing in (z, y, x). */
static int free_node(const grid *g, int x, int y, int z)
{
    return (z * (g->n + 1) + y) * g->n + x - 1;
}

/* The structure: column 3p + c holds rows 3q + d for every free node q in the 3 x 3 x 3 block
 * around p (in increasing q) and d = 0..2, so rows come out sorted. */
static void elasticity_structure(const grid *g, pa_sparse *a)
{
    int n = g->n, q = 0, column = 0;
    for (int z = 0; z <= n; z++)
        for (int y = 0; y <= n; y++)
            for (int x = 1; x <= n; x++)
                for (int c = 0; c < 3; c++, column++) {
                    for (int zz = z - 1; zz <= z + 1; zz++)
                        for (int yy = y - 1; yy <= y + 1; yy++)
                            for (int xx = x - 1; xx <= x + 1; xx++) {
                                if (zz < 0 || zz > n || yy < 0 || yy > n || xx < 1 || xx > n)
                                    continue;
                                for (int d = 0; d < 3; d++) {
                                    a->rowind[q] = 3 * free_node(g, xx, yy, zz) + d;
                                    a->values[q++] = 0.0;
                                }
                            }
                    a->colptr[column + 1] = q;
                }
}

int pa_elasticity3d(int n, double youngs_modulus, double poisson_ratio, pa_sparse *a, char *error,
                    size_t size)
{
    double order = 3.0 * n * (n + 1.0) * (n + 1.0);
    double nnz = 9.0 * (3.0 * n - 2) * (3.0 * n + 1) * (3.0 * n + 1);
    if (check_size("elasticity3d", n, order, nnz, error, size))
        return -1;
    pa_sparse_alloc(a, (int)order, (long long)nnz);
    grid g = {n};
    elasticity_structure(&g, a);
    double k[24][24];
    hexahedron_stiffness(1.0 / n, youngs_modulus, poisson_ratio, k);
    for (int z = 0; z < n; z++) /* assembly, element by element */
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++)
                for (int na = 0; na < 8; na++) {
                    int ax = x + (na & 1), ay = y + (na >> 1 & 1), az = z + (na >> 2 & 1);
                    if (ax == 0)
                        continue; /* clamped */
                    int pa = free_node(&g, ax, ay, az);
                    for (int nb = 0; nb < 8; nb++) {
                        int bx = x + (nb & 1), by = y + (nb >> 1 & 1), bz = z + (nb >> 2 & 1);
                        if (bx == 0)
                            continue;
                        int pb = free_node(&g, bx, by, bz);
                        for (int c = 0; c < 3; c++)
                            for (int d = 0; d < 3; d++)
                                a->values[pa_sparse_position(a, 3 * pa + c, 3 * pb + d)] +=
                                    k[3 * na + c][3 * nb + d];
                    }
                }
    return 0;
}

void pa_check_matrix_source(const pa_args *args, const char *problems)
{
    int file = *pa_arg_text(args, "matrix") != '\0';
    int generated = strcmp(pa_arg_text(args, "problem"), "none") != 0;
    if (file && generated)
        pa_fail(2, "give matrix=FILE or problem=..., not both");
    if (!file && !generated)
        pa_fail(2, "give a matrix: matrix=FILE (Matrix Market) or problem=%s with n=...", problems);
}
