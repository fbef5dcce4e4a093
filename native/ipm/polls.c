/* Polls: the Test family is called in progress loops tens of millions of times (hpcc's
 * RandomAccess polls MPI_Testany every few tens of nanoseconds), where reading the timestamp
 * counter twice per call -- about 10 ns per read on a virtual machine -- and updating the shared
 * table would be most of the program's run time. So their events go to a per-thread accumulator:
 * every call is counted; the first PA_IPM_POLL_EXACT calls of each (region, call) run are timed,
 * then one call in PA_IPM_POLL_EVERY (systematic sampling); the run enters the table at the thread's
 * next poll in another region, or at the end, as one batch whose time is the mean of the timed
 * calls times the count (exact for runs of up to PA_IPM_POLL_EXACT calls). The profile document
 * says so ("poll_sampling", docs/profile.md). Completions are still tracked call by call
 * (requests.c): only the timing of the poll itself is sampled. */
#include <stdatomic.h>
#include <stdlib.h>

#include "table.h"

#define PA_IPM_POLL_THREADS 256 /* threads with an accumulator; others record every call */

const int pa_ipm_poll_calls[PA_IPM_POLL_CALLS] = {PA_IPM_ID_MPI_Test, PA_IPM_ID_MPI_Testany,
                                                  PA_IPM_ID_MPI_Testall, PA_IPM_ID_MPI_Testsome};

typedef struct {
    pa_ipm_poll_t runs[PA_IPM_POLL_CALLS];
} poll_thread_t;

static PA_IPM_THREAD_LOCAL poll_thread_t *mine; /* its runs are pa_ipm_self.polls */
static PA_IPM_THREAD_LOCAL int no_room;         /* this thread found the accumulator list full */
static poll_thread_t *threads[PA_IPM_POLL_THREADS];
static atomic_int thread_count;

static void flush(pa_ipm_poll_t *run)
{
    if (run->calls == 0)
        return;
    uint64_t ticks = (uint64_t)((double)run->ticks * (double)run->calls / (double)run->timed + 0.5);
    pa_ipm_record_batch(run->region, pa_ipm_poll_calls[run->slot], run->calls, ticks, run->min,
                        run->max);
    *run = (pa_ipm_poll_t){.slot = run->slot, .region = run->region};
}

static poll_thread_t *this_thread(void)
{
    if (mine != NULL || no_room)
        return mine;
    int index = atomic_fetch_add(&thread_count, 1);
    poll_thread_t *created = index < PA_IPM_POLL_THREADS ? calloc(1, sizeof *created) : NULL;
    if (created == NULL) {
        no_room = 1;
        return NULL;
    }
    for (int slot = 0; slot < PA_IPM_POLL_CALLS; slot++)
        created->runs[slot].slot = slot;
    threads[index] = created; /* read only at the end, after the threads have stopped polling */
    pa_ipm_self.polls = created->runs;
    return mine = created;
}

pa_ipm_poll_t *pa_ipm_poll_start_slow(int slot)
{
    poll_thread_t *thread = pa_ipm_active ? this_thread() : NULL;
    if (thread == NULL)
        return NULL;
    pa_ipm_poll_t *run = &thread->runs[slot];
    int region = pa_ipm_current_region();
    if (run->region != region) {
        flush(run);
        run->region = region;
    }
    return run;
}

void pa_ipm_poll_timed(pa_ipm_poll_t *run, uint64_t ticks)
{
    if (run->timed == 0 || ticks < run->min)
        run->min = ticks;
    if (ticks > run->max)
        run->max = ticks;
    run->timed++;
    run->ticks += ticks;
}

void pa_ipm_flush_polls(void)
{
    int count = atomic_load(&thread_count);
    for (int t = 0; t < count && t < PA_IPM_POLL_THREADS; t++)
        for (int slot = 0; threads[t] && slot < PA_IPM_POLL_CALLS; slot++)
            flush(&threads[t]->runs[slot]);
}
