/* The MADbench pipeline (Borrill et al., ICPP 2005, section 2): the maximum-likelihood angular
 * power spectrum of a CMB map by Newton-Raphson iteration, one iteration of it, out of core.
 *
 *   dSdC  for each bin b: the share of dS/dC_b (sky.h), written to disk
 *   invD  for each bin: read dS/dC_b, accumulate D = sum_b C_b dS/dC_b + N (N = noise I, white
 *         noise); Cholesky D = L L^T (pdpotrf), D^-1 from L (pdpotri), the lower triangle
 *         mirrored into the upper one
 *   W     for each bin: read dS/dC_b, W_b = D^-1 dS/dC_b (pdgemm), written to disk. With
 *         ngang > 1, D^-1 is copied to every gang's grid (pdgemr2d) and each round reads one bin
 *         per gang, moves it to its gang's grid, and all gangs multiply at once; W_b comes back to
 *         the world grid to be written
 *   dLdC  read every W_b; with z = D^-1 d,
 *           dL/dC_b = 1/2 (d^T W_b D^-1 d - tr W_b) = 1/2 (d^T W_b z - tr W_b),
 *           F_bb'   = 1/2 tr(W_b W_b') = 1/2 sum_ij (W_b^T)_ij (W_b')_ij   (W_b^T by pdtran),
 *           dC      = F^-1 dL/dC   (the Newton-Raphson correction to the spectrum; dposv)
 *
 * Each phase is one MPI_Pcontrol region of the same name, so that an IPM-style profile splits
 * its time into computation, MPI, I/O and load imbalance. Each phase checks what it computed:
 * invD that D^-1 (D d) = d; dLdC the identities sum_b C_b W_b + noise D^-1 = I (in trace) and
 *   sum_b C_b dL/dC_b = 1/2 (d^T z - noise z^T z - npix + noise tr D^-1),
 * both consequences of D = sum_b C_b dS/dC_b + noise I. */
#ifndef PA_MADBENCH_PIPELINE_H
#define PA_MADBENCH_PIPELINE_H

#include "grid.h"
#include "matrix_io.h"
#include "sky.h"

enum {
    PA_DSDC,
    PA_INVD,
    PA_W,
    PA_DLDC,
    PA_PHASES
};
extern const char *const pa_phase_names[PA_PHASES];

typedef struct {
    const pa_sky *sky;
    pa_io *io;
    double noise; /* white-noise variance per pixel */
    int ngang, gang;
    int overlap; /* W: I/O behind pdgemm where it can (pipeline.c, overlapped_w) */
    pa_grid world, gang_grid;
    pa_block_matrix inverse, s, w;                /* world grid: D (then D^-1), dS/dC_b, W_b */
    pa_block_matrix gang_inverse, gang_s, gang_w; /* ngang > 1: the same on this gang's grid */
    pa_block_matrix *all_w;                       /* dLdC: every W_b */
    pa_legendre legendre;
    double *vector, *product; /* replicated vectors of length npix */

    /* what the phases found (every rank holds the same values) */
    double inverse_trace, inverse_checksum, inverse_error;
    double *traces, *likelihood, *fisher, *correction; /* nbin, nbin, nbin^2, nbin */
    double trace_identity_error, likelihood_identity_error;
    double bytes_read[PA_PHASES], bytes_written[PA_PHASES]; /* all processes */
    double io_wait_s[PA_PHASES]; /* the most any process waited on its file transfers */
} pa_pipeline;

/* Grids and memory; collective. Returns -1 when memory runs out (on any process). overlap: the W
 * phase reads and writes behind its pdgemms where it can (ngang = 1, io=files, no throttling). */
int pa_pipeline_setup(pa_pipeline *p, const pa_sky *sky, pa_io *io, int q, int ngang, int nb,
                      double noise, int overlap);
void pa_pipeline_free(pa_pipeline *p);
/* Runs one phase on every process; returns its wall time, the slowest process's, from a common
 * barrier (and sets its bytes moved and io_wait_s). A failed check is one sentence and exit
 * status 3. */
double pa_pipeline_phase(pa_pipeline *p, int phase);
/* The floating-point operations of each phase (pipeline.c states the formulas). */
double pa_pipeline_flops(const pa_pipeline *p, int phase);
/* The most nearly square rows x cols = processes, rows <= cols. */
void pa_gang_shape(int processes, int *rows, int *cols);

#endif
