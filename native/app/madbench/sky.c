#include "sky.h"
#include "alloc.h"

#include <math.h>
#include <stdlib.h>

uint64_t pa_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

double pa_uniform(uint64_t *state) { return (double)(pa_splitmix64(state) >> 11) * 0x1p-53; }

int pa_sky_first_multipole(const pa_sky *sky, int bin) { return 2 + bin * sky->lbin; }

int pa_sky_last_multipole(const pa_sky *sky) { return 1 + sky->nbin * sky->lbin; }

/* The fiducial spectrum: C_b = 4 pi / (l_b (l_b + 1)), l_b the bin's first multipole (the flat
 * l(l+1) C_l of a scale-invariant sky), so that each bin adds about 2 lbin / l_b to the signal
 * variance of a pixel. */
static double fiducial(int l) { return 4.0 * M_PI / ((double)l * (l + 1)); }

int pa_sky_create(pa_sky *sky, int npix, int nbin, int lbin, uint64_t seed)
{
    *sky = (pa_sky){.npix = npix, .nbin = nbin, .lbin = lbin};
    size_t n = (size_t)npix;
    sky->x = pa_alloc(n, sizeof(double), "the pixel x coordinates");
    sky->y = pa_alloc(n, sizeof(double), "the pixel y coordinates");
    sky->z = pa_alloc(n, sizeof(double), "the pixel z coordinates");
    sky->data = pa_alloc(n, sizeof(double), "the sky map");
    sky->spectrum = pa_alloc((size_t)nbin, sizeof(double), "spectrum");
    uint64_t state = seed;
    for (size_t i = 0; i < n; i++) {
        double z = 2.0 * pa_uniform(&state) - 1.0;
        double phi = 2.0 * M_PI * pa_uniform(&state);
        double s = sqrt(1.0 - z * z);
        sky->x[i] = s * cos(phi);
        sky->y[i] = s * sin(phi);
        sky->z[i] = z;
    }
    for (size_t i = 0; i < n; i++)
        sky->data[i] = 2.0 * pa_uniform(&state) - 1.0;
    for (int b = 0; b < nbin; b++)
        sky->spectrum[b] = fiducial(pa_sky_first_multipole(sky, b));
    return 0;
}

void pa_sky_free(pa_sky *sky)
{
    free(sky->x);
    free(sky->y);
    free(sky->z);
    free(sky->data);
    free(sky->spectrum);
}

int pa_legendre_alloc(pa_legendre *recursion, const pa_sky *sky, const pa_block_matrix *share)
{
    *recursion = (pa_legendre){.sky = sky, .count = pa_matrix_local_count(share), .l = 1};
    size_t count = recursion->count ? recursion->count : 1;
    recursion->cosine = pa_alloc(count, sizeof(double), "cosine");
    recursion->previous = pa_alloc(count, sizeof(double), "previous");
    recursion->current = pa_alloc(count, sizeof(double), "current");
    return recursion->cosine && recursion->previous && recursion->current ? 0 : -1;
}

void pa_legendre_begin(pa_legendre *recursion, const pa_block_matrix *share)
{
    const pa_sky *sky = recursion->sky;
    recursion->l = 1;
    for (int jl = 0; jl < share->cols; jl++) {
        int j = share->col_of[jl];
        for (int il = 0; il < share->rows; il++) {
            int i = share->row_of[il];
            double c = sky->x[i] * sky->x[j] + sky->y[i] * sky->y[j] + sky->z[i] * sky->z[j];
            size_t k = (size_t)jl * (size_t)share->rows + (size_t)il;
            recursion->cosine[k] = fmin(1.0, fmax(-1.0, c));
            recursion->previous[k] = 1.0;
            recursion->current[k] = recursion->cosine[k];
        }
    }
}

/* P_l -> P_{l+1} for every element. */
static void advance(pa_legendre *r)
{
    double a = (2.0 * r->l + 1.0) / (r->l + 1.0), b = (double)r->l / (r->l + 1.0);
    for (size_t k = 0; k < r->count; k++) {
        double next = a * r->cosine[k] * r->current[k] - b * r->previous[k];
        r->previous[k] = r->current[k];
        r->current[k] = next;
    }
    r->l++;
}

void pa_legendre_bin(pa_legendre *recursion, int bin, double *out)
{
    const pa_sky *sky = recursion->sky;
    for (size_t k = 0; k < recursion->count; k++)
        out[k] = 0.0;
    int first = pa_sky_first_multipole(sky, bin);
    for (int l = first; l < first + sky->lbin; l++) {
        while (recursion->l < l)
            advance(recursion);
        double weight = (2.0 * l + 1.0) / (4.0 * M_PI);
        for (size_t k = 0; k < recursion->count; k++)
            out[k] += weight * recursion->current[k];
    }
}

void pa_legendre_free(pa_legendre *recursion)
{
    free(recursion->cosine);
    free(recursion->previous);
    free(recursion->current);
}

double pa_legendre_flops(const pa_sky *sky)
{
    double pairs = (double)sky->npix * sky->npix;
    int lmax = pa_sky_last_multipole(sky);
    return pairs * (5.0 + 3.0 * (lmax - 1) + 2.0 * sky->nbin * sky->lbin);
}
