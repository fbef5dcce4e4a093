/* The sky of the MADbench proxy (Borrill, Carter, Oliker, Skinner, "Integrated performance
 * monitoring of a cosmology application on leading HEC platforms", ICPP 2005): npix pixels at
 * pseudo-random positions on the unit sphere, a data vector, the angular power spectrum binned
 * in nbin bins of lbin multipoles each, and the derivative of the signal covariance with respect
 * to each bin's power,
 *
 *     (dS/dC_b)_ij = sum_{l in bin b} (2l + 1) / (4 pi) P_l(cos theta_ij),
 *
 * P_l the Legendre polynomials and theta_ij the angle between pixels i and j. Bin b holds the
 * multipoles l = 2 + b lbin .. 1 + (b + 1) lbin (the monopole and dipole are left out).
 *
 * Every number is reproducible elsewhere (tests/test_madbench.py redoes it in numpy): the
 * pseudo-random stream is splitmix64 (Steele, Lea and Flood, OOPSLA 2014) from `seed`, a double
 * in [0, 1) being the top 53 bits times 2^-53. Pixel i takes two draws, u then v, in pixel order:
 * z = 2u - 1, phi = 2 pi v, position (sqrt(1 - z^2) cos phi, sqrt(1 - z^2) sin phi, z) (uniform
 * on the sphere, Archimedes). Then the data vector takes npix draws: d_i = 2w - 1. */
#ifndef PA_MADBENCH_SKY_H
#define PA_MADBENCH_SKY_H

#include <stdint.h>

#include "grid.h"

typedef struct {
    int npix, nbin, lbin;
    double *x, *y, *z; /* pixel unit vectors */
    double *data;      /* the data vector d */
    double *spectrum;  /* the fiducial C_b */
} pa_sky;

int pa_sky_create(pa_sky *sky, int npix, int nbin, int lbin, uint64_t seed);
void pa_sky_free(pa_sky *sky);
uint64_t pa_splitmix64(uint64_t *state);
double pa_uniform(uint64_t *state); /* [0, 1) */
int pa_sky_first_multipole(const pa_sky *sky, int bin);
int pa_sky_last_multipole(const pa_sky *sky); /* lmax = 1 + nbin lbin */

/* The Legendre recursion over this process's share of the pixel pairs, advanced bin by bin so
 * that every P_l is computed once: (l + 1) P_{l+1} = (2l + 1) x P_l - l P_{l-1}, with P_0 = 1,
 * P_1 = x = cos theta_ij (the dot product of the unit vectors, clamped to [-1, 1]). */
typedef struct {
    const pa_sky *sky;
    size_t count;
    double *cosine, *previous, *current; /* x, P_{l-1}, P_l per local element */
    int l;
} pa_legendre;

/* Room for `share`'s elements; returns -1 when memory runs out. */
int pa_legendre_alloc(pa_legendre *recursion, const pa_sky *sky, const pa_block_matrix *share);
/* cos theta_ij of every local element, and the recursion back at l = 1. */
void pa_legendre_begin(pa_legendre *recursion, const pa_block_matrix *share);
/* The share of dS/dC_b (bins in increasing order) into `out` (the same layout as `share`). */
void pa_legendre_bin(pa_legendre *recursion, int bin, double *out);
void pa_legendre_free(pa_legendre *recursion);

/* Floating-point operations of the whole dS/dC computation over all npix^2 pairs: 5 for
 * cos theta (3 multiplications, 2 additions), 3 per recursion step (lmax - 1 steps: P_2 .. P_lmax)
 * and 2 per accumulated multipole (nbin lbin of them). */
double pa_legendre_flops(const pa_sky *sky);

#endif
