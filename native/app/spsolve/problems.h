/* Generated SPD problems on an n-point (or n-element) grid of the unit square or cube.
 *
 *   laplace2d     5-point finite-difference Laplacian, n x n interior points, Dirichlet boundary
 *                 eliminated: order n^2, 5n^2 - 4n entries (4 on the diagonal, -1 off it)
 *   laplace3d     7-point Laplacian, n^3 interior points: order n^3, 7n^3 - 6n^2 entries
 *   elasticity3d  linear elasticity, n x n x n trilinear 8-node hexahedra (Q1), 3 displacement
 *                 dofs per node, isotropic material (E, nu), the face x = 0 clamped (its nodes
 *                 eliminated): order 3n(n+1)^2, 9(3n-2)(3n+1)^2 entries (every dof couples with
 *                 the 3 dofs of each free node of the 27 around it) */
#ifndef PA_PROBLEMS_H
#define PA_PROBLEMS_H

#include <stddef.h>

#include "args.h"
#include "sparse.h"

/* Each returns 0, or -1 with one sentence in `error` (too large, out of memory). */
int pa_laplace2d(int n, pa_sparse *a, char *error, size_t size);
int pa_laplace3d(int n, pa_sparse *a, char *error, size_t size);
int pa_elasticity3d(int n, double youngs_modulus, double poisson_ratio, pa_sparse *a, char *error,
                    size_t size);

/* Exactly one source of the matrix: matrix=FILE or problem= one of `problems` ("laplace2d|..."),
 * which the message names; else one sentence and exit status 2. */
void pa_check_matrix_source(const pa_args *args, const char *problems);

#endif
