#include "result.h"

#include "execution.h"
#include "isa.h"
#include "timer.h"

#include <string.h>

#ifndef PERFATLAS_COMPILER
#define PERFATLAS_COMPILER "unknown"
#define PERFATLAS_CFLAGS   "unknown"
#define PERFATLAS_ARCH     "unknown"
#endif

/* Every declared parameter with its parsed value: sizes in bytes, durations in seconds. */
static void write_params(pa_json *json, const pa_args *args)
{
    for (int i = 0; i < args->count; i++) {
        const pa_param *param = &args->params[i];
        const pa_value *value = &args->values[i];
        pa_json_key(json, param->name);
        switch (param->kind) {
        case PA_INT:
        case PA_SIZE:
        case PA_SIZES: /* the current point of a series */
        case PA_INTS:
            pa_json_int(json, value->integer);
            break;
        case PA_DOUBLE:
        case PA_DURATION:
            pa_json_double(json, value->real);
            break;
        case PA_CPUS:
            pa_json_begin_array(json);
            for (int c = 0; c < value->ncpus; c++)
                pa_json_int(json, value->cpus[c]);
            pa_json_end_array(json);
            break;
        case PA_NODE:
            if (value->integer >= 0)
                pa_json_int(json, value->integer);
            else
                pa_json_string(json, value->integer == PA_NODE_LOCAL ? "local" : "interleave");
            break;
        case PA_CHOICE:
        case PA_STRING:
            pa_json_string(json, value->text);
            break;
        }
    }
}

void pa_result_begin(pa_json *json, const char *benchmark, const pa_args *args)
{
    pa_json_begin_object(json);
    pa_json_key_string(json, "schema", "perfatlas.result/1");
    pa_json_key_string(json, "benchmark", benchmark);
    pa_json_key(json, "params");
    pa_json_begin_object(json);
    write_params(json, args);
}

void pa_result_context(pa_json *json, const pa_thread_placement *threads, int nthreads,
                       const pa_buffer *buffer)
{
    pa_json_end_object(json); /* params */
    pa_json_key(json, "placement");
    pa_json_begin_object(json);
    pa_json_key(json, "threads");
    pa_json_begin_array(json);
    for (int t = 0; t < nthreads; t++) {
        pa_json_begin_object(json);
        pa_json_key_int(json, "thread", t);
        pa_json_key_int(json, "cpu_requested", threads[t].cpu_requested);
        pa_json_key_string(json, "cpus_allowed", threads[t].cpus_allowed);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
    if (buffer)
        pa_buffer_json(json, buffer);
    pa_json_end_object(json);
    pa_timer_json(json);
}

void pa_result_metrics(pa_json *json, const pa_metric *metrics, int count, const double *seconds,
                       int n)
{
    pa_json_key(json, "samples");
    pa_json_begin_object(json);
    for (int m = 0; m < count; m++) {
        pa_json_key(json, metrics[m].name);
        pa_json_double_array(json, metrics[m].values, metrics[m].n);
    }
    pa_json_end_object(json);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    for (int m = 0; m < count; m++)
        pa_json_key_string(json, metrics[m].name, metrics[m].unit);
    pa_json_end_object(json);
    pa_json_key(json, "sample_seconds");
    pa_json_double_array(json, seconds, n);
}

void pa_result_samples(pa_json *json, const char *metric, const char *unit, const double *values,
                       const double *seconds, int n)
{
    pa_metric one = {metric, unit, values, n};
    pa_result_metrics(json, &one, 1, seconds, n);
}

void pa_result_not_measurable(pa_json *json, const char *why)
{
    pa_json_key_string(json, "not_measurable", why);
}

void pa_result_end(pa_json *json)
{
    pa_execution_json(json);
    pa_result_build_json(json);
    pa_json_end_object(json);
}

void pa_result_build_json(pa_json *json)
{
    pa_json_key(json, "build");
    pa_json_begin_object(json);
    pa_json_key_string(json, "compiler", PERFATLAS_COMPILER);
    pa_json_key_string(json, "cflags", PERFATLAS_CFLAGS);
    pa_json_key_string(json, "arch", PERFATLAS_ARCH);
    pa_json_key(json, "isa"); /* the extensions the build may use (isa_built.c) */
    pa_json_begin_array(json);
    for (const char *feature = pa_isa_built_for; *(feature += strspn(feature, " "));) {
        size_t length = strcspn(feature, " ");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)length, feature);
        pa_json_string(json, name);
        feature += length;
    }
    pa_json_end_array(json);
    pa_json_end_object(json);
}
