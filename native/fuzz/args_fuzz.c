/* libFuzzer target: the key=value parser every native program uses (native/common/args.c), under
 * AddressSanitizer and UndefinedBehaviorSanitizer (`make fuzz`, docs/safety/native.md). The input
 * is split into command-line words at newlines and NUL bytes and parsed against a table holding
 * every kind of parameter. The parser ends a bad command line with pa_fail -> exit(2); linked with
 * -Wl,--wrap=exit, that exit returns here (longjmp) with its status, which must be 0 (--help,
 * --params) or 2, after one line on stderr. */
#include <assert.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void __wrap_exit(int status);
void __real_exit(int status);

static const pa_param params[] = {
    {"count", PA_INT, "3", "an integer", NULL, 1, 1e6},
    {"any", PA_INT, "0", "an unbounded integer", NULL, 0, 0},
    {"bytes", PA_SIZE, "4KiB", "a size", NULL, 4096, 0x1p40},
    {"page", PA_SIZE, "4KiB", "a page size", "4KiB,2MiB", 0, 0},
    {"sizes", PA_SIZES, "4096", "a series of sizes", NULL, 4096, 0x1p37},
    {"ratio", PA_DOUBLE, "0.5", "a bounded number", NULL, 0, 1},
    {"scale", PA_DOUBLE, "1", "an unbounded number", NULL, 0, 0},
    {"op", PA_CHOICE, "read", "a choice", "read,write,copy,triad", 0, 0},
    {"cpus", PA_CPUS, "0", "a CPU list", NULL, 0, 0},
    {"time", PA_DURATION, "1ms", "a duration", NULL, 1e-9, 3600},
    {"node", PA_NODE, "local", "a memory policy", NULL, 0, 0},
    {"name", PA_STRING, "", "free text", NULL, 0, 0},
};
enum {
    nparams = sizeof params / sizeof *params,
    max_words = 64
};

static jmp_buf in_target;
static int inside, exit_status;

void __wrap_exit(int status)
{
    if (!inside)
        __real_exit(status); /* libFuzzer's own exit */
    exit_status = status;
    longjmp(in_target, 1);
}

/* The values the parser allocates (CPU lists, size series), also after a refusal. */
static void free_values(pa_args *args)
{
    for (int i = 0; i < nparams; i++) {
        free(args->values[i].cpus);
        free(args->values[i].sizes);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *argv[max_words + 2] = {"pa-fuzz"};
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 1;
    for (char *word = text; word < text + size && argc <= max_words;) {
        size_t length = strcspn(word, "\n"); /* a NUL also ends the word */
        word[length] = '\0';
        argv[argc++] = word;
        word += length + 1;
    }
    argv[argc] = NULL;
    static pa_args args; /* static: the longjmp leaves no local of this frame changed */
    memset(&args, 0, sizeof args);
    exit_status = -1;
    inside = 1;
    if (!setjmp(in_target)) {
        pa_args_parse(&args, "pa-fuzz", "the argument parser under a fuzzer", params, nparams, argc,
                      argv);
        for (int i = 0; i < nparams; i++) { /* every accessor, every point of the series */
            const pa_value *value = pa_arg(&args, params[i].name);
            assert(value->text != NULL);
            (void)pa_arg_double(&args, params[i].name);
        }
        assert(pa_arg_size(&args, "bytes") >= 4096 && pa_arg_int(&args, "count") >= 1);
        for (int k = 0; k < pa_arg_points(&args, "sizes"); k++) {
            pa_arg_select(&args, "sizes", k);
            assert(pa_arg_size(&args, "sizes") >= 4096);
        }
        int ncpus = 0;
        const int *cpus = pa_arg_cpus(&args, "cpus", &ncpus);
        for (int c = 0; c < ncpus; c++)
            assert(cpus[c] >= 0);
        exit_status = 0;
    }
    inside = 0;
    assert(exit_status == 0 || exit_status == 2);
    free_values(&args);
    free(text);
    return 0;
}
