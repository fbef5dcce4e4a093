/* The angular quadrature of app.sweep: the level-symmetric S_N point set with equal weights.
 *
 * Points (Carlson; Lewis & Miller, "Computational Methods of Neutron Transport", 1984, sec. 4-2):
 * the direction cosines of one octant take n = N/2 levels mu_1 < ... < mu_n with
 * mu_i^2 = mu_1^2 + (i - 1) * 2 (1 - 3 mu_1^2) / (N - 2), and a direction is (mu_i, mu_j, mu_k)
 * with i + j + k = n + 2: n(n+1)/2 = N(N+2)/8 directions per octant, invariant under every
 * permutation of the axes. Weights: all equal, 1 / (8 mmo) per direction, so they sum to 1 over
 * the sphere (1/8 per octant) and phi = sum w psi is the angular mean of psi. Equal weights
 * integrate 1 and mu^2 (= 1/3, by the axis symmetry) exactly; mu_1 is chosen so that they also
 * integrate mu exactly over an octant (mean 1/2, the half-range current of an isotropic flux),
 * found by bisection (the mean grows monotonically with mu_1). S_2 has one point, mu = 1/sqrt(3),
 * whose mean is 0.577. N = 2 .. 16: beyond, the first-moment rule drives mu_1 towards 0. */
#ifndef PA_SWEEP_QUADRATURE_H
#define PA_SWEEP_QUADRATURE_H

#define PA_QUADRATURE_MAX_ORDER  16
#define PA_QUADRATURE_MAX_ANGLES 36 /* per octant, S_16 */

typedef struct {
    int order;      /* N of S_N */
    int per_octant; /* mmo = N (N + 2) / 8 */
    double levels[PA_QUADRATURE_MAX_ORDER / 2];
    double mu[PA_QUADRATURE_MAX_ANGLES], eta[PA_QUADRATURE_MAX_ANGLES],
        xi[PA_QUADRATURE_MAX_ANGLES]; /* cosines with x, y, z; positive (the first octant) */
    double weight;                    /* of each of the 8 mmo directions */
} pa_quadrature;

/* N for an angle count per octant, or 0 when it is not N (N + 2) / 8 with N = 2, 4, .., 16. */
int pa_quadrature_order(int per_octant);
/* The set of pa_quadrature_order(per_octant) (which must not be 0). */
void pa_quadrature_build(pa_quadrature *quadrature, int per_octant);

#endif
