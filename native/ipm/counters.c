/* Floating-point operations of each rank through PAPI's preset events (PAPI_DP_OPS, else
 * PAPI_FP_OPS), counted on the thread that called MPI_Init. On Arm cores for which PAPI defines
 * neither (Neoverse N2, V1, V2: PAPI 7.0's presets cover A64FX only), the two architected events
 * of Armv8.2's SVE PMU extension that PAPI's libpfm4 names: FP_FIXED_OPS_SPEC (operations of
 * scalar and NEON instructions) and FP_SCALE_OPS_SPEC (of SVE instructions, per 128 bits of
 * vector), so that operations = fixed + scale x VL / 128, as PAPI's A64FX preset computes them.
 * Without PAPI at build time, or where PAPI finds no hardware counters (a VM, an emulator), the
 * profile says so and why; it never invents a count. */
#include <stdio.h>
#ifdef __aarch64__
#include <sys/prctl.h>
#endif

#include "counters.h"

static char reason[256] = "perfatlas-ipm was built without PAPI (install libpapi-dev and rebuild)";
static char source[64] = "";

const char *pa_ipm_counters_reason(void) { return reason; }
const char *pa_ipm_counters_source(void) { return source; }

#ifdef PA_IPM_HAVE_PAPI
#include <papi.h>

static int event_set = PAPI_NULL, counting, events_added = 1;
static const char *event_name;
static double scale_factor; /* FP_SCALE_OPS_SPEC's operations per count: the SVE VL / 128 bits */

/* The Arm pair: both events, or neither (the event set is left empty). */
static int add_arm_pair(void)
{
#ifdef __aarch64__
    if (PAPI_add_named_event(event_set, "FP_FIXED_OPS_SPEC") != PAPI_OK)
        return 0;
    if (PAPI_add_named_event(event_set, "FP_SCALE_OPS_SPEC") != PAPI_OK) {
        PAPI_cleanup_eventset(event_set);
        return 0;
    }
    int vl = prctl(PR_SVE_GET_VL); /* bytes, with flags above; -1 without SVE (no scalable ops) */
    scale_factor = vl < 0 ? 0.0 : (double)(vl & PR_SVE_VL_LEN_MASK) * 8.0 / 128.0;
    events_added = 2;
    event_name = "FP_FIXED_OPS_SPEC+FP_SCALE_OPS_SPEC";
    return 1;
#else
    return 0;
#endif
}

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
    if (event_name == NULL && !add_arm_pair()) {
#ifdef __aarch64__
        unavailable("no floating-point operation event (PAPI_DP_OPS, PAPI_FP_OPS, "
                    "FP_FIXED_OPS_SPEC with FP_SCALE_OPS_SPEC)",
                    code);
#else
        unavailable("no floating-point operation event (PAPI_DP_OPS, PAPI_FP_OPS)", code);
#endif
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
    long long value[2] = {0, 0};
    if (!counting)
        return 0;
    counting = 0;
    int code = PAPI_stop(event_set, value);
    if (code != PAPI_OK)
        return unavailable("PAPI_stop", code);
    *count =
        events_added == 2 ? (double)value[0] + (double)value[1] * scale_factor : (double)value[0];
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
