/* The ideal-gas Euler equations, MUSCL-Hancock and the HLL/HLLC fluxes (euler.h). */
#include "euler.h"

#include <math.h>

int pa_primitive(const pa_gas *gas, const double u[PA_NVAR], double w[PA_NVAR])
{
    const double rho = u[0];
    w[0] = rho;
    w[1] = u[1] / rho;
    w[2] = u[2] / rho;
    w[3] = u[3] / rho;
    w[4] = (gas->gamma - 1.0) * (u[4] - 0.5 * (u[1] * w[1] + u[2] * w[2] + u[3] * w[3]));
    return rho > 0 && w[4] > 0 && isfinite(rho) && isfinite(w[4]) ? 0 : -1;
}

void pa_conserved(const pa_gas *gas, const double w[PA_NVAR], double u[PA_NVAR])
{
    u[0] = w[0];
    u[1] = w[0] * w[1];
    u[2] = w[0] * w[2];
    u[3] = w[0] * w[3];
    u[4] = w[4] / (gas->gamma - 1.0) + 0.5 * w[0] * (w[1] * w[1] + w[2] * w[2] + w[3] * w[3]);
}

double pa_sound_speed(const pa_gas *gas, const double w[PA_NVAR])
{
    return sqrt(gas->gamma * w[4] / w[0]);
}

/* The state with the velocity along `axis` first: (rho, u_n, u_t1, u_t2, p). */
static void rotate(const double *w, int axis, double r[PA_NVAR])
{
    r[0] = w[0];
    r[1] = w[1 + axis];
    r[2] = w[1 + (axis + 1) % 3];
    r[3] = w[1 + (axis + 2) % 3];
    r[4] = w[4];
}

static double van_leer(double left, double right)
{
    return left * right > 0 ? 2.0 * left * right / (left + right) : 0.0;
}

/* Face values of the middle cell m (neighbours l, r): side -1 its left face, +1 its right face,
 * each moved by half a step: W - dt/(2 dx) A(W) slope (Toro eq. 14.35, primitive form). */
static void evolved_face(double gamma, const double l[PA_NVAR], const double m[PA_NVAR],
                         const double r[PA_NVAR], int side, double dt_dx, double face[PA_NVAR])
{
    double d[PA_NVAR];
    for (int v = 0; v < PA_NVAR; v++)
        d[v] = van_leer(m[v] - l[v], r[v] - m[v]);
    const double u = m[1], h = 0.5 * dt_dx;
    const double change[PA_NVAR] = {
        u * d[0] + m[0] * d[1],         u * d[1] + d[4] / m[0], u * d[2], u * d[3],
        gamma * m[4] * d[1] + u * d[4],
    };
    for (int v = 0; v < PA_NVAR; v++)
        face[v] = m[v] + 0.5 * side * d[v] - h * change[v];
}

/* The physical flux and conserved state of a rotated primitive state. */
static void flux_and_state(double gamma, const double w[PA_NVAR], double f[PA_NVAR],
                           double u[PA_NVAR])
{
    const double kinetic = 0.5 * w[0] * (w[1] * w[1] + w[2] * w[2] + w[3] * w[3]);
    const double energy = w[4] / (gamma - 1.0) + kinetic;
    u[0] = w[0];
    u[1] = w[0] * w[1];
    u[2] = w[0] * w[2];
    u[3] = w[0] * w[3];
    u[4] = energy;
    f[0] = u[1];
    f[1] = u[1] * w[1] + w[4];
    f[2] = u[1] * w[2];
    f[3] = u[1] * w[3];
    f[4] = w[1] * (energy + w[4]);
}

/* HLL (Harten, Lax & van Leer 1983) or HLLC (Toro, Spruce & Speares 1994) between the rotated
 * states l and r, with Davis's estimates S_L = min(u_l - a_l, u_r - a_r), S_R = max(...). */
static void riemann_flux(double gamma, pa_riemann kind, const double l[PA_NVAR],
                         const double r[PA_NVAR], double f[PA_NVAR])
{
    double fl[PA_NVAR], fr[PA_NVAR], ul[PA_NVAR], ur[PA_NVAR];
    flux_and_state(gamma, l, fl, ul);
    flux_and_state(gamma, r, fr, ur);
    const double al = sqrt(gamma * l[4] / l[0]), ar = sqrt(gamma * r[4] / r[0]);
    const double sl = fmin(l[1] - al, r[1] - ar), sr = fmax(l[1] + al, r[1] + ar);
    if (sl >= 0) {
        for (int v = 0; v < PA_NVAR; v++)
            f[v] = fl[v];
        return;
    }
    if (sr <= 0) {
        for (int v = 0; v < PA_NVAR; v++)
            f[v] = fr[v];
        return;
    }
    if (kind == PA_RIEMANN_HLL) {
        for (int v = 0; v < PA_NVAR; v++)
            f[v] = (sr * fl[v] - sl * fr[v] + sl * sr * (ur[v] - ul[v])) / (sr - sl);
        return;
    }
    const double ml = l[0] * (sl - l[1]), mr = r[0] * (sr - r[1]);
    const double star = (r[4] - l[4] + l[1] * ml - r[1] * mr) / (ml - mr); /* Toro eq. 10.37 */
    const int left = star >= 0;
    const double *w = left ? l : r, *fk = left ? fl : fr, *uk = left ? ul : ur;
    const double s = left ? sl : sr, factor = w[0] * (s - w[1]) / (s - star);
    const double ustar[PA_NVAR] = {
        factor,
        factor * star,
        factor * w[2],
        factor * w[3],
        factor * (uk[4] / w[0] + (star - w[1]) * (star + w[4] / (w[0] * (s - w[1])))),
    }; /* Toro eq. 10.39 */
    for (int v = 0; v < PA_NVAR; v++)
        f[v] = fk[v] + s * (ustar[v] - uk[v]);
}

__attribute__((noinline)) void pa_interface_flux(const pa_gas *gas, const double *a,
                                                 const double *b, const double *c, const double *d,
                                                 int axis, double dt_dx, double flux[PA_NVAR])
{
    double ra[PA_NVAR], rb[PA_NVAR], rc[PA_NVAR], rd[PA_NVAR], left[PA_NVAR], right[PA_NVAR];
    rotate(a, axis, ra), rotate(b, axis, rb), rotate(c, axis, rc), rotate(d, axis, rd);
    evolved_face(gas->gamma, ra, rb, rc, +1, dt_dx, left);  /* b's right face */
    evolved_face(gas->gamma, rb, rc, rd, -1, dt_dx, right); /* c's left face */
    if (!(left[0] > 0 && left[4] > 0 && right[0] > 0 && right[4] > 0)) {
        for (int v = 0; v < PA_NVAR; v++)
            left[v] = rb[v], right[v] = rc[v];
    }
    double f[PA_NVAR];
    riemann_flux(gas->gamma, gas->riemann, left, right, f);
    flux[0] = f[0];
    flux[1 + axis] = f[1];
    flux[1 + (axis + 1) % 3] = f[2];
    flux[1 + (axis + 2) % 3] = f[3];
    flux[4] = f[4];
}
