/* One KBA block of app.sweep: `angles` directions of one octant through `mk` k-planes of this
 * process's cells, by diamond differencing (Lewis & Miller, "Computational Methods of Neutron
 * Transport", 1984, sec. 4-4; Sweep3D's inner loop).
 *
 * In a cell of size dx x dy x dz with source S (per unit volume and unit normalized solid angle)
 * and incoming face fluxes psi_in^x, psi_in^y, psi_in^z, with c_x = 2 |mu| / dx etc.:
 *     psi = (S + c_x psi_in^x + c_y psi_in^y + c_z psi_in^z) / (sigma_t + c_x + c_y + c_z)
 *     psi_out^d = 2 psi - psi_in^d                                  (the diamond relation)
 * which satisfies the cell balance sum_d (c_d / 2) (psi_out^d - psi_in^d) + sigma_t psi = S
 * exactly (to rounding): summed over cells and directions, the sweep conserves particles.
 *
 * Negative-flux fixup (fixup=1): an outgoing face flux below zero is set to zero and psi is
 * solved again from the cell balance with that face fixed,
 *     psi = (S + sum_free c_d psi_in^d + sum_fixed (c_d / 2) psi_in^d) / (sigma_t + sum_free c_d),
 * repeated until no free outgoing flux is negative: the balance still holds exactly. */
#ifndef PA_SWEEP_BLOCK_H
#define PA_SWEEP_BLOCK_H

typedef struct {
    int it, jt;                  /* cells of one k-plane of this process (x fastest in memory) */
    int k0, mk;                  /* the block's first plane in sweep order, and its plane count */
    int sx, sy, sz;              /* the octant: +1 sweeps towards increasing index, -1 decreasing */
    int angles;                  /* directions in the block */
    const double *mu, *eta, *xi; /* their cosines' absolute values */
    double weight;               /* quadrature weight of each direction (sum 1 over the sphere) */
    double sigma_t;              /* total cross-section, 1/cm */
    double dx, dy, dz;           /* cm */
    int fixup;
} pa_block;

/* Sweeps the block: source and phi are the process's cells ((k jt + j) it + i); phi gains
 * weight x psi of every cell and direction. The faces are in/out: face_x[(a mk + kk) jt + j],
 * face_y[(a mk + kk) it + i], face_z[(a jt + j) it + i] (a: direction in the block, kk: plane in
 * sweep order) hold the incoming fluxes and are left holding the outgoing ones. Returns the
 * number of outgoing face fluxes that came out negative (before any fixup). */
long pa_sweep_block(const pa_block *block, const double *source, double *phi, double *face_x,
                    double *face_y, double *face_z);

#endif
