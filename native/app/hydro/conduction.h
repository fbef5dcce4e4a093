/* The implicit part of app.hydro (solver=cg), SAGE's input "with the solver turned on": heat
 * conduction of the internal energy, backward Euler, solved matrix-free by conjugate gradients
 * (Hestenes & Stiefel 1952; Shewchuk, "An Introduction to the Conjugate Gradient Method Without
 * the Agonizing Pain", 1994, sec. B2).
 *
 * With e the specific internal energy, rho the density (held fixed), sigma = dt kappa / h^2 and
 * L the 7-point Laplacian times h^2 (zero-gradient at outflow boundaries, wrapped on a periodic
 * box; an axis one cell long has no term):
 *     (diag(rho) - sigma L) e' = rho e,
 * symmetric positive definite. CG starts from e' = e and stops when ||r|| <= cg_tolerance ||b||
 * or after cg_iterations; each iteration is one gather/scatter of the search direction and two
 * global reductions (p.Ap, r.r). The energy then changes in flux form,
 *     E += sigma sum_faces (e'_neighbour - e'_cell),
 * each face's term the exact negative of its neighbour's, so that total energy is conserved to
 * rounding whatever the residual. */
#ifndef PA_HYDRO_CONDUCTION_H
#define PA_HYDRO_CONDUCTION_H

#include "solver.h"

void pa_conduction_step(pa_hydro *hydro, double dt);

#endif
