/* Polls: the Test family is called in progress loops tens of millions of times (hpcc's
 * RandomAccess polls MPI_Testany every few tens of nanoseconds), where reading the timestamp
 * counter twice per call -- about 10 ns per read on a virtual machine -- and updating the shared
 * table would be most of the program's run time. So their events go to a per-thread accumulator:
 * every call is counted; the first PA_IPM_POLL_EXACT calls of each (region, call) run are timed,
 * then one call in PA_IPM_POLL_EVERY on average, each gap drawn uniformly from
 * 1 .. 2 PA_IPM_POLL_EVERY - 1. Random gaps, not every k-th call: the cost of a poll can be
 * periodic in the call count (an MPI library that runs its event loop every n-th progress call),
 * and a fixed stride that shares a factor with that period samples some phases always and others
 * never. A run is one (region, call site) of the call: it enters the table at the thread's next
 * poll of that call in another region or from another site, or at the end, as
 * one batch whose time is the exact time of its first calls plus the mean of the sampled calls
 * times the calls after those (a stratified estimate; exact for runs of up to PA_IPM_POLL_EXACT
 * calls). A timed poll's ticks are less the timer's own cost (the median of back-to-back reads,
 * measured at MPI_Init): a sampled call pays it, the calls it stands for do not, and for a poll of
 * ~15 ns its ~7 ns would inflate the estimate by half (overhead compensation: Malony & Shende,
 * 2004). The profile document says so ("poll_sampling", docs/profile.md). Completions are still
 * tracked call by call (requests.c): only the timing of the poll itself is sampled. */
#include <stdatomic.h>
#include <stdlib.h>

#include "table.h"
#include "timer.h"

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
static uint64_t timer_cost; /* ticks of an empty timed interval (pa_ipm_polls_calibrate) */

void pa_ipm_polls_calibrate(void) { timer_cost = pa_ticks_unfenced_cost(); }

/* The run's time: its first calls' exactly, the calls after those at the mean of the sampled
 * ones (at the exact calls' mean until one is sampled). */
static uint64_t estimated_ticks(const pa_ipm_poll_t *run)
{
    uint64_t exact = run->calls < PA_IPM_POLL_EXACT ? run->calls : PA_IPM_POLL_EXACT;
    uint64_t sampled = run->timed - exact;
    double mean = sampled ? (double)(run->ticks - run->exact_ticks) / (double)sampled
                          : (double)run->exact_ticks / (double)exact;
    return run->exact_ticks + (uint64_t)(mean * (double)(run->calls - exact) + 0.5);
}

static void flush(pa_ipm_poll_t *run)
{
    if (run->calls == 0)
        return;
    pa_ipm_record_batch(run->region, run->site, pa_ipm_poll_calls[run->slot], run->calls,
                        estimated_ticks(run), run->min, run->max);
    *run = (pa_ipm_poll_t){.slot = run->slot, .region = run->region, .site = run->site};
}

/* The calls to the next sampled one: uniform on 1 .. 2 PA_IPM_POLL_EVERY - 1 (mean
 * PA_IPM_POLL_EVERY), from xorshift64* (Vigna, ACM TOMS 2016), seeded per run so that a
 * program's sampling is the same from one execution to the next. */
static int gap(pa_ipm_poll_t *run)
{
    if (run->random == 0)
        run->random = 0x9e3779b97f4a7c15ull ^ ((uint64_t)run->slot << 32 | (uint32_t)run->region);
    run->random ^= run->random >> 12;
    run->random ^= run->random << 25;
    run->random ^= run->random >> 27;
    uint64_t draw = (run->random * 0x2545f4914f6cdd1dull) >> 32;
    return 1 + (int)(draw % (2 * PA_IPM_POLL_EVERY - 1));
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

/* A run is keyed by one frame: a site that is unwound (a deeper stack, a caller in MPICH's
 * Fortran binding) is no run's; such polls are recorded call by call. */
pa_ipm_poll_t *pa_ipm_poll_start_slow(int slot, const void *caller)
{
    uintptr_t site = (uintptr_t)caller & pa_ipm_sites.mask;
    poll_thread_t *thread =
        pa_ipm_active && !pa_ipm_unwinds((uintptr_t)caller) ? this_thread() : NULL;
    if (thread == NULL)
        return NULL;
    pa_ipm_poll_t *run = &thread->runs[slot];
    int region = pa_ipm_current_region();
    if (run->region != region || run->site != site) {
        flush(run);
        run->region = region;
        run->site = site;
    }
    return run;
}

void pa_ipm_poll_timed(pa_ipm_poll_t *run, uint64_t ticks)
{
    ticks = ticks > timer_cost ? ticks - timer_cost : 0;
    if (run->timed == 0 || ticks < run->min)
        run->min = ticks;
    if (ticks > run->max)
        run->max = ticks;
    if (run->timed < PA_IPM_POLL_EXACT)
        run->exact_ticks += ticks;
    run->timed++;
    run->ticks += ticks;
    run->countdown = run->timed < PA_IPM_POLL_EXACT ? 1 : gap(run);
}

void pa_ipm_flush_polls(void)
{
    int count = atomic_load(&thread_count);
    for (int t = 0; t < count && t < PA_IPM_POLL_THREADS; t++)
        for (int slot = 0; threads[t] && slot < PA_IPM_POLL_CALLS; slot++)
            flush(&threads[t]->runs[slot]);
}
