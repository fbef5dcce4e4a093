/* The diamond-difference block sweep (block.h). */
#include "block.h"

/* The set-to-zero fixup of one cell: psi and the outgoing fluxes with every negative outgoing
 * flux fixed at zero, the cell balance kept (block.h). */
static double fixup_cell(double source, double sigma_t, const double c[3], const double in[3],
                         double out[3])
{
    int fixed[3] = {0, 0, 0};
    double psi = 0;
    for (int round = 0; round < 4; round++) { /* each round fixes a face, or ends */
        double numerator = source, denominator = sigma_t;
        for (int d = 0; d < 3; d++) {
            numerator += (fixed[d] ? 0.5 : 1.0) * c[d] * in[d];
            denominator += fixed[d] ? 0.0 : c[d];
        }
        psi = numerator / denominator;
        int more = 0;
        for (int d = 0; d < 3; d++) {
            out[d] = fixed[d] ? 0.0 : 2.0 * psi - in[d];
            if (out[d] < 0.0) {
                fixed[d] = 1;
                more = 1;
            }
        }
        if (!more)
            break;
    }
    return psi;
}

long pa_sweep_block(const pa_block *b, const double *source, double *phi, double *face_x,
                    double *face_y, double *face_z)
{
    const int it = b->it, jt = b->jt;
    long negative = 0;
    for (int a = 0; a < b->angles; a++) {
        const double cx = 2.0 * b->mu[a] / b->dx, cy = 2.0 * b->eta[a] / b->dy,
                     cz = 2.0 * b->xi[a] / b->dz;
        const double c[3] = {cx, cy, cz};
        const double inverse = 1.0 / (b->sigma_t + cx + cy + cz);
        const double w = b->weight;
        double *fz = face_z + (long)a * jt * it;
        for (int kk = 0; kk < b->mk; kk++) {
            const int k = b->k0 + b->sz * kk;
            double *fx = face_x + ((long)a * b->mk + kk) * jt;
            double *fy = face_y + ((long)a * b->mk + kk) * it;
            for (int jj = 0; jj < jt; jj++) {
                const int j = b->sy > 0 ? jj : jt - 1 - jj;
                const long row = ((long)k * jt + j) * it;
                double in_x = fx[j];
                for (int ii = 0; ii < it; ii++) {
                    const int i = b->sx > 0 ? ii : it - 1 - ii;
                    const double s = source[row + i];
                    const double in_y = fy[i], in_z = fz[(long)j * it + i];
                    double psi = (s + cx * in_x + cy * in_y + cz * in_z) * inverse;
                    double out[3] = {2.0 * psi - in_x, 2.0 * psi - in_y, 2.0 * psi - in_z};
                    const int bad = (out[0] < 0.0) + (out[1] < 0.0) + (out[2] < 0.0);
                    negative += bad;
                    if (bad && b->fixup) {
                        const double in[3] = {in_x, in_y, in_z};
                        psi = fixup_cell(s, b->sigma_t, c, in, out);
                    }
                    phi[row + i] += w * psi;
                    in_x = out[0];
                    fy[i] = out[1];
                    fz[(long)j * it + i] = out[2];
                }
                fx[j] = in_x;
            }
        }
    }
    return negative;
}
