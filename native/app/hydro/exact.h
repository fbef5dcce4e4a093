/* The exact solution of the Riemann problem of the 1-D Euler equations of an ideal gas (Toro,
 * "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., 2009, ch. 4): the star
 * pressure by Newton iteration on the pressure function (eq. 4.5, started from the two-rarefaction
 * estimate, eq. 4.46), then the self-similar solution sampled at x / t (sec. 4.5). app.hydro's
 * shock-tube problems are checked against it. */
#ifndef PA_HYDRO_EXACT_H
#define PA_HYDRO_EXACT_H

typedef struct {
    double rho, u, p;
} pa_state1d;

typedef struct {
    pa_state1d left, right;
    double gamma;
    double p_star, u_star; /* filled by pa_exact_solve */
} pa_exact;

/* The star region; returns -1 when the data generate a vacuum (Toro sec. 4.6): then p_star is 0
 * and u_star the middle of the vacuum, and pa_exact_sample gives the two fans and the vacuum
 * (density and pressure 0) between them. */
int pa_exact_solve(pa_exact *problem);
/* The solution at speed s = x / t (x from the initial discontinuity). */
pa_state1d pa_exact_sample(const pa_exact *problem, double s);

#endif
