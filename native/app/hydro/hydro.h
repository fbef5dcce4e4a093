/* What pa-hydro's main hands to its document (document.c). */
#ifndef PA_HYDRO_HYDRO_H
#define PA_HYDRO_HYDRO_H

#include "comm.h"
#include "solver.h"

/* Relative change of a conserved total on a periodic box above which the run fails (exit 3):
 * rounding of sums over up to ~1e8 cells. */
#define PA_CONSERVATION_LIMIT 1e-10

typedef struct {
    int repeat;
    double *cycle_s, *phase_s[PA_PHASES], *rate;     /* one per repetition */
    double initial[2 * PA_NVAR], final[2 * PA_NVAR]; /* pa_hydro_totals */
    double change[PA_NVAR];                          /* |final - initial| / initial |U| sum */
    int conservation_checked;
    double l1[3], star[2]; /* shock tubes */
    unsigned long long checksum;
    double seconds_per_cell; /* compute of the last repetition per cell and cycle, slowest rank */
} pa_hydro_outcome;

/* Rank 0 writes the document; returns nonzero when it could not. Collective (it gathers every
 * rank's exchange lists). */
int pa_hydro_document(const pa_args *args, const pa_hydro *hydro, const pa_hydro_outcome *o,
                      const pa_world *world);

#endif
