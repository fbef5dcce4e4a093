/* The equal-weight level-symmetric S_N set (quadrature.h). */
#include "quadrature.h"

#include <math.h>

int pa_quadrature_order(int per_octant)
{
    for (int n = 1; 2 * n <= PA_QUADRATURE_MAX_ORDER; n++)
        if (n * (n + 1) / 2 == per_octant)
            return 2 * n;
    return 0;
}

/* The n cosine levels for a given mu_1 (Lewis & Miller eq. 4-29). */
static void levels_of(double mu1, int n, double *levels)
{
    double step = n > 1 ? 2.0 * (1.0 - 3.0 * mu1 * mu1) / (2.0 * n - 2.0) : 0.0;
    for (int i = 0; i < n; i++)
        levels[i] = sqrt(mu1 * mu1 + i * step);
}

/* Fills the directions (mu_i, mu_j, mu_k), i + j + k = n + 2 (1-based), in lexicographic order of
 * (i, j); returns the equal-weight mean of mu over them. */
static double directions(pa_quadrature *q, int n)
{
    int m = 0;
    double sum = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; i + j < n; j++, m++) {
            q->mu[m] = q->levels[i];
            q->eta[m] = q->levels[j];
            q->xi[m] = q->levels[n - 1 - i - j];
            sum += q->mu[m];
        }
    return sum / m;
}

void pa_quadrature_build(pa_quadrature *q, int per_octant)
{
    int n = pa_quadrature_order(per_octant) / 2;
    q->order = 2 * n;
    q->per_octant = per_octant;
    q->weight = 1.0 / (8.0 * per_octant);
    double low = 0.0, high = 1.0 / sqrt(3.0);
    if (n > 1) /* bisection on mu_1 for a mean cosine of 1/2 over the octant */
        for (int step = 0; step < 200 && high - low > 1e-17; step++) {
            double middle = 0.5 * (low + high);
            levels_of(middle, n, q->levels);
            if (directions(q, n) < 0.5)
                low = middle;
            else
                high = middle;
        }
    levels_of(n > 1 ? 0.5 * (low + high) : high, n, q->levels);
    directions(q, n);
}
