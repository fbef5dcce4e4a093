/* key=value parameters (docs/contract.md, Arguments).
 *
 * Each executable declares its parameters once, in a static table; pa_args_parse checks every word
 * of the command line against it, parses and range-checks every value (defaults included) before
 * anything is measured, and answers --help and --params (the table as JSON, which Python reads
 * instead of declaring the parameters again) from the same table. Every error is one sentence on
 * stderr, prefixed by the program name, and exit status 2. */
#ifndef PA_ARGS_H
#define PA_ARGS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdnoreturn.h>

typedef enum {
    PA_INT,      /* decimal integer */
    PA_SIZE,     /* bytes: plain, or with B, K/KiB, M/MiB, G/GiB, T/TiB (binary) */
    PA_DOUBLE,   /* real number */
    PA_CHOICE,   /* one word of `choices` */
    PA_CPUS,     /* OS PU indices: 0,1 or 0-3 or 0-3,8 */
    PA_DURATION, /* number with ns, us, ms or s; plain numbers are seconds */
    PA_NODE,     /* local, interleave, or a NUMA node number */
    PA_STRING,   /* free text */
    PA_SIZES,    /* one size, or a comma-separated series of sizes (each checked as PA_SIZE) */
    PA_INTS,     /* one integer, or a comma-separated series of integers (each checked as PA_INT) */
} pa_kind;

/* PA_NODE values that are not node numbers. */
enum {
    PA_NODE_LOCAL = -1,
    PA_NODE_INTERLEAVE = -2
};

typedef struct {
    const char *name;
    pa_kind kind;
    const char *fallback; /* the default, written as a user would write it */
    const char *help;
    const char *choices; /* PA_CHOICE: "a,b,c"; PA_SIZE: the only sizes allowed, or NULL */
    double min, max;     /* inclusive range of a numeric kind; min == max means unbounded */
} pa_param;

#define PA_MAX_PARAMS 32

typedef struct {
    long long integer; /* PA_INT, PA_SIZE (bytes), PA_NODE */
    double real;       /* PA_DOUBLE, PA_DURATION (seconds) */
    const char *text;  /* the word as written (or the default) */
    int *cpus;         /* PA_CPUS, in the order given */
    int ncpus;
    long long *sizes; /* PA_SIZES, PA_INTS: the series in the order given; `integer` is the
                         current one */
    int nsizes;
    char point[32]; /* PA_SIZES, PA_INTS: `text` of the current point */
} pa_value;

typedef struct {
    const pa_param *params;
    int count;
    pa_value values[PA_MAX_PARAMS];
    const char *output; /* json=FILE, built into every program; "-" is stdout */
} pa_args;

/* The program name used in every message; set by pa_args_parse. */
extern const char *pa_program;

/* "program: message" and a newline on stderr. */
void pa_vmessage(const char *format, va_list ap) __attribute__((format(printf, 1, 0)));
noreturn void pa_fail(int status, const char *format, ...) __attribute__((format(printf, 2, 3)));

void pa_args_parse(pa_args *args, const char *program, const char *summary, const pa_param *params,
                   int count, int argc, char **argv);

const pa_value *pa_arg(const pa_args *args, const char *name);
long long pa_arg_int(const pa_args *args, const char *name);
size_t pa_arg_size(const pa_args *args, const char *name);
double pa_arg_double(const pa_args *args, const char *name); /* PA_DOUBLE; PA_DURATION in s */
const char *pa_arg_text(const pa_args *args, const char *name);
const int *pa_arg_cpus(const pa_args *args, const char *name, int *ncpus);
/* A PA_NODE word (local, interleave or a node number) as its value; fails with status 2 otherwise.
 * For a parameter that takes other words too (mem.loaded_latency's inject_node=same). */
int pa_parse_node(const char *name, const char *word);
/* PA_SIZES, PA_INTS: the number of points of the series; pa_arg_select makes point k the current value
 * (what pa_arg_size returns and what the result document's params say). */
int pa_arg_points(const pa_args *args, const char *name);
void pa_arg_select(pa_args *args, const char *name, int k);

/* Where the JSON goes (json=FILE or stdout); fails with status 2 if the file cannot be opened. */
FILE *pa_args_output(const pa_args *args);

#endif
