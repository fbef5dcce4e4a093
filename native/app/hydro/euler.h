/* The compressible Euler equations of an ideal gas and their MUSCL-Hancock interface flux, one
 * axis at a time (Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed.,
 * 2009: sec. 14.4 MUSCL-Hancock, sec. 10.4-10.6 HLL and HLLC with Davis's wave-speed estimates).
 *
 * Conserved U = (rho, rho u, rho v, rho w, E); primitive W = (rho, u, v, w, p), with
 * p = (gamma - 1) (E - rho |u|^2 / 2). */
#ifndef PA_HYDRO_EULER_H
#define PA_HYDRO_EULER_H

#define PA_NVAR 5

typedef enum {
    PA_RIEMANN_HLLC,
    PA_RIEMANN_HLL
} pa_riemann;

typedef struct {
    double gamma;
    pa_riemann riemann;
} pa_gas;

/* W from U; returns 0 when the state is physical (rho > 0, p > 0, both finite), else -1. */
int pa_primitive(const pa_gas *gas, const double u[PA_NVAR], double w[PA_NVAR]);
void pa_conserved(const pa_gas *gas, const double w[PA_NVAR], double u[PA_NVAR]);
/* The sound speed sqrt(gamma p / rho). */
double pa_sound_speed(const pa_gas *gas, const double w[PA_NVAR]);

/* The flux through the interface between cells b and c along `axis` (0, 1, 2), from the
 * primitive states of the four cells a, b, c, d in a row: each of b and c reconstructed
 * linearly with van Leer's limited slope (its neighbours a and c, b and d), its face values
 * evolved by half a time step (dt_dx = dt / dx), then the Riemann problem between them. Where
 * an evolved face state is not physical, the interface falls back to the cell averages (first
 * order). One function for both cells that share an interface, so that they subtract the same
 * bits and the scheme conserves to rounding. */
void pa_interface_flux(const pa_gas *gas, const double *a, const double *b, const double *c,
                       const double *d, int axis, double dt_dx, double flux[PA_NVAR]);

#endif
