/* Floating-point operations of each rank through PAPI's preset events (PAPI_DP_OPS, else
 * PAPI_FP_OPS), counted on the thread that called MPI_Init. Without PAPI at build time, or where
 * PAPI finds no hardware counters (a VM), the profile says so and why; it never invents a count. */
#include <stdio.h>

#include "counters.h"

static char reason[256] = "perfatlas-ipm was built without PAPI (install libpapi-dev and rebuild)";
static char source[64] = "";

const char *pa_ipm_counters_reason(void) { return reason; }
const char *pa_ipm_counters_source(void) { return source; }

#ifdef PA_IPM_HAVE_PAPI
#include <papi.h>

static int event_set = PAPI_NULL, counting;
static const char *event_name;

static int unavailable(const char *what, int code)
{
    snprintf(reason, sizeof reason, "PAPI: %s: %s", what, PAPI_strerror(code));
    return 0;
}

void pa_ipm_counters_start(void)
{
    int version = PAPI_library_init(PAPI_VER_CURRENT);
    if (version != PAPI_VER_CURRENT) {
        unavailable("PAPI_library_init", version);
        return;
    }
    snprintf(source, sizeof source, "PAPI %d.%d.%d.%d", PAPI_VERSION_MAJOR(version),
             PAPI_VERSION_MINOR(version), PAPI_VERSION_REVISION(version),
             PAPI_VERSION_INCREMENT(version));
    if (PAPI_num_cmp_hwctrs(0) <= 0) {
        snprintf(reason, sizeof reason,
                 "PAPI: no hardware counters on this machine (perf_event has none: a VM, or "
                 "/proc/sys/kernel/perf_event_paranoid forbids them)");
        return;
    }
    int code = PAPI_create_eventset(&event_set);
    if (code != PAPI_OK) {
        unavailable("PAPI_create_eventset", code);
        return;
    }
    struct {
        int code;
        const char *name;
    } events[] = {{PAPI_DP_OPS, "PAPI_DP_OPS"}, {PAPI_FP_OPS, "PAPI_FP_OPS"}};
    for (int i = 0; i < 2 && event_name == NULL; i++)
        if ((code = PAPI_add_event(event_set, events[i].code)) == PAPI_OK)
            event_name = events[i].name;
    if (event_name == NULL) {
        unavailable("no floating-point operation event (PAPI_DP_OPS, PAPI_FP_OPS)", code);
        return;
    }
    if ((code = PAPI_start(event_set)) != PAPI_OK) {
        unavailable("PAPI_start", code);
        return;
    }
    counting = 1;
}

int pa_ipm_counters_stop(double *count, const char **event)
{
    long long value = 0;
    if (!counting)
        return 0;
    counting = 0;
    int code = PAPI_stop(event_set, &value);
    if (code != PAPI_OK)
        return unavailable("PAPI_stop", code);
    *count = (double)value;
    *event = event_name;
    return 1;
}
#else
void pa_ipm_counters_start(void) {}

int pa_ipm_counters_stop(double *count, const char **event)
{
    (void)count, (void)event;
    return 0;
}
#endif
