/* Nonblocking receives: a posted MPI_Irecv is remembered by its request handle until a Wait or
 * Test call completes it; then its event is recorded with the bytes and the source its status
 * gives (a wildcard receive's real source), in the region where it was posted, with the time of
 * the post. The Wait and Test shims are written here by hand (CUSTOM in calls.def).
 *
 * The pending receives live in a fixed open-addressing table with linear probing and
 * backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm R). Under MPI_THREAD_MULTIPLE it is
 * updated under the table lock; at the lower thread levels only one thread at a time is inside
 * MPI (MPI-3.1, 12.4.3), which serializes the updates already, so no lock is taken. Its count is
 * atomic, read without the lock, and written only by whoever updates the table. When it is
 * full, a receive is recorded at its post with the posted capacity and counted as untracked.
 * Completions snapshot the request handles first (completion overwrites them with
 * MPI_REQUEST_NULL), and substitute real statuses for MPI_STATUS(ES)_IGNORE, only while some
 * receive is pending: with none, a Wait costs what any shim costs.
 *
 * A handle can be pending twice. Under MPI_THREAD_MULTIPLE, the MPI library frees a completed
 * request inside PMPI_Wait*, and another thread's MPI_Irecv can get the same handle and post it
 * before the completing thread takes its entry; a request freed while active (MPI_Request_free)
 * leaves its entry until MPI_Finalize records it as posted. So each post is numbered, a
 * completion notes the number of the last post before its PMPI call, and takes the newest entry
 * of its handle posted no later: its own, never the one posted while it waited (which would lose
 * that receive: 1-3 % of them with 8 threads of Irecv + Isend + Waitall). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "timer.h"

#define PA_IPM_PENDING_BITS   10
#define PA_IPM_MAX_PENDING    (1 << PA_IPM_PENDING_BITS)
#define PA_IPM_STACK_REQUESTS 64

typedef struct {
    uint64_t handle; /* the request's bits; 0 = free */
    uint64_t post;   /* its number among the posts (posts) */
    int call, region, peer;
    MPI_Comm comm;
    uint64_t posted_bytes, ticks;
    pa_ipm_site_t site; /* where it was posted */
} pending_t;

static pending_t pending[PA_IPM_MAX_PENDING];
static atomic_int pending_count;
static _Atomic uint64_t posts; /* receives posted so far: the number of the last one */

/* The lock of the pending table, where MPI calls may run at once (MPI_THREAD_MULTIPLE). */
static void pending_lock(void)
{
    if (pa_ipm.thread_multiple)
        pa_ipm_lock();
}

static void pending_unlock(void)
{
    if (pa_ipm.thread_multiple)
        pa_ipm_unlock();
}

/* The count changes only under pending_lock(): a load and a store, not a locked add. */
static void count_pending(int change)
{
    atomic_store_explicit(&pending_count,
                          atomic_load_explicit(&pending_count, memory_order_relaxed) + change,
                          memory_order_relaxed);
}

static uint64_t handle_bits(MPI_Request request) { return PA_IPM_HANDLE_BITS(request); }

static unsigned home_slot(uint64_t bits)
{
    return pa_ipm_fibonacci_slot(bits, PA_IPM_PENDING_BITS);
}

void pa_ipm_post(MPI_Request request, int call, uint64_t posted_bytes, int peer, MPI_Comm comm,
                 uint64_t ticks, const void *caller)
{
    if (!pa_ipm_active)
        return;
    uint64_t bits = handle_bits(request);
    int region = pa_ipm_current_region();
    pa_ipm_site_t site;
    pa_ipm_site(&site, caller);
    pending_lock();
    int full = atomic_load(&pending_count) == PA_IPM_MAX_PENDING - 1; /* keep one slot free */
    if (!full) {
        unsigned slot = home_slot(bits);
        while (pending[slot].handle != 0) /* after any entry of the same handle (see above) */
            slot = (slot + 1) & (PA_IPM_MAX_PENDING - 1);
        count_pending(1);
        uint64_t post = atomic_load_explicit(&posts, memory_order_relaxed) + 1; /* locked */
        atomic_store_explicit(&posts, post, memory_order_relaxed);
        pending[slot] =
            (pending_t){bits, post, call, region, peer, comm, posted_bytes, ticks, site};
    } else {
        pa_ipm.untracked_receives++;
    }
    pending_unlock();
    if (full)
        pa_ipm_record_at(region, &site, call, posted_bytes, peer, comm, ticks);
}

/* Removes into *found the newest pending receive with these bits posted no later than post
 * number `seen`; 0 when there is none. */
static int take(uint64_t bits, uint64_t seen, pending_t *found)
{
    pending_lock();
    unsigned slot = 0;
    int hit = 0;
    for (unsigned probe = home_slot(bits); pending[probe].handle != 0;
         probe = (probe + 1) & (PA_IPM_MAX_PENDING - 1)) {
        if (pending[probe].handle == bits && pending[probe].post <= seen &&
            (!hit || pending[probe].post > pending[slot].post)) {
            slot = probe;
            hit = 1;
        }
    }
    if (hit) {
        *found = pending[slot];
        /* Algorithm R: move later entries of the probe run back into the hole. */
        unsigned hole = slot, next = slot;
        for (;;) {
            next = (next + 1) & (PA_IPM_MAX_PENDING - 1);
            if (pending[next].handle == 0)
                break;
            unsigned home = home_slot(pending[next].handle);
            /* next may move to hole unless its home lies cyclically in (hole, next]. */
            if (hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)) {
                pending[hole] = pending[next];
                hole = next;
            }
        }
        pending[hole].handle = 0;
        count_pending(-1);
    }
    pending_unlock();
    return hit;
}

/* The request with these bits, waited for after post number `seen`, completed with `status`:
 * record its receive if it was one. */
static void complete(uint64_t bits, uint64_t seen, const MPI_Status *status)
{
    pending_t receive;
    if (bits == handle_bits(MPI_REQUEST_NULL) || !take(bits, seen, &receive))
        return;
    pa_ipm_record_at(receive.region, &receive.site, receive.call, pa_ipm_received(status),
                     status->MPI_SOURCE, receive.comm, receive.ticks);
}

void pa_ipm_flush_posted(void)
{
    for (int slot = 0; slot < PA_IPM_MAX_PENDING; slot++) {
        const pending_t *left = &pending[slot];
        if (left->handle != 0)
            pa_ipm_record_at(left->region, &left->site, left->call, left->posted_bytes, left->peer,
                             left->comm, left->ticks);
    }
    memset(pending, 0, sizeof pending);
    atomic_store(&pending_count, 0);
}

/* The requests of one Wait or Test call, and the statuses they complete with. */
typedef struct {
    int tracking;  /* some receive is pending: handles and statuses are kept */
    uint64_t seen; /* the number of the last post before the call */
    uint64_t *bits;
    MPI_Status *statuses; /* what the PMPI_ call gets */
    uint64_t bits_stack[PA_IPM_STACK_REQUESTS];
    MPI_Status status_stack[PA_IPM_STACK_REQUESTS];
} snapshot_t;

/* Snapshots `count` requests; returns the statuses to pass on (the caller's, or our own where the
 * caller ignores them). */
static MPI_Status *snapshot_take(snapshot_t *s, int count, const MPI_Request *requests,
                                 MPI_Status *caller, int ignored)
{
    s->tracking = atomic_load(&pending_count) > 0 && count > 0;
    s->bits = s->bits_stack;
    s->statuses = caller;
    if (!s->tracking)
        return caller;
    s->seen = atomic_load_explicit(&posts, memory_order_relaxed);
    if (count > PA_IPM_STACK_REQUESTS) {
        s->bits = malloc((size_t)count * sizeof *s->bits);
        s->statuses = ignored ? malloc((size_t)count * sizeof *s->statuses) : caller;
        if (s->bits == NULL || s->statuses == NULL) { /* out of memory: pass the call through */
            if (ignored)
                free(s->statuses);
            free(s->bits);
            s->bits = s->bits_stack;
            s->statuses = caller;
            s->tracking = 0;
            return caller;
        }
    } else if (ignored) {
        s->statuses = s->status_stack;
    }
    for (int i = 0; i < count; i++)
        s->bits[i] = handle_bits(requests[i]);
    return s->statuses;
}

/* Request `index` completed with status number `slot` of the snapshot. */
static void snapshot_complete(const snapshot_t *s, int index, int slot)
{
    if (s->tracking && index >= 0 && index != MPI_UNDEFINED)
        complete(s->bits[index], s->seen, &s->statuses[slot]);
}

static void snapshot_release(snapshot_t *s, const MPI_Status *caller)
{
    if (s->bits != s->bits_stack)
        free(s->bits);
    if (s->statuses != caller && s->statuses != s->status_stack)
        free(s->statuses);
}

#define PA_IPM_COMPLETION(name, call)                                                  \
    pa_ipm_self.in_mpi++;                                                              \
    uint64_t start = pa_ticks_unfenced();                                              \
    int code = call;                                                                   \
    pa_ipm_record(PA_IPM_ID_##name, 0, -1, MPI_COMM_NULL, pa_ticks_unfenced() - start, \
                  PA_IPM_CALLER());                                                    \
    pa_ipm_self.in_mpi--

/* A Test call: counted in this thread's poll run and timed when the run says so (polls.c); timed
 * and recorded like any call when there is no run. */
#define PA_IPM_POLL(name, slot, call)                                                      \
    pa_ipm_poll_t *run = pa_ipm_poll_start(slot, PA_IPM_CALLER());                         \
    int timed = run == NULL || pa_ipm_poll_counts(run);                                    \
    pa_ipm_self.in_mpi++;                                                                  \
    uint64_t start = timed ? pa_ticks_unfenced() : 0;                                      \
    int code = call;                                                                       \
    if (timed && run)                                                                      \
        pa_ipm_poll_timed(run, pa_ticks_unfenced() - start);                               \
    else if (timed)                                                                        \
        pa_ipm_record(PA_IPM_ID_##name, 0, -1, MPI_COMM_NULL, pa_ticks_unfenced() - start, \
                      PA_IPM_CALLER());                                                    \
    pa_ipm_self.in_mpi--

PA_IPM_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    snapshot_t s;
    MPI_Status *statuses = snapshot_take(&s, 1, request, status, status == MPI_STATUS_IGNORE);
    PA_IPM_COMPLETION(MPI_Wait, PMPI_Wait(request, statuses));
    snapshot_complete(&s, 0, 0);
    return code;
}

PA_IPM_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    snapshot_t s;
    MPI_Status *statuses = snapshot_take(&s, 1, request, status, status == MPI_STATUS_IGNORE);
    PA_IPM_POLL(MPI_Test, 0, PMPI_Test(request, flag, statuses));
    if (*flag)
        snapshot_complete(&s, 0, 0);
    return code;
}

PA_IPM_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    snapshot_t s;
    MPI_Status *statuses = snapshot_take(&s, count, requests, status, status == MPI_STATUS_IGNORE);
    PA_IPM_COMPLETION(MPI_Waitany, PMPI_Waitany(count, requests, index, statuses));
    snapshot_complete(&s, *index, 0);
    snapshot_release(&s, status);
    return code;
}

PA_IPM_EXPORT int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                              MPI_Status *status)
{
    snapshot_t s;
    MPI_Status *statuses = snapshot_take(&s, count, requests, status, status == MPI_STATUS_IGNORE);
    PA_IPM_POLL(MPI_Testany, 1, PMPI_Testany(count, requests, index, flag, statuses));
    if (*flag)
        snapshot_complete(&s, *index, 0);
    snapshot_release(&s, status);
    return code;
}

PA_IPM_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    snapshot_t s;
    MPI_Status *kept =
        snapshot_take(&s, count, requests, statuses, statuses == MPI_STATUSES_IGNORE);
    PA_IPM_COMPLETION(MPI_Waitall, PMPI_Waitall(count, requests, kept));
    for (int i = 0; i < count; i++)
        snapshot_complete(&s, i, i);
    snapshot_release(&s, statuses);
    return code;
}

PA_IPM_EXPORT int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    snapshot_t s;
    MPI_Status *kept =
        snapshot_take(&s, count, requests, statuses, statuses == MPI_STATUSES_IGNORE);
    PA_IPM_POLL(MPI_Testall, 2, PMPI_Testall(count, requests, flag, kept));
    for (int i = 0; *flag && i < count; i++)
        snapshot_complete(&s, i, i);
    snapshot_release(&s, statuses);
    return code;
}

PA_IPM_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[])
{
    snapshot_t s;
    MPI_Status *kept =
        snapshot_take(&s, incount, requests, statuses, statuses == MPI_STATUSES_IGNORE);
    PA_IPM_COMPLETION(MPI_Waitsome, PMPI_Waitsome(incount, requests, outcount, indices, kept));
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        snapshot_complete(&s, indices[i], i);
    snapshot_release(&s, statuses);
    return code;
}

PA_IPM_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                               MPI_Status statuses[])
{
    snapshot_t s;
    MPI_Status *kept =
        snapshot_take(&s, incount, requests, statuses, statuses == MPI_STATUSES_IGNORE);
    PA_IPM_POLL(MPI_Testsome, 3, PMPI_Testsome(incount, requests, outcount, indices, kept));
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        snapshot_complete(&s, indices[i], i);
    snapshot_release(&s, statuses);
    return code;
}
