/* pa-example-sum: the template benchmark (docs/adding-a-benchmark.md). One pinned thread sums an
 * array of `bytes` bytes of doubles, every sample a calibrated number of passes (sampler.h: warm
 * up, calibrate to min_sample_time, then time `samples` samples; Hoefler & Belli, SC15), and
 * checks the sum against its closed form, so that a sample that did not read the whole array
 * cannot pass. Metric: bandwidth_Bps, the bytes read per second. */
#include <stdint.h>
#include <stdlib.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "result.h"
#include "sampler.h"
#include "timer.h"

/* The one declaration of the parameters: Python reads this table with --params. */
static const pa_param params[] = {
    {"bytes", PA_SIZE, "1MiB", "size of the array of doubles that every pass sums", NULL, 4096,
     0x1p37},
    {"cpu", PA_INT, "0", "PU of the summing thread", NULL, 0, 65535},
    {"samples", PA_INT, "9", "timed samples after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
};

typedef struct {
    const double *values;
    size_t n;
    double sum; /* of the last pass */
} pass;

static void sum_passes(void *context, uint64_t repetitions)
{
    pass *p = context;
    for (uint64_t r = 0; r < repetitions; r++) {
        double sum = 0.0;
        for (size_t i = 0; i < p->n; i++)
            sum += p->values[i];
        p->sum = sum;
        __asm__ volatile("" ::: "memory"); /* every pass reads the array again */
    }
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-example-sum", "a checked sum over an array (the template benchmark)",
                  params, sizeof params / sizeof *params, argc, argv);
    int cpu = (int)pa_arg_int(&args, "cpu");
    pa_cpus_validate(&cpu, 1);
    pa_timer_init();
    pa_thread_placement placement = {.cpu_requested = cpu};
    pa_pin_self(cpu, placement.cpus_allowed, sizeof placement.cpus_allowed);

    size_t n = pa_arg_size(&args, "bytes") / sizeof(double);
    double *values = pa_alloc(n, sizeof *values, "the array to sum");
    for (size_t i = 0; i < n; i++)
        values[i] = (double)(i % 1024); /* small integers: the sum is exact */
    double expected = (double)(n / 1024) * (1023.0 * 1024.0 / 2.0);
    for (size_t r = 0; r < n % 1024; r++)
        expected += (double)r;

    pass p = {.values = values, .n = n};
    pa_sampler sampler = {.work = sum_passes,
                          .min_seconds = pa_arg_double(&args, "min_sample_time")};
    uint64_t repetitions = pa_sampler_calibrate(&sampler, &p);
    int samples = (int)pa_arg_int(&args, "samples");
    double *seconds = pa_alloc((size_t)samples, sizeof(double), "the sample times");
    double *bandwidth = pa_alloc((size_t)samples, sizeof(double), "the bandwidth samples");
    for (int s = 0; s < samples; s++) {
        seconds[s] = pa_sampler_sample(&sampler, &p, repetitions);
        bandwidth[s] = (double)(repetitions * n * sizeof(double)) / seconds[s];
    }
    if (p.sum != expected)
        pa_fail(3, "the sum is %.17g, not %.17g: a pass did not read the whole array", p.sum,
                expected);

    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    pa_result_begin(&json, "example.sum", &args);
    pa_result_context(&json, &placement, 1, NULL);
    pa_result_samples(&json, "bandwidth_Bps", "byte/s", bandwidth, seconds, samples);
    pa_json_key(&json, "derived");
    pa_json_begin_object(&json);
    pa_json_key_int(&json, "passes_per_sample", (long long)repetitions);
    pa_json_key_double(&json, "sum", p.sum);
    pa_json_end_object(&json);
    pa_result_end(&json);
    free(values);
    free(seconds);
    free(bandwidth);
    return pa_json_finish(&json) ? 2 : 0;
}
