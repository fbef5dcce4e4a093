/* The parts of a perfatlas.result/1 document (docs/contract.md) that every benchmark shares.
 *
 *   pa_result_begin    {"schema", "benchmark", "params": {every declared parameter   (left open)
 *   (caller)            extra params such as "cpu" or "load"
 *   pa_result_context  }, "placement", "timer"
 *   (caller)            pa_result_samples or pa_result_not_measurable, then "derived"
 *   pa_result_end       "execution" (execution.h), "build" }                                    */
#ifndef PA_RESULT_H
#define PA_RESULT_H

#include "args.h"
#include "json.h"
#include "memory.h"

typedef struct {
    int cpu_requested;
    char cpus_allowed[64]; /* read back from the kernel after binding */
} pa_thread_placement;

void pa_result_begin(pa_json *json, const char *benchmark, const pa_args *args);
/* `buffer` may be NULL for a benchmark without one (noise): placement then holds only threads. */
void pa_result_context(pa_json *json, const pa_thread_placement *threads, int nthreads,
                       const pa_buffer *buffer);
/* "samples": {metric: values}, "units": {metric: unit}, "sample_seconds": seconds */
void pa_result_samples(pa_json *json, const char *metric, const char *unit, const double *values,
                       const double *seconds, int n);

/* One metric of a document whose samples measure several (n values). */
typedef struct {
    const char *name, *unit;
    const double *values;
    int n;
} pa_metric;

/* pa_result_samples for `count` metrics: "samples" and "units" list each of them, and
 * "sample_seconds" the n seconds of the samples (as many as the metrics' values, or more where
 * a document's samples pool several rounds). */
void pa_result_metrics(pa_json *json, const pa_metric *metrics, int count, const double *seconds,
                       int n);
void pa_result_not_measurable(pa_json *json, const char *why);
void pa_result_end(pa_json *json);
/* "build": {compiler, cflags, arch (what -march named: "native (znver4)", "x86-64-v3"), isa (the
 * extensions it may use)}; pa_result_end writes it, pa-topology too (perfatlas doctor). */
void pa_result_build_json(pa_json *json);

#endif
