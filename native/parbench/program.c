/* The program runner: every line is set up (each thread allocates and first-touches its share),
 * timed from a barrier through `repeat` passes on every thread to the next barrier, checked and
 * freed. Times are seconds since the program started (after the file was read), so the
 * invocations of one or several programs can be drawn on a timeline. */
#include "program.h"
#include "alloc.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "files.h"
#include "result.h"
#include "timer.h"
#include "variant.h"

#define MAX_WORDS 16

static const pa_param line_params[] = {
    {"kernel", PA_STRING, "", "kernel of the catalog", NULL, 0, 0},
    {"bytes", PA_SIZE, "2500000", "working set over all threads", NULL, 1, 0x1p40},
    {"stride", PA_INT, "1", "visit every S-th element", NULL, 0, 0},
    {"threads", PA_INT, "1", "threads", NULL, 1, 4096},
    {"repeat", PA_INT, "1", "passes of the kernel", NULL, 1, 1e12},
};

typedef struct {
    int line;
    pb_variant variant;
    uint64_t repeat;
    pb_instance one;
    double setup_start, start, end; /* seconds since the program started */
} invocation;

typedef struct {
    invocation *list;
    int count;
    pa_thread_placement *placement; /* of the widest invocation */
    int widest;
} program;

/* Splits `text` at blanks into at most MAX_WORDS words (argv style: words[0] is unused). */
static int split(char *text, char **words, const char *where)
{
    int n = 1;
    for (char *word = strtok(text, " \t\r\n"); word; word = strtok(NULL, " \t\r\n")) {
        if (n == MAX_WORDS)
            pa_fail(2, "%s has more than %d words", where, MAX_WORDS - 1);
        if (!strchr(word, '=') || word[0] == '=')
            pa_fail(2, "%s: '%s' is not a key=value word", where, word);
        if (strncmp(word, "json=", 5) == 0)
            pa_fail(2,
                    "%s: unknown parameter 'json' (a line takes kernel, bytes, stride, "
                    "threads, repeat)",
                    where);
        words[n++] = word;
    }
    return n;
}

/* One line's words through args.h, with "FILE line N" as the program name of its messages. */
static void parse_line(invocation *inv, char *text, const char *file, int line, int ncpus)
{
    static char where[1100], named[1200];
    snprintf(where, sizeof where, "%s line %d", file, line);
    snprintf(named, sizeof named, "pa-parbench: %s", where);
    char *words[MAX_WORDS];
    int n = split(text, words, where);
    pa_args args;
    pa_args_parse(&args, named, "one invocation", line_params,
                  sizeof line_params / sizeof *line_params, n, words);
    const char *name = pa_arg_text(&args, "kernel");
    inv->line = line;
    inv->variant.kernel = pb_kernel_find(name);
    if (!name[0])
        pa_fail(2, "the line names no kernel (write kernel=NAME)");
    if (!inv->variant.kernel)
        pa_fail(2, "kernel '%s' is not in the catalog (pa-parbench mode=list)", name);
    inv->variant.bytes = pa_arg_size(&args, "bytes");
    inv->variant.stride = (size_t)pa_arg_int(&args, "stride");
    inv->variant.threads = (int)pa_arg_int(&args, "threads");
    inv->repeat = (uint64_t)pa_arg_int(&args, "repeat");
    if (inv->variant.threads > ncpus)
        pa_fail(2, "threads=%d needs %d PUs but cpus= names %d", inv->variant.threads,
                inv->variant.threads, ncpus);
    char why[256];
    if (pb_variant_shape(&inv->variant, &inv->one, why, sizeof why))
        pa_fail(2, "%s", why);
    pa_program = "pa-parbench";
}

static program read_program(const char *file, int ncpus)
{
    if (!file[0])
        pa_fail(2, "cannot read the program file (give file=PROG): %s", strerror(ENOENT));
    char why[1024];
    FILE *in = pa_open_regular(file, "the program file", "give a program written by perfatlas", why,
                               sizeof why);
    if (!in)
        pa_fail(2, "%s", why);
    program p = {0};
    char text[4096];
    for (int line = 1; fgets(text, sizeof text, in); line++) {
        if (!strchr(text, '\n') && !feof(in))
            pa_fail(2, "%s line %d is longer than %zu characters", file, line, sizeof text - 2);
        char *comment = strchr(text, '#');
        if (comment)
            *comment = '\0';
        if (strspn(text, " \t\r\n") == strlen(text))
            continue;
        p.list = pa_realloc(p.list, (size_t)(p.count + 1), sizeof *p.list, "list");
        memset(&p.list[p.count], 0, sizeof *p.list);
        parse_line(&p.list[p.count++], text, file, line, ncpus);
    }
    fclose(in);
    if (p.count == 0)
        pa_fail(2, "the program file %s holds no invocations (one kernel=NAME line each)", file);
    for (int i = 0; i < p.count; i++)
        if (p.list[i].variant.threads > p.widest)
            p.widest = p.list[i].variant.threads;
    p.placement = pa_calloc((size_t)p.widest, sizeof *p.placement, "placement");
    return p;
}

static void run_invocation(invocation *inv, const int *cpus, pa_thread_placement *placement,
                           uint64_t origin, char *failure, size_t size)
{
    inv->setup_start = pa_ticks_to_seconds(pa_ticks() - origin);
#pragma omp parallel num_threads(inv->variant.threads)
    {
        int t = pa_team_thread(inv->variant.threads);
        pb_instance k;
        pb_team_setup(&inv->variant, cpus, t, &k, &placement[t], failure, size);
#pragma omp barrier
        if (!failure[0]) {
#pragma omp master
            inv->start = pa_ticks_to_seconds(pa_ticks() - origin);
#pragma omp barrier
            pb_instance_run(&k, inv->repeat);
#pragma omp barrier
#pragma omp master
            inv->end = pa_ticks_to_seconds(pa_ticks() - origin);
            pb_team_check(&k, t, failure, size);
        }
    }
}

static void write_invocation(pa_json *json, const invocation *inv)
{
    const pb_kernel *kernel = inv->variant.kernel;
    uint64_t iterations = inv->one.iterations * (uint64_t)inv->variant.threads * inv->repeat;
    pa_json_begin_object(json);
    pa_json_key_int(json, "line", inv->line);
    pa_json_key_string(json, "kernel", kernel->name);
    pa_json_key_int(json, "bytes", (long long)inv->variant.bytes);
    pa_json_key_int(json, "stride", (long long)inv->variant.stride);
    pa_json_key_int(json, "threads", inv->variant.threads);
    pa_json_key_int(json, "repeat", (long long)inv->repeat);
    pa_json_key_double(json, "setup_start_s", inv->setup_start);
    pa_json_key_double(json, "start_s", inv->start);
    pa_json_key_double(json, "end_s", inv->end);
    pa_json_key_int(json, "iterations", (long long)iterations);
    pa_json_key_int(json, "bytes_moved",
                    (long long)(iterations * (uint64_t)pb_kernel_bytes_per_iteration(kernel)));
    pa_json_key_int(json, "store_bytes", (long long)(iterations * kernel->store_bytes));
    pa_json_key_int(json, "flops", (long long)(iterations * kernel->flops));
    pa_json_key_int(json, "bytes_used",
                    (long long)(pb_instance_bytes(&inv->one) * (size_t)inv->variant.threads));
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

static void write_program(const pa_args *args, const program *p)
{
    double *seconds = pa_alloc((size_t)p->count, sizeof *seconds, "seconds");
    for (int i = 0; i < p->count; i++)
        seconds[i] = p->list[i].end - p->list[i].start;
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_result_begin(&json, "parbench.program", args);
    pa_result_context(&json, p->placement, p->widest, NULL);
    pa_result_samples(&json, "invocation_s", "s", seconds, seconds, p->count);
    pa_json_key(&json, "derived");
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "times",
                       "seconds since the program started, after its file was read: setup "
                       "(allocation, first touch) from setup_start_s, the timed passes from "
                       "start_s to end_s, then the check");
    pa_json_key(&json, "invocations");
    pa_json_begin_array(&json);
    for (int i = 0; i < p->count; i++)
        write_invocation(&json, &p->list[i]);
    pa_json_end_array(&json);
    pa_json_key_bool(&json, "verified", 1);
    pa_json_end_object(&json);
    pa_result_end(&json);
    free(seconds);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the result");
}

int pb_program_run(const pa_args *args, const char *file, const int *cpus, int ncpus)
{
    program p = read_program(file, ncpus);
    omp_set_dynamic(0);
    uint64_t origin = pa_ticks();
    char failure[400] = "";
    for (int i = 0; i < p.count; i++) {
        run_invocation(&p.list[i], cpus, p.placement, origin, failure, sizeof failure);
        if (failure[0])
            pa_fail(3, "%s line %d: %s", file, p.list[i].line, failure);
    }
    write_program(args, &p);
    free(p.list);
    free(p.placement);
    return 0;
}
