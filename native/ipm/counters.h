/* Hardware counters of perfatlas-ipm (counters.c): floating-point operations through PAPI where
 * the machine exposes them; otherwise the reason they are unavailable. */
#ifndef PA_IPM_COUNTERS_H
#define PA_IPM_COUNTERS_H

/* At MPI_Init: starts counting on the calling thread, when it can. */
void pa_ipm_counters_start(void);
/* At the end: 1 and the count and PAPI event name when counting; 0 when unavailable. */
int pa_ipm_counters_stop(double *count, const char **event);
/* Why the counters are unavailable, and what counted them otherwise ("PAPI 7.0.0.0"). */
const char *pa_ipm_counters_reason(void);
const char *pa_ipm_counters_source(void);

#endif
