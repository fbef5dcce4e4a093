/* The event path of perfatlas-ipm: every shim's event into a record table.
 *
 * A table is a fixed-size open-addressing hash table keyed by (region, call, size bucket, peer as
 * a rank of MPI_COMM_WORLD, call site: ipm.h); each record keeps the event count, the exact bytes and the total,
 * minimum and maximum time. Memory is fixed (no allocation after a thread's first event): when no
 * slot is left, an event is folded into the table's overflow record, whose count the profile
 * gives, so nothing is dropped silently.
 *
 * Threads (MPI_THREAD_MULTIPLE): each thread records into a table of its own -- the thread that
 * called MPI_Init into pa_ipm.table, the others into one allocated at their first event -- so the
 * path takes no lock and makes no atomic read-modify-write; at the end the tables are merged into
 * pa_ipm.table (per-thread buffers merged once, as Score-P keeps its locations). A program with one
 * thread gets exactly the table a single shared one would hold. Threads beyond
 * PA_IPM_MAX_TABLES, or whose table could not be allocated, share one table under the lock.
 *
 * The merge must not read a table while its owner updates it (a thread may still do I/O when the
 * program exits without MPI_Finalize). The owner raises its table's `busy` flag, then checks
 * pa_ipm_active; the merger clears pa_ipm_active, then waits until no flag is raised. That
 * handshake needs a store-load barrier on both sides (Dekker); the owner's, paid on every event,
 * is moved to the merger by membarrier(2) (MEMBARRIER_CMD_PRIVATE_EXPEDITED: a full barrier on
 * every running thread of the process, the asymmetric fence of userspace RCU, Desnoyers et al.,
 * IEEE TPDS 2012). Where the kernel refuses it, the owner pays a fence. */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "table.h"

#define PA_IPM_MAX_TABLES 256 /* threads with a table of their own, the first included */

PA_IPM_THREAD_LOCAL pa_ipm_thread_t pa_ipm_self;

static _Atomic(pa_ipm_table_t *) tables[PA_IPM_MAX_TABLES]; /* [0]: &pa_ipm.table */
static atomic_int table_count;
static pa_ipm_table_t shared; /* threads without a table of their own, under the lock */
static int owner_fences;      /* membarrier(2) unavailable: the owners pay the barrier */
static int rank_cache_key = MPI_KEYVAL_INVALID;

/* A communicator's ranks as ranks of MPI_COMM_WORLD, cached on the communicator as an MPI
 * attribute (freed with it): translated once per communicator, not once per call. */
static int free_rank_cache(MPI_Comm comm, int key, void *cache, void *extra)
{
    (void)comm, (void)key, (void)extra;
    free(cache);
    return MPI_SUCCESS;
}

void pa_ipm_record_start(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_rank_cache, &rank_cache_key, NULL);
    owner_fences = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0;
    atomic_store(&tables[0], &pa_ipm.table);
    atomic_store(&table_count, 1);
    pa_ipm_self.table = &pa_ipm.table;
}

/* This thread's table, made at its first event: its own, or the shared one. */
static __attribute__((noinline)) pa_ipm_table_t *adopt_table(void)
{
    int index = atomic_fetch_add(&table_count, 1);
    pa_ipm_table_t *made = index < PA_IPM_MAX_TABLES ? calloc(1, sizeof *made) : NULL;
    if (made != NULL)
        atomic_store_explicit(&tables[index], made, memory_order_release);
    return pa_ipm_self.table = made != NULL ? made : &shared;
}

static int *rank_cache(MPI_Comm comm)
{
    int *cache = NULL, found = 0, inter = 0;
    PMPI_Comm_get_attr(comm, rank_cache_key, &cache, &found);
    if (found)
        return cache;
    MPI_Group group;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
        MPI_SUCCESS)
        return NULL;
    cache = pa_ipm_world_ranks(group);
    if (cache != NULL)
        PMPI_Comm_set_attr(comm, rank_cache_key, cache);
    PMPI_Group_free(&group);
    return cache;
}

/* A peer rank of a communicator other than MPI_COMM_WORLD as a rank of MPI_COMM_WORLD (-1 for
 * none); an intercommunicator's peer is a rank of its remote group. */
static int translated_peer(int peer, MPI_Comm comm)
{
    const int *cache = rank_cache(comm);
    if (cache == NULL)
        return -1;
    return cache[peer] == MPI_UNDEFINED ? -1 : cache[peer];
}

/* Size bucket: the bit length of bytes, so bucket b holds [2^(b-1), 2^b) bytes and 0 holds 0. */
static inline int size_bucket(uint64_t bytes) { return bytes ? 64 - __builtin_clzll(bytes) : 0; }

static inline uint64_t mix(uint64_t key)
{
    key ^= key >> 33; /* murmur3's finalizer */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    return key ^ (key >> 33);
}

static inline uint64_t key_hash(int region, int call, int bucket, int peer,
                                const pa_ipm_site_t *site)
{
    uint64_t key = ((uint64_t)(uint32_t)peer << 32) ^ ((uint64_t)region << 16) ^
                   ((uint64_t)call << 7) ^ (uint64_t)bucket;
    for (int frame = 0; frame < pa_ipm_sites.depth; frame++)
        key = mix(key ^ site->frames[frame]);
    return mix(key);
}

/* The same frames after the first (a deeper stack); `b` NULL: a site of one frame. */
static inline int same_callers(const pa_ipm_site_t *a, const pa_ipm_site_t *b)
{
    for (int frame = 1; frame < pa_ipm_sites.depth; frame++)
        if (a->frames[frame] != (b ? b->frames[frame] : 0))
            return 0;
    return 1;
}

static inline int same_site(const pa_ipm_site_t *a, const pa_ipm_site_t *b)
{
    return a->frames[0] == b->frames[0] && same_callers(a, b);
}

/* The slot where a key's probing starts: the hash mapped onto [0, capacity) by a multiply and a
 * shift (Lemire, "Fast random integer generation in an interval", ACM TOMACS 2019), not by a
 * 64-bit division, which costs 35-90 cycles on many x86 cores. */
static inline int first_slot(uint64_t hash, int capacity)
{
    return (int)(((unsigned __int128)hash * (uint64_t)capacity) >> 64);
}

/* The record of this key in `table` (added if new), or its overflow record when it is full.
 * Linear probing, wrapping at the end of the table. */
static __attribute__((noinline)) pa_ipm_record_t *
find(pa_ipm_table_t *table, int region, int call, int bucket, int world, const pa_ipm_site_t *site)
{
    int capacity = pa_ipm.capacity;
    int index = first_slot(key_hash(region, call, bucket, world, site), capacity);
    for (int probe = 0; probe < capacity; probe++) {
        pa_ipm_record_t *slot = &table->records[index];
        if (!slot->used) {
            *slot = (pa_ipm_record_t){.region = region,
                                      .call = call,
                                      .bucket = bucket,
                                      .peer = world,
                                      .site = *site,
                                      .used = 1};
            table->used++;
            return slot;
        }
        if (slot->region == region && slot->call == call && slot->bucket == bucket &&
            slot->peer == world && same_site(&slot->site, site))
            return slot;
        if (++index == capacity)
            index = 0;
    }
    return &table->overflow;
}

/* `count` events of `bytes` in all, taking ticks_total, the least ticks_min, the most ticks_max. */
static inline void add(pa_ipm_record_t *record, uint64_t count, uint64_t bytes,
                       uint64_t ticks_total, uint64_t ticks_min, uint64_t ticks_max)
{
    if (record->count == 0 || ticks_min < record->ticks_min)
        record->ticks_min = ticks_min;
    if (ticks_max > record->ticks_max)
        record->ticks_max = ticks_max;
    record->count += count;
    record->bytes += bytes;
    record->ticks_total += ticks_total;
}

/* The events of a key into `table`, unless the profiler has stopped: the handshake with the merge
 * around the update (the header comment). */
static inline void update(pa_ipm_table_t *table, pa_ipm_record_t *latest, int region, int call,
                          int bucket, int world, const pa_ipm_site_t *site, uint64_t count,
                          uint64_t bytes, uint64_t ticks_total, uint64_t ticks_min,
                          uint64_t ticks_max)
{
    atomic_store_explicit(&table->busy, 1, memory_order_relaxed);
    if (owner_fences)
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst); /* the merger's membarrier is the barrier */
    if (pa_ipm_active) {
        if (latest == NULL) {
            latest = find(table, region, call, bucket, world, site);
            if (latest != &table->overflow) /* its key is no key: never the latest */
                table->last[call] = latest;
        }
        add(latest, count, bytes, ticks_total, ticks_min, ticks_max);
    }
    atomic_store_explicit(&table->busy, 0, memory_order_release);
}

/* The events of a key whose record is not its call's latest, or of a thread with no table of its
 * own yet: out of line, so that the common path needs no stack frame. */
static __attribute__((noinline)) void record_slow(int region, int call, int bucket, int world,
                                                  uintptr_t first, const pa_ipm_site_t *deep,
                                                  uint64_t count, uint64_t bytes,
                                                  uint64_t ticks_total, uint64_t ticks_min,
                                                  uint64_t ticks_max)
{
    pa_ipm_site_t one = {.frames = {first}};
    const pa_ipm_site_t *site = deep ? deep : &one;
    pa_ipm_table_t *table = pa_ipm_self.table;
    if (table == NULL)
        table = adopt_table();
    if (table != &shared) {
        update(table, NULL, region, call, bucket, world, site, count, bytes, ticks_total, ticks_min,
               ticks_max);
        return;
    }
    pa_ipm_lock(); /* shared.last stays empty: its events always come here */
    if (pa_ipm_active)
        add(find(&shared, region, call, bucket, world, site), count, bytes, ticks_total, ticks_min,
            ticks_max);
    pa_ipm_unlock();
}

/* The key's record in this thread's table gets the events. Calls repeat their key (region, size,
 * peer, site), so each call's latest record is asked first: then the hash and the probe are
 * skipped (records never move). A site is its first frame and, for a deeper stack, `deep` (NULL:
 * a site of one frame), so that the common event path passes no site in memory. */
static inline void record(int region, int call, int bucket, int world, uintptr_t first,
                          const pa_ipm_site_t *deep, uint64_t count, uint64_t bytes,
                          uint64_t ticks_total, uint64_t ticks_min, uint64_t ticks_max)
{
    pa_ipm_table_t *table = pa_ipm_self.table;
    pa_ipm_record_t *latest = table ? table->last[call] : NULL;
    if (latest && latest->region == region && latest->bucket == bucket && latest->peer == world &&
        latest->site.frames[0] == first &&
        (pa_ipm_sites.depth <= 1 || same_callers(&latest->site, deep)))
        update(table, latest, region, call, bucket, world, NULL, count, bytes, ticks_total,
               ticks_min, ticks_max);
    else
        record_slow(region, call, bucket, world, first, deep, count, bytes, ticks_total, ticks_min,
                    ticks_max);
}

/* An event with a peer of a communicator other than MPI_COMM_WORLD (out of line: it asks MPI). */
static __attribute__((noinline)) void record_translated(int region, uintptr_t first,
                                                        const pa_ipm_site_t *deep, int call,
                                                        uint64_t bytes, int peer, MPI_Comm comm,
                                                        uint64_t ticks)
{
    record(region, call, size_bucket(bytes), translated_peer(peer, comm), first, deep, 1, bytes,
           ticks, ticks, ticks);
}

static inline void record_event(int region, uintptr_t first, const pa_ipm_site_t *deep, int call,
                                uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks)
{
    if (!pa_ipm_active) /* before MPI_Init (MPI_Initialized), after the end */
        return;
    if (peer >= 0 && comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD)
        record_translated(region, first, deep, call, bytes, peer, comm, ticks);
    else
        record(region, call, size_bucket(bytes), peer < 0 || comm == MPI_COMM_NULL ? -1 : peer,
               first, deep, 1, bytes, ticks, ticks, ticks);
}

void pa_ipm_record_at(int region, const pa_ipm_site_t *site, int call, uint64_t bytes, int peer,
                      MPI_Comm comm, uint64_t ticks)
{
    record_event(region, site->frames[0], site, call, bytes, peer, comm, ticks);
}

/* A call whose site is more than its caller (a deeper stack, MPICH's Fortran binding). */
static __attribute__((noinline)) void
record_unwound(int call, uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks, uintptr_t caller)
{
    pa_ipm_site_t site;
    pa_ipm_site_stack(&site, caller);
    record_event(pa_ipm_self.region, site.frames[0], &site, call, bytes, peer, comm, ticks);
}

void pa_ipm_record(int call, uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks,
                   const void *caller)
{
    uintptr_t at = (uintptr_t)caller;
    if (__builtin_expect(--pa_ipm_self.cpu_countdown == 0, 0))
        pa_ipm_cpu_sample();
    if (__builtin_expect(pa_ipm_unwinds(at), 0))
        record_unwound(call, bytes, peer, comm, ticks, at);
    else
        record_event(pa_ipm_self.region, at & pa_ipm_sites.mask, NULL, call, bytes, peer, comm,
                     ticks);
}

void pa_ipm_record_batch(int region, uintptr_t first, int call, uint64_t events,
                         uint64_t ticks_total, uint64_t ticks_min, uint64_t ticks_max)
{
    record(region, call, size_bucket(0), PA_IPM_NO_PEER, first, NULL, events, 0, ticks_total,
           ticks_min, ticks_max);
}

/* Every record of `from` added to pa_ipm.table's record of its key. */
static void fold(const pa_ipm_table_t *from)
{
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *r = &from->records[slot];
        if (r->used)
            add(find(&pa_ipm.table, r->region, r->call, r->bucket, r->peer, &r->site), r->count,
                r->bytes, r->ticks_total, r->ticks_min, r->ticks_max);
    }
    const pa_ipm_record_t *o = &from->overflow;
    if (o->count > 0)
        add(&pa_ipm.table.overflow, o->count, o->bytes, o->ticks_total, o->ticks_min, o->ticks_max);
}

void pa_ipm_merge_tables(void)
{
    if (!owner_fences)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    else
        atomic_thread_fence(memory_order_seq_cst);
    int count = atomic_load(&table_count);
    for (int t = 0; t < count && t < PA_IPM_MAX_TABLES; t++) {
        pa_ipm_table_t *table = atomic_load_explicit(&tables[t], memory_order_acquire);
        /* Its owner passed the pa_ipm_active check before it was cleared. Not this thread's own
         * table: interrupted in an update by a signal whose handler exits, it would wait forever. */
        while (table != NULL && table != pa_ipm_self.table &&
               atomic_load_explicit(&table->busy, memory_order_acquire))
            ;
        if (table != NULL && t > 0)
            fold(table);
    }
    pa_ipm_lock();
    fold(&shared);
    pa_ipm_unlock();
}
