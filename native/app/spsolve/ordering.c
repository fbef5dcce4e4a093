#include "ordering.h"

#include <cholmod.h>
#include <stdio.h>
#include <string.h>

#include "timer.h"

cholmod_sparse pa_cholmod_lower_view(const pa_sparse *a)
{
    return (cholmod_sparse){
        .nrow = (size_t)a->n,
        .ncol = (size_t)a->n,
        .nzmax = (size_t)a->colptr[a->n],
        .p = a->colptr,
        .i = a->rowind,
        .x = a->values,
        .stype = -1,
        .itype = CHOLMOD_INT,
        .xtype = CHOLMOD_REAL,
        .dtype = CHOLMOD_DOUBLE,
        .sorted = 1,
        .packed = 1,
    };
}

const char *pa_ordering_name(const char *ordering)
{
    return strcmp(ordering, "metis") ? "approximate minimum degree (cholmod_amd)"
                                     : "METIS nested dissection (cholmod_metis: METIS_NodeND)";
}

int pa_fill_reducing_order(const pa_sparse *a, const char *ordering, int *perm, double *seconds,
                           char *error, size_t size)
{
    cholmod_common c;
    cholmod_start(&c);
    c.print = 0;
    cholmod_sparse view = pa_cholmod_lower_view(a);
    int metis = strcmp(ordering, "metis") == 0;
    uint64_t start = pa_ticks();
    int ok =
        metis ? cholmod_metis(&view, NULL, 0, 1, perm, &c) : cholmod_amd(&view, NULL, 0, perm, &c);
    *seconds = pa_ticks_to_seconds(pa_ticks() - start);
    if (!ok)
        snprintf(error, size, "the %s ordering failed (CHOLMOD status %d%s)", ordering, c.status,
                 c.status == CHOLMOD_OUT_OF_MEMORY ? ": out of memory" : "");
    cholmod_finish(&c);
    return ok ? 0 : -1;
}
