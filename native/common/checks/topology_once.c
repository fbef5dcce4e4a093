/* pa_topology() asked by 16 threads released together by a barrier, as an unpinned OpenMP team
 * asks for it on its first line (pa-parbench bind=none): every thread must get the same loaded
 * topology, and hwloc must load it once (two concurrent loads of one handle corrupt it: before
 * the load was guarded, 91 of 100 runs of this check crashed or aborted). */
#include <pthread.h>
#include <stdio.h>

#include "affinity.h"

enum {
    THREADS = 16
};

static pthread_barrier_t start;
static hwloc_topology_t seen[THREADS];

static void *ask(void *slot)
{
    pthread_barrier_wait(&start);
    *(hwloc_topology_t *)slot = pa_topology();
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, ask, &seen[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 1; i < THREADS; i++)
        if (seen[i] != seen[0]) {
            printf("thread %d got another topology than thread 0\n", i);
            return 1;
        }
    printf("%d threads, one topology of %d PUs\n", THREADS,
           hwloc_get_nbobjs_by_type(seen[0], HWLOC_OBJ_PU));
    return 0;
}
