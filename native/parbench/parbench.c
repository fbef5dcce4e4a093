/* pa-parbench: the PARbench-style kernel catalog (kernels.def) and its program runner.
 *
 *   mode=list      the catalog as JSON, for the Python side (nothing outside native/ restates it)
 *   mode=kernel    one variant -- kernel, bytes, stride, threads -- measured: warm-up, then
 *                  `samples` timed samples of a calibrated number of passes each
 *                  (Hoefler & Belli, SC15), checked afterwards
 *   mode=program   a program file run in order, one timed invocation per line (program.c)
 *
 * A pass is one execution of the kernel over each thread's share of the bytes; its runtime is a
 * sample's time over its passes, its bytes and flops the declared counts per iteration times the
 * iterations of a pass. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "counters.h"
#include "program.h"
#include "result.h"
#include "sampler.h"
#include "threads.h"
#include "timer.h"
#include "variant.h"

#define PB_KERNEL(name, ...) "," #name
static const char kernel_names[] =
#include "kernels.def"
    ;
#undef PB_KERNEL

static const pa_param params[] = {
    {"mode", PA_CHOICE, "kernel",
     "kernel: measure one variant; program: run file=PROG; list: print the catalog",
     "kernel,program,list", 0, 0},
    {"kernel", PA_CHOICE, "triad", "kernel of the catalog (mode=list)", kernel_names + 1, 0, 0},
    {"bytes", PA_SIZE, "2500000",
     "working set over all threads (kB, MB, GB are SI: 2.5MB = 2500000 bytes)", NULL, 1, 0x1p40},
    {"stride", PA_INT, "1", "visit every S-th element: 1, 2, 4, 8, 16 or 32 (strided kernels)",
     NULL, 0, 0},
    {"threads", PA_INT, "1", "threads, pinned to the first of cpus", NULL, 1, 4096},
    {"cpus", PA_CPUS, "0", "PUs the threads are pinned to, in this order", NULL, 0, 0},
    {"bind", PA_CHOICE, "cpus",
     "cpus: thread t pinned to the t-th of cpus=; none: no pinning, the OS places the threads "
     "within the process's CPU set (cpus= is ignored)",
     "cpus,none", 0, 0},
    {"samples", PA_INT, "9", "timed samples after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "2ms", "shortest duration of one sample", NULL, 1e-6, 3600},
    {"file", PA_STRING, "", "the program (mode=program): one invocation per line", NULL, 0, 0},
};

/* -- mode=list ---------------------------------------------------------------------------- */
static void write_catalog(FILE *out)
{
    pa_json json;
    pa_json_init(&json, out);
    pa_json_begin_array(&json);
    for (const pb_kernel *k = pb_kernel_first(); k; k = pb_kernel_next(k)) {
        pa_json_begin_object(&json);
        pa_json_key_string(&json, "name", k->name);
        pb_kernel_counts_json(&json, k);
        pa_json_key_bool(&json, "strided", k->strided);
        pa_json_key_string(&json, "description", k->description);
        pa_json_end_object(&json);
    }
    pa_json_end_array(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the kernel catalog");
}

/* -- mode=kernel -------------------------------------------------------------------------- */
typedef struct {
    pb_variant variant;
    const int *cpus;
    int samples;
    double min_seconds;
    pb_instance one; /* thread 0's shape, for the counts */
    pa_thread_placement *placement;
    double *seconds;
    uint64_t passes_per_sample;
    int counting; /* every thread opened its counters */
    char counters_why[256];
    double *cycles, *instructions; /* per sample, summed over the threads */
    char failure[400];
} measurement;

static void measure_thread(measurement *m, int t)
{
    pb_instance k;
    pb_team_setup(&m->variant, m->cpus, t, &k, &m->placement[t], m->failure, sizeof m->failure);
    pb_counters counters = {-1, -1};
    char why[256];
    int opened = pb_counters_open(&counters, why, sizeof why) == 0;
#pragma omp critical(pb_counters)
    if (!opened && m->counting) {
        m->counting = 0;
        snprintf(m->counters_why, sizeof m->counters_why, "%s", why);
    }
#pragma omp barrier
    if (m->failure[0])
        return;
    pa_sampler sampler = {.work = pb_instance_work, .min_seconds = m->min_seconds, .team = 1};
    uint64_t passes = pa_sampler_calibrate(&sampler, &k);
    for (int i = 0; i < m->samples; i++) {
        uint64_t cycles0 = 0, instructions0 = 0, cycles1 = 0, instructions1 = 0;
        if (m->counting)
            pb_counters_read(&counters, &cycles0, &instructions0);
        double seconds = pa_sampler_sample(&sampler, &k, passes);
        if (m->counting) {
            pb_counters_read(&counters, &cycles1, &instructions1);
#pragma omp atomic
            m->cycles[i] += (double)(cycles1 - cycles0);
#pragma omp atomic
            m->instructions[i] += (double)(instructions1 - instructions0);
        }
#pragma omp master
        m->seconds[i] = seconds;
    }
    pb_counters_close(&counters);
#pragma omp master
    m->passes_per_sample = passes;
    pb_team_check(&k, t, m->failure, sizeof m->failure);
}

static void write_samples(pa_json *json, const measurement *m)
{
    const pb_kernel *kernel = m->variant.kernel;
    double iterations = (double)m->one.iterations * m->variant.threads;
    double per_sample = iterations * (double)m->passes_per_sample;
    const char *names[] = {"runtime_s", "bandwidth_Bps", "flops_per_s", "cycles_per_iteration",
                           "instructions_per_cycle"};
    const char *units[] = {"s", "byte/s", "flop/s", "cycle", "instruction/cycle"};
    int present[] = {1, 1, kernel->flops > 0, m->counting, m->counting};
    pa_json_key(json, "samples");
    pa_json_begin_object(json);
    for (int metric = 0; metric < 5; metric++) {
        if (!present[metric])
            continue;
        pa_json_key(json, names[metric]);
        pa_json_begin_array(json);
        for (int i = 0; i < m->samples; i++) {
            double runtime = m->seconds[i] / (double)m->passes_per_sample;
            double values[] = {runtime,
                               iterations * pb_kernel_bytes_per_iteration(kernel) / runtime,
                               iterations * kernel->flops / runtime, m->cycles[i] / per_sample,
                               m->cycles[i] > 0 ? m->instructions[i] / m->cycles[i] : 0};
            pa_json_double(json, values[metric]);
        }
        pa_json_end_array(json);
    }
    pa_json_end_object(json);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    for (int metric = 0; metric < 5; metric++)
        if (present[metric])
            pa_json_key_string(json, names[metric], units[metric]);
    pa_json_end_object(json);
    pa_json_key(json, "sample_seconds");
    pa_json_double_array(json, m->seconds, m->samples);
}

static void write_measurement(const pa_args *args, const measurement *m)
{
    const pb_kernel *kernel = m->variant.kernel;
    uint64_t iterations = m->one.iterations * (uint64_t)m->variant.threads;
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_result_begin(&json, "parbench.kernel", args);
    pa_result_context(&json, m->placement, m->variant.threads, NULL);
    write_samples(&json, m);
    pa_json_key(&json, "derived");
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "description", kernel->description);
    pb_kernel_counts_json(&json, kernel);
    pa_json_key_bool(&json, "strided", kernel->strided);
    pa_json_key_string(&json, "decomposition",
                       "each thread runs the kernel on its own 1/threads share of the bytes");
    pa_json_key_int(&json, "shape_n", (long long)m->one.n);
    pa_json_key_int(&json, "iterations_per_pass", (long long)iterations);
    pa_json_key_int(&json, "load_bytes_per_pass", (long long)(iterations * kernel->load_bytes));
    pa_json_key_int(&json, "store_bytes_per_pass", (long long)(iterations * kernel->store_bytes));
    pa_json_key_int(&json, "bytes_per_pass",
                    (long long)(iterations * (uint64_t)pb_kernel_bytes_per_iteration(kernel)));
    pa_json_key_int(&json, "flops_per_pass", (long long)(iterations * kernel->flops));
    pa_json_key_int(&json, "bytes_used",
                    (long long)(pb_instance_bytes(&m->one) * (size_t)m->variant.threads));
    pa_json_key_int(&json, "passes_per_sample", (long long)m->passes_per_sample);
    if (m->counting)
        pa_json_key_string(&json, "hardware_counters",
                           "perf_event_open: cycles and instructions, user space, all threads");
    else
        pa_json_key_string(&json, "hardware_counters", m->counters_why);
    pa_json_key_bool(&json, "verified", 1);
    pa_json_end_object(&json);
    pa_result_end(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the result");
}

static void measure_variant(const pa_args *args, const pb_variant *variant, const int *cpus)
{
    measurement m = {.variant = *variant,
                     .cpus = cpus,
                     .samples = (int)pa_arg_int(args, "samples"),
                     .min_seconds = pa_arg_double(args, "min_sample_time"),
                     .counting = 1};
    char why[256];
    if (pb_variant_shape(variant, &m.one, why, sizeof why))
        pa_fail(2, "%s", why);
    m.placement = pa_calloc((size_t)variant->threads, sizeof *m.placement, "placement");
    m.seconds = pa_calloc((size_t)m.samples, sizeof *m.seconds, "seconds");
    m.cycles = pa_calloc((size_t)m.samples, sizeof *m.cycles, "cycles");
    m.instructions = pa_calloc((size_t)m.samples, sizeof *m.instructions, "instructions");
    omp_set_dynamic(0);
#pragma omp parallel num_threads(variant->threads)
    measure_thread(&m, pa_team_thread(variant->threads));
    if (m.failure[0])
        pa_fail(3, "%s", m.failure);
    write_measurement(args, &m);
}

/* The first `threads` PUs of cpus=, checked against this machine; NULL with bind=none. */
static const int *team_cpus(const pa_args *args, int threads)
{
    if (strcmp(pa_arg_text(args, "bind"), "none") == 0)
        return NULL;
    int ncpus;
    const int *cpus = pa_arg_cpus(args, "cpus", &ncpus);
    pa_cpus_validate(cpus, ncpus);
    if (threads > ncpus)
        pa_fail(2, "threads=%d needs %d PUs but cpus=%s names %d (name more PUs in cpus=)", threads,
                threads, pa_arg_text(args, "cpus"), ncpus);
    return cpus;
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-parbench", "PARbench-style kernel catalog and program runner", params,
                  sizeof params / sizeof *params, argc, argv);
    const char *mode = pa_arg_text(&args, "mode");
    if (strcmp(mode, "list") == 0) {
        write_catalog(pa_args_output(&args));
        return 0;
    }
    pa_timer_init();
    if (strcmp(mode, "program") == 0) {
        if (strcmp(pa_arg_text(&args, "bind"), "none") == 0) /* unpinned: no PU limit per line */
            return pb_program_run(&args, pa_arg_text(&args, "file"), NULL, 4096);
        int ncpus;
        const int *cpus = pa_arg_cpus(&args, "cpus", &ncpus);
        pa_cpus_validate(cpus, ncpus);
        return pb_program_run(&args, pa_arg_text(&args, "file"), cpus, ncpus);
    }
    pb_variant variant = {.kernel = pb_kernel_find(pa_arg_text(&args, "kernel")),
                          .bytes = pa_arg_size(&args, "bytes"),
                          .stride = (size_t)pa_arg_int(&args, "stride"),
                          .threads = (int)pa_arg_int(&args, "threads")};
    const int *cpus = team_cpus(&args, variant.threads);
    pa_openmp_start(variant.threads); /* bind=none: threads= is bounded by no cpus= list */
    measure_variant(&args, &variant, cpus);
    return 0;
}
