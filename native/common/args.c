#include "args.h"
#include "alloc.h"

#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *pa_program = "perfatlas";

void pa_vmessage(const char *format, va_list ap)
{
    fprintf(stderr, "%s: ", pa_program);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
}

void pa_fail(int status, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    pa_vmessage(format, ap);
    va_end(ap);
    exit(status);
}

typedef struct {
    const char *suffix;
    double scale;
} unit;

/* Binary K/KiB, M/MiB ... and SI kB, MB, GB, TB (docs/architecture.md, Units: MB = 10^6
 * bytes), as units.py reads them. */
static const unit size_units[] = {
    {"", 1.0},       {"B", 1.0},    {"K", 0x1p10},   {"KiB", 0x1p10}, {"M", 0x1p20},
    {"MiB", 0x1p20}, {"G", 0x1p30}, {"GiB", 0x1p30}, {"T", 0x1p40},   {"TiB", 0x1p40},
    {"kB", 1e3},     {"MB", 1e6},   {"GB", 1e9},     {"TB", 1e12},    {NULL, 0},
};
static const unit duration_units[] = {
    {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0},
};

/* A number followed by one of `units`; returns 0 if `word` is not of that form. */
static int parse_scaled(const char *word, const unit *units, double *out)
{
    char *end;
    errno = 0;
    double number = strtod(word, &end);
    if (end == word || errno || !isfinite(number))
        return 0;
    for (const unit *u = units; u->suffix; u++)
        if (strcmp(end, u->suffix) == 0) {
            *out = number * u->scale;
            return 1;
        }
    return 0;
}

static int parse_integer(const char *word, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(word, &end, 10);
    return end != word && *end == '\0' && !errno;
}

#define PA_MAX_CPU 65535

/* "0,1" or "0-3,8" -> malloc'd array in the order written; duplicates are an error. Linear in the
 * CPUs listed: a bitmap finds duplicates and the array grows geometrically (a fuzzer found that
 * "0-43940" took quadratic time and memory). */
static void parse_cpus(const char *name, const char *word, pa_value *value)
{
    static unsigned char listed[(PA_MAX_CPU + 1) / 8];
    memset(listed, 0, sizeof listed);
    int capacity = 0;
    value->cpus = NULL;
    value->ncpus = 0;
    const char *p = word;
    for (;;) {
        long long first, last;
        char *end;
        errno = 0;
        first = strtoll(p, &end, 10);
        if (end == p || first < 0 || errno)
            goto malformed;
        last = first;
        if (*end == '-') {
            p = end + 1;
            last = strtoll(p, &end, 10);
            if (end == p || last < first || errno)
                goto malformed;
        }
        if (last > PA_MAX_CPU)
            pa_fail(2, "%s=%s names cpu %lld, beyond any machine this program supports", name, word,
                    last);
        for (long long cpu = first; cpu <= last; cpu++) {
            if (listed[cpu / 8] >> (cpu % 8) & 1)
                pa_fail(2, "%s=%s lists cpu %lld twice", name, word, cpu);
            listed[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
            if (value->ncpus == capacity) {
                capacity = capacity ? 2 * capacity : 16;
                value->cpus = pa_realloc(value->cpus, (size_t)capacity, sizeof(int), "a CPU list");
            }
            value->cpus[value->ncpus++] = (int)cpu;
        }
        if (*end == '\0')
            return;
        if (*end != ',')
            goto malformed;
        p = end + 1;
    }
malformed:
    pa_fail(2, "%s=%s is not a CPU list (write it like 0,1 or 0-3)", name, word);
}

/* Is `word` one of the comma-separated words in `list`? */
static int in_list(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return 1;
        p += len + (comma != NULL);
    }
    return 0;
}

/* Is `size` one of the comma-separated sizes in `list` ("4KiB,2MiB")? */
static int in_size_list(double size, const char *list)
{
    for (const char *p = list; *p;) {
        char choice[32];
        size_t len = strcspn(p, ",");
        double allowed;
        snprintf(choice, sizeof choice, "%.*s", (int)len, p);
        if (parse_scaled(choice, size_units, &allowed) && allowed == size)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* "a,b,c" as "a, b, c" for messages. */
static const char *spaced(const char *list)
{
    static char out[512];
    size_t used = 0;
    for (const char *p = list; *p && used + 3 < sizeof out; p++) {
        out[used++] = *p;
        if (*p == ',')
            out[used++] = ' ';
    }
    out[used] = '\0';
    return out;
}

static void check_range(const pa_param *param, const char *word, double v)
{
    if (param->min == param->max || (v >= param->min && v <= param->max))
        return;
    pa_fail(2, "%s=%s is out of range: it must be between %.15g and %.15g%s", param->name, word,
            param->min, param->max,
            param->kind == PA_SIZE || param->kind == PA_SIZES ? " bytes"
            : param->kind == PA_DURATION                      ? " seconds"
                                                              : "");
}

int pa_parse_node(const char *name, const char *word)
{
    long long node;
    if (strcmp(word, "local") == 0)
        return PA_NODE_LOCAL;
    if (strcmp(word, "interleave") == 0)
        return PA_NODE_INTERLEAVE;
    if (!parse_integer(word, &node) || node < 0 || node > 4095)
        pa_fail(2, "%s=%s is not 'local', 'interleave' or a NUMA node number", name, word);
    return (int)node;
}

static void parse_value(const pa_param *param, const char *word, pa_value *value);

/* "4096,32KiB,1MiB" (PA_SIZES) or "0,50,100" (PA_INTS): every point parsed and checked as a
 * PA_SIZE or PA_INT of the same bounds; the first is the current value. A series runs in one
 * process (docs/contract.md, Series). */
static void parse_series(const pa_param *param, const char *word, pa_value *value)
{
    pa_param single = *param;
    single.kind = param->kind == PA_SIZES ? PA_SIZE : PA_INT;
    int sizes = param->kind == PA_SIZES;
    value->nsizes = 0;
    value->sizes = NULL;
    for (const char *p = word;;) {
        size_t len = strcspn(p, ",");
        char point[64];
        if (len == 0 || len >= sizeof point)
            pa_fail(2, "%s=%s is not %s", param->name, word,
                    sizes ? "a size or a comma-separated list of sizes"
                          : "an integer or a comma-separated list of integers");
        snprintf(point, sizeof point, "%.*s", (int)len, p);
        pa_value one = {0};
        parse_value(&single, point, &one);
        value->sizes =
            pa_realloc(value->sizes, (size_t)value->nsizes + 1, sizeof(long long), "a size series");
        value->sizes[value->nsizes++] = one.integer;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    value->integer = value->sizes[0];
    snprintf(value->point, sizeof value->point, "%lld", value->integer);
    value->text = value->nsizes > 1 ? value->point : word;
}

static void parse_value(const pa_param *param, const char *word, pa_value *value)
{
    double real;
    value->text = word;
    switch (param->kind) {
    case PA_INT:
        if (!parse_integer(word, &value->integer))
            pa_fail(2, "%s=%s is not an integer", param->name, word);
        check_range(param, word, (double)value->integer);
        break;
    case PA_SIZE:
        if (!parse_scaled(word, size_units, &real) || real < 0 || real != floor(real) ||
            real >= 0x1p62)
            pa_fail(2, "%s=%s is not a size (write bytes like 4096, 32KiB, 256MiB or 1GiB)",
                    param->name, word);
        value->integer = (long long)real;
        check_range(param, word, real);
        if (param->choices && !in_size_list(real, param->choices))
            pa_fail(2, "%s=%s is not one of %s", param->name, word, spaced(param->choices));
        break;
    case PA_DOUBLE: {
        char *end;
        errno = 0;
        value->real = strtod(word, &end);
        if (end == word || *end || errno || !isfinite(value->real))
            pa_fail(2, "%s=%s is not a number", param->name, word);
        check_range(param, word, value->real);
        break;
    }
    case PA_DURATION:
        if (!parse_scaled(word, duration_units, &value->real) || value->real < 0)
            pa_fail(2, "%s=%s is not a duration (write it like 20ms, 2s or 500us)", param->name,
                    word);
        check_range(param, word, value->real);
        break;
    case PA_CHOICE:
        if (!in_list(word, param->choices))
            pa_fail(2, "%s '%s' is not one of %s", param->name, word, spaced(param->choices));
        break;
    case PA_CPUS:
        parse_cpus(param->name, word, value);
        break;
    case PA_NODE:
        value->integer = pa_parse_node(param->name, word);
        break;
    case PA_STRING:
        break;
    case PA_SIZES:
    case PA_INTS:
        parse_series(param, word, value);
        break;
    }
}

static const char *kind_name(pa_kind kind)
{
    static const char *names[] = {
        [PA_INT] = "integer",
        [PA_SIZE] = "bytes",
        [PA_DOUBLE] = "number",
        [PA_CHOICE] = "choice",
        [PA_CPUS] = "cpu list",
        [PA_DURATION] = "duration",
        [PA_NODE] = "memory policy",
        [PA_STRING] = "text",
        [PA_SIZES] = "bytes, or a list",
        [PA_INTS] = "integer, or a list",
    };
    return names[kind];
}

static void print_help(const char *summary, const pa_param *params, int count)
{
    printf("%s: %s\nusage: %s [key=value ...]\n\n", pa_program, summary, pa_program);
    for (int i = 0; i < count; i++) {
        printf("  %s=%s\n      (%s) %s", params[i].name, params[i].fallback,
               kind_name(params[i].kind), params[i].help);
        if (params[i].choices)
            printf("; one of %s", spaced(params[i].choices));
        printf("\n");
    }
    printf("  json=-\n      (file) write the JSON result to this file instead of stdout\n");
    printf("  --params\n      print these parameters as JSON (perfatlas.params/1) and exit\n");
}

static const char *kind_word(pa_kind kind)
{
    static const char *words[] = {
        [PA_INT] = "int",       [PA_SIZE] = "size",     [PA_DOUBLE] = "double",
        [PA_CHOICE] = "choice", [PA_CPUS] = "cpus",     [PA_DURATION] = "duration",
        [PA_NODE] = "node",     [PA_STRING] = "string", [PA_SIZES] = "sizes",
        [PA_INTS] = "ints",
    };
    return words[kind];
}

/* --params: the table as JSON (docs/contract.md, The parameter table), so that Python reads the
 * parameters from here instead of declaring them a second time. */
static void print_params(const char *summary, const pa_param *params, int count)
{
    pa_json json;
    pa_json_init(&json, stdout);
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "schema", "perfatlas.params/1");
    pa_json_key_string(&json, "program", pa_program);
    pa_json_key_string(&json, "summary", summary);
    pa_json_key(&json, "params");
    pa_json_begin_array(&json);
    for (int i = 0; i < count; i++) {
        const pa_param *param = &params[i];
        pa_json_begin_object(&json);
        pa_json_key_string(&json, "name", param->name);
        pa_json_key_string(&json, "kind", kind_word(param->kind));
        pa_json_key_string(&json, "default", param->fallback);
        pa_json_key_string(&json, "help", param->help);
        pa_json_key(&json, "choices");
        if (param->choices) {
            pa_json_begin_array(&json);
            for (const char *p = param->choices; *p;) {
                size_t len = strcspn(p, ",");
                char word[128];
                snprintf(word, sizeof word, "%.*s", (int)len, p);
                pa_json_string(&json, word);
                p += len + (p[len] == ',');
            }
            pa_json_end_array(&json);
        } else
            pa_json_null(&json);
        int bounded = param->min != param->max;
        pa_json_key(&json, "min");
        bounded ? pa_json_double(&json, param->min) : pa_json_null(&json);
        pa_json_key(&json, "max");
        bounded ? pa_json_double(&json, param->max) : pa_json_null(&json);
        pa_json_end_object(&json);
    }
    pa_json_end_array(&json);
    pa_json_end_object(&json);
    if (pa_json_finish(&json))
        pa_fail(2, "cannot write the parameter table: %s", strerror(errno));
}

void pa_args_parse(pa_args *args, const char *program, const char *summary, const pa_param *params,
                   int count, int argc, char **argv)
{
    pa_program = program;
    if (count > PA_MAX_PARAMS)
        pa_fail(2, "too many parameters declared (this is a perfatlas bug)");
    const char *given[PA_MAX_PARAMS] = {0};
    args->params = params;
    args->count = count;
    args->output = "-";
    for (int a = 1; a < argc; a++) {
        const char *word = argv[a];
        if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
            print_help(summary, params, count);
            exit(0);
        }
        if (strcmp(word, "--params") == 0) {
            print_params(summary, params, count);
            exit(0);
        }
        const char *eq = strchr(word, '=');
        if (!eq || eq == word)
            pa_fail(2, "'%s' is not a key=value word (see --help)", word);
        size_t len = (size_t)(eq - word);
        if (len == 4 && strncmp(word, "json", 4) == 0) {
            args->output = eq + 1;
            continue;
        }
        int i = 0;
        while (i < count && !(strlen(params[i].name) == len && !strncmp(params[i].name, word, len)))
            i++;
        if (i == count)
            pa_fail(2, "unknown parameter '%.*s' (see --help for the parameters)", (int)len, word);
        if (given[i])
            pa_fail(2, "%s is given twice", params[i].name);
        given[i] = eq + 1;
    }
    for (int i = 0; i < count; i++)
        parse_value(&params[i], given[i] ? given[i] : params[i].fallback, &args->values[i]);
}

const pa_value *pa_arg(const pa_args *args, const char *name)
{
    for (int i = 0; i < args->count; i++)
        if (strcmp(args->params[i].name, name) == 0)
            return &args->values[i];
    pa_fail(2, "parameter %s is not declared (this is a perfatlas bug)", name);
}

long long pa_arg_int(const pa_args *args, const char *name) { return pa_arg(args, name)->integer; }

size_t pa_arg_size(const pa_args *args, const char *name)
{
    return (size_t)pa_arg(args, name)->integer;
}

double pa_arg_double(const pa_args *args, const char *name) { return pa_arg(args, name)->real; }

const char *pa_arg_text(const pa_args *args, const char *name) { return pa_arg(args, name)->text; }

const int *pa_arg_cpus(const pa_args *args, const char *name, int *ncpus)
{
    const pa_value *value = pa_arg(args, name);
    *ncpus = value->ncpus;
    return value->cpus;
}

int pa_arg_points(const pa_args *args, const char *name)
{
    const pa_value *value = pa_arg(args, name);
    return value->nsizes > 0 ? value->nsizes : 1;
}

void pa_arg_select(pa_args *args, const char *name, int k)
{
    pa_value *value = (pa_value *)pa_arg(args, name);
    if (k < 0 || k >= value->nsizes)
        pa_fail(2, "point %d of %s does not exist (this is a perfatlas bug)", k, name);
    value->integer = value->sizes[k];
    snprintf(value->point, sizeof value->point, "%lld", value->integer);
    value->text = value->point;
}

FILE *pa_args_output(const pa_args *args)
{
    if (strcmp(args->output, "-") == 0)
        return stdout;
    FILE *file = fopen(args->output, "w");
    if (!file)
        pa_fail(2, "cannot write json=%s: %s", args->output, strerror(errno));
    return file;
}
