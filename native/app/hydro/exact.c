/* The exact Riemann solver (exact.h), after Toro ch. 4. */
#include "exact.h"

#include <math.h>

/* f_K(p) and its derivative (Toro eqs. 4.6, 4.7, 4.37). */
static double pressure_function(const pa_state1d *k, double gamma, double p, double *slope)
{
    const double a = sqrt(gamma * k->p / k->rho);
    if (p > k->p) { /* shock */
        const double big_a = 2.0 / ((gamma + 1.0) * k->rho);
        const double big_b = (gamma - 1.0) / (gamma + 1.0) * k->p;
        const double root = sqrt(big_a / (p + big_b));
        *slope = root * (1.0 - 0.5 * (p - k->p) / (big_b + p));
        return (p - k->p) * root;
    }
    const double ratio = p / k->p, e = (gamma - 1.0) / (2.0 * gamma); /* rarefaction */
    *slope = pow(ratio, -(gamma + 1.0) / (2.0 * gamma)) / (k->rho * a);
    return 2.0 * a / (gamma - 1.0) * (pow(ratio, e) - 1.0);
}

int pa_exact_solve(pa_exact *q)
{
    const double g = q->gamma, e = (g - 1.0) / (2.0 * g);
    const double al = sqrt(g * q->left.p / q->left.rho), ar = sqrt(g * q->right.p / q->right.rho);
    const double du = q->right.u - q->left.u;
    if (2.0 * (al + ar) / (g - 1.0) <= du) { /* vacuum generated: two fans, vacuum between */
        q->p_star = 0;
        q->u_star = 0.5 * (q->left.u + 2.0 * al / (g - 1.0) + q->right.u - 2.0 * ar / (g - 1.0));
        return -1;
    }
    double p =
        pow((al + ar - 0.5 * (g - 1.0) * du) / (al / pow(q->left.p, e) + ar / pow(q->right.p, e)),
            1.0 / e); /* two-rarefaction guess */
    for (int i = 0; i < 100; i++) {
        double sl, sr;
        const double f =
            pressure_function(&q->left, g, p, &sl) + pressure_function(&q->right, g, p, &sr) + du;
        double next = p - f / (sl + sr);
        if (next < 1e-14 * p)
            next = 1e-14 * p;
        const double change = 2.0 * fabs(next - p) / (next + p);
        p = next;
        if (change < 1e-15)
            break;
    }
    double sl, sr;
    q->p_star = p;
    q->u_star = 0.5 * (q->left.u + q->right.u) + 0.5 * (pressure_function(&q->right, g, p, &sr) -
                                                        pressure_function(&q->left, g, p, &sl));
    return 0;
}

/* One side of the wave pattern, written for the left; the right is its mirror image (u and s
 * negated). */
static pa_state1d sample_side(const pa_state1d *k, double gamma, double p_star, double u_star,
                              double s)
{
    const double a = sqrt(gamma * k->p / k->rho), g = gamma;
    const double gm = (g - 1.0) / (g + 1.0);
    if (p_star > k->p) { /* shock, speed eq. 4.52 */
        const double speed =
            k->u - a * sqrt((g + 1.0) / (2.0 * g) * p_star / k->p + (g - 1.0) / (2.0 * g));
        if (s <= speed)
            return *k;
        const double ratio = p_star / k->p;
        return (pa_state1d){k->rho * (ratio + gm) / (gm * ratio + 1.0), u_star, p_star};
    }
    const double head = k->u - a; /* rarefaction, eqs. 4.53-4.56 */
    const double a_star = a * pow(p_star / k->p, (g - 1.0) / (2.0 * g)), tail = u_star - a_star;
    if (s <= head)
        return *k;
    if (s >= tail)
        return (pa_state1d){k->rho * pow(p_star / k->p, 1.0 / g), u_star, p_star};
    const double c = 2.0 / (g + 1.0) + gm / a * (k->u - s);
    return (pa_state1d){k->rho * pow(c, 2.0 / (g - 1.0)),
                        2.0 / (g + 1.0) * (a + 0.5 * (g - 1.0) * k->u + s),
                        k->p * pow(c, 2.0 * g / (g - 1.0))};
}

/* The left state's rarefaction fan into vacuum (Toro sec. 4.6): its tail moves at
 * u + 2 a / (gamma - 1). */
static pa_state1d sample_into_vacuum(const pa_state1d *k, double gamma, double s)
{
    const double a = sqrt(gamma * k->p / k->rho), g = gamma;
    if (s <= k->u - a)
        return *k;
    if (s >= k->u + 2.0 * a / (g - 1.0))
        return (pa_state1d){0, s, 0};
    const double c = 2.0 / (g + 1.0) + (g - 1.0) / ((g + 1.0) * a) * (k->u - s);
    return (pa_state1d){k->rho * pow(c, 2.0 / (g - 1.0)),
                        2.0 / (g + 1.0) * (a + 0.5 * (g - 1.0) * k->u + s),
                        k->p * pow(c, 2.0 * g / (g - 1.0))};
}

pa_state1d pa_exact_sample(const pa_exact *q, double s)
{
    if (q->p_star == 0) { /* vacuum generated */
        const pa_state1d mirrored = {q->right.rho, -q->right.u, q->right.p};
        if (s <= q->u_star)
            return sample_into_vacuum(&q->left, q->gamma, s);
        pa_state1d w = sample_into_vacuum(&mirrored, q->gamma, -s);
        w.u = -w.u;
        return w;
    }
    if (s <= q->u_star)
        return sample_side(&q->left, q->gamma, q->p_star, q->u_star, s);
    const pa_state1d mirrored = {q->right.rho, -q->right.u, q->right.p};
    pa_state1d w = sample_side(&mirrored, q->gamma, q->p_star, -q->u_star, -s);
    w.u = -w.u;
    return w;
}
