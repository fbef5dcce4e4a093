/* Fill-reducing orderings, computed once for both solvers so that they factor the same permuted
 * matrix and the ordering is timed apart from the symbolic analysis: approximate minimum degree
 * (Amestoy, Davis and Duff, SIAM J. Matrix Anal. Appl. 17(4), 1996; cholmod_amd) or METIS nested
 * dissection (Karypis and Kumar, SIAM J. Sci. Comput. 20(1), 1998; METIS_NodeND through
 * cholmod_metis). Debian's MUMPS is built without METIS (ICNTL(7)=5 silently falls back to AMF),
 * so MUMPS too gets the ordering from here, as a given pivot order (ICNTL(7)=1). */
#ifndef PA_ORDERING_H
#define PA_ORDERING_H

#include <cholmod.h>
#include <stddef.h>

#include "sparse.h"

/* perm[k] = the variable (0-based) eliminated k-th. `seconds`: the ordering call alone. Returns 0,
 * or -1 with one sentence in `error`. */
int pa_fill_reducing_order(const pa_sparse *a, const char *ordering, int *perm, double *seconds,
                           char *error, size_t size);
/* A as CHOLMOD sees it, without a copy: stype = -1 makes CHOLMOD read the entries on and below
 * the diagonal and ignore the others. */
cholmod_sparse pa_cholmod_lower_view(const pa_sparse *a);
/* How the document names an ordering ("amd" or "metis"). */
const char *pa_ordering_name(const char *ordering);

#endif
