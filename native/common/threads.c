#define _GNU_SOURCE
#include "threads.h"

#include <omp.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "args.h"

/* The threads of the probe wait here until every one of them exists (or one cannot). */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t released;
    int go;
} gate;

static void *wait_at_gate(void *argument)
{
    gate *g = argument;
    pthread_mutex_lock(&g->lock);
    while (!g->go)
        pthread_cond_wait(&g->released, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* The stack libgomp asks for, as its parse_stacksize reads the variable (libgomp/env.c): a
 * number with an optional B, K, M or G (kilobytes when none); 0 where it is absent or not such
 * a number (libgomp then keeps the default, as here). */
static size_t stack_of(const char *variable)
{
    const char *text = getenv(variable);
    if (!text)
        return 0;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || errno)
        return 0;
    while (isspace((unsigned char)*end))
        end++;
    unsigned long long unit = 1024;
    switch (tolower((unsigned char)*end)) {
    case 'b':
        unit = 1, end++;
        break;
    case 'k':
        end++;
        break;
    case 'm':
        unit = 1024ULL * 1024, end++;
        break;
    case 'g':
        unit = 1024ULL * 1024 * 1024, end++;
        break;
    default:
        break;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end || value > (unsigned long long)-1 / unit)
        return 0;
    return (size_t)(value * unit);
}

/* Creates threads - 1 threads alive at once; 0, or the error of the first that failed and
 * (in *created) how many existed then. */
static int probe(int threads, size_t *stack, int *created)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    size_t asked = stack_of("OMP_STACKSIZE");
    if (!asked)
        asked = stack_of("GOMP_STACKSIZE");
    if (asked)
        pthread_attr_setstacksize(&attr, asked); /* below the minimum: libgomp keeps the default */
    pthread_attr_getstacksize(&attr, stack);
    pthread_t *ids = pa_calloc((size_t)threads - 1, sizeof *ids, "the threads' ids");
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int error = 0;
    for (*created = 0; *created < threads - 1; (*created)++)
        if ((error = pthread_create(&ids[*created], &attr, wait_at_gate, &g)))
            break;
    pthread_mutex_lock(&g.lock);
    g.go = 1;
    pthread_cond_broadcast(&g.released);
    pthread_mutex_unlock(&g.lock);
    for (int i = 0; i < *created; i++)
        pthread_join(ids[i], NULL);
    free(ids);
    pthread_attr_destroy(&attr);
    return error;
}

void pa_openmp_start(int threads)
{
    if (threads > 1) {
        size_t stack = 0;
        int created = 0;
        int error = probe(threads, &stack, &created);
        if (error) {
            char bytes[32];
            pa_fail(2,
                    "cannot start %d OpenMP threads: thread %d could not be created (%s), each "
                    "with %s of stack; ask for fewer threads, a smaller OMP_STACKSIZE, or a "
                    "higher limit (ulimit -v, ulimit -u)",
                    threads, created + 1, strerror(error),
                    pa_format_bytes((double)stack, bytes, sizeof bytes));
        }
    }
    omp_set_num_threads(threads);
#pragma omp parallel num_threads(threads)
    {
        /* nothing: the team exists from here on, its threads idle in libgomp's pool */
    }
}
