/* The catalog of peak-flops kernels: the portable scalar ones and those of this architecture
 * (flops_x86.c, flops_arm.c), and what this CPU can run of them. */
#include "flops_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pa_flops_kind *pa_flops_kind_at(int i)
{
    if (i < 2)
        return i >= 0 ? &pa_flops_scalar_kinds[i] : NULL;
    return i - 2 < pa_flops_vector_count ? &pa_flops_vector_kinds[i - 2] : NULL;
}

const pa_flops_kind *pa_flops_find(const char *isa, const char *precision)
{
    for (int i = 0; pa_flops_kind_at(i); i++) {
        const pa_flops_kind *kind = pa_flops_kind_at(i);
        if (strcmp(kind->isa, isa) == 0 && strcmp(kind->precision, precision) == 0)
            return kind;
    }
    return NULL;
}

int pa_flops_lanes(const pa_flops_kind *kind)
{
    return kind->lanes ? kind->lanes : pa_flops_runtime_lanes(kind->precision);
}

/* PERFATLAS_PEAKFLOPS_LACKS=avx512,avx2 makes the ISAs it names count as missing, so that the
 * tests reach the "not measurable here" path on any CPU (docs/guide/compute.md). */
static int hidden_for_tests(const char *isa)
{
    const char *hidden = getenv("PERFATLAS_PEAKFLOPS_LACKS");
    size_t length = strlen(isa);
    for (const char *p = hidden; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strncmp(p, isa, length) == 0 && (p[length] == ',' || p[length] == '\0'))
            return 1;
    }
    return 0;
}

const char *pa_flops_lacks(const pa_flops_kind *kind)
{
    static char why[128];
    if (!kind->requires)
        return NULL;
    if (pa_flops_cpu_has(kind->requires) && !hidden_for_tests(kind->isa) &&
        pa_flops_lanes(kind) <= PA_FLOPS_MAX_LANES)
        return NULL;
    snprintf(why, sizeof why, "this CPU lacks %s", kind->feature);
    return why;
}

const char *pa_flops_widest(void)
{
    const char *widest = "scalar";
    for (int i = 0; pa_flops_kind_at(i); i++) /* the table lists the ISAs from narrow to wide */
        if (!pa_flops_lacks(pa_flops_kind_at(i)))
            widest = pa_flops_kind_at(i)->isa;
    return widest;
}
