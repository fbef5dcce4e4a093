/* perfatlas-ipm: an IPM-style PMPI profiler (shared between the shims and the core). */
#ifndef PA_IPM_H
#define PA_IPM_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

/* The kinds of calls.def: how a call's shim is shaped and what its events mean. */
enum pa_ipm_kind {
    PA_IPM_KIND_SEND,    /* point-to-point send: bytes to `peer` (the communication matrix) */
    PA_IPM_KIND_RECV,    /* blocking receive: bytes and source from the status */
    PA_IPM_KIND_IRECV,   /* nonblocking receive: bytes and source when its request completes */
    PA_IPM_KIND_COLL,    /* blocking collective: load imbalance (LBST) applies */
    PA_IPM_KIND_PUT,     /* one-sided transfer to `peer` (the communication matrix) */
    PA_IPM_KIND_IO,      /* MPI-IO */
    PA_IPM_KIND_IO_READ, /* MPI-IO read: bytes from the status */
    PA_IPM_KIND_OTHER,   /* everything else */
    PA_IPM_KIND_CUSTOM,  /* MPI, shim written by hand (requests.c) */
    PA_IPM_KIND_POSIX,   /* POSIX or stdio I/O (posix.c) */
};

/* One id per recorded call: the MPI calls of calls.def, then the I/O calls of posix.def. */
enum pa_ipm_call_id {
#define PA_IPM_CALL(kind, ret, name, params, args, bytes, peer, comm) PA_IPM_ID_##name,
#include "calls.def"
#undef PA_IPM_CALL
#define PA_IPM_POSIX(name) PA_IPM_ID_##name,
#include "posix.def"
#undef PA_IPM_POSIX
    PA_IPM_NCALLS
};

extern const char *const pa_ipm_call_names[PA_IPM_NCALLS];
extern const unsigned char pa_ipm_call_kinds[PA_IPM_NCALLS];

/* The vocabulary of calls.def. */
#define PA_IPM_NO_PEER                (-1)
#define PA_IPM_NO_BYTES               ((uint64_t)0)
#define PA_IPM_BYTES(count, datatype) pa_ipm_bytes((count), (datatype))
#define PA_IPM_RECEIVED               pa_ipm_received(status) /* RECV, IO_READ: from the status */
#define PA_IPM_SOURCE                 (status->MPI_SOURCE) /* RECV: the rank the message came from */
#define PA_IPM_SENT(sendbuf, bytes)   ((sendbuf) == MPI_IN_PLACE ? PA_IPM_NO_BYTES : (bytes))
#define PA_IPM_AT_ROOT(root, comm, bytes) \
    (pa_ipm_is_root((root), (comm)) ? (bytes) : PA_IPM_NO_BYTES)
#define PA_IPM_BYTES_V(counts, datatype, comm) pa_ipm_bytes_v((comm), 0, (counts), NULL, (datatype))
#define PA_IPM_BYTES_W(counts, datatypes, comm) \
    pa_ipm_bytes_v((comm), 0, (counts), (datatypes), MPI_DATATYPE_NULL)
#define PA_IPM_NEIGHBOR_BYTES_V(counts, datatype, comm) \
    pa_ipm_bytes_v((comm), 1, (counts), NULL, (datatype))
#define PA_IPM_NEIGHBOR_BYTES_W(counts, datatypes, comm) \
    pa_ipm_bytes_v((comm), 1, (counts), (datatypes), MPI_DATATYPE_NULL)
#define PA_IPM_WINDOW_PEER(rank, win) pa_ipm_window_peer((rank), (win))

/* The size of one element of datatype in bytes, 0 for MPI_DATATYPE_NULL (types.c: cached). */
uint64_t pa_ipm_type_size(MPI_Datatype datatype);
/* count x the size of datatype, in bytes (0 for MPI_DATATYPE_NULL or a negative count). */
static inline uint64_t pa_ipm_bytes(int count, MPI_Datatype datatype)
{
    return count > 0 ? (uint64_t)count * pa_ipm_type_size(datatype) : 0;
}
/* The bytes a completed receive's status says arrived. */
uint64_t pa_ipm_received(const MPI_Status *status);
/* columns.c: the sum of counts[i] x the size of datatypes[i] (or of datatype) over the ranks a
 * collective on comm sends to (with `neighbors`: its topology's out neighbours); 1 when `root` is
 * this rank of comm (or MPI_ROOT); a rank of a window's group as a rank of MPI_COMM_WORLD. */
uint64_t pa_ipm_bytes_v(MPI_Comm comm, int neighbors, const int counts[],
                        const MPI_Datatype datatypes[], MPI_Datatype datatype);
int pa_ipm_is_root(int root, MPI_Comm comm);
int pa_ipm_window_peer(int rank, MPI_Win win);

/* The bits of an MPI handle (an int in MPICH, a pointer in Open MPI), as a key. */
#define PA_IPM_HANDLE_BITS(handle)                                                         \
    __extension__({                                                                        \
        uint64_t pa_bits = 0;                                                              \
        memcpy(&pa_bits, &(handle), sizeof(handle) < sizeof pa_bits ? sizeof(handle) : 8); \
        pa_bits;                                                                           \
    })
/* Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): a key's slot among 2^slot_bits. */
static inline unsigned pa_ipm_fibonacci_slot(uint64_t key, int slot_bits)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> (64 - slot_bits));
}

/* 1 once MPI_Init has returned and until the profile is written: events are recorded. */
extern int pa_ipm_active;
/* Thread-local storage of the profiler: initial-exec, a fixed offset from the thread pointer (no
 * __tls_get_addr call per access), valid because the library is preloaded or linked, not dlopened. */
#define PA_IPM_THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))

/* Call sites (sites.c): where a call was made, as the return addresses of its innermost
 * pa_ipm_sites.depth frames, the shim's caller first ($PERFATLAS_IPM_CALLSTACK: 0 = no sites,
 * 1 = the default, up to PA_IPM_MAX_FRAMES). Frames past the depth are 0. */
#define PA_IPM_MAX_FRAMES 8
typedef struct {
    uintptr_t frames[PA_IPM_MAX_FRAMES];
} pa_ipm_site_t;
/* What the event path reads of the settings, in one cache line. A caller is kept as
 * `caller & mask` (all ones; 0 without sites); a caller in [unwind_low, unwind_low + unwind_span)
 * is unwound instead: one in MPICH's Fortran binding (libmpichfort calls the C functions), and
 * at a depth above 1 every caller. */
typedef struct {
    uintptr_t mask, unwind_low, unwind_span;
    int depth;
} pa_ipm_sites_t;
extern pa_ipm_sites_t pa_ipm_sites;
static inline int pa_ipm_unwinds(uintptr_t caller)
{
    return caller - pa_ipm_sites.unwind_low < pa_ipm_sites.unwind_span;
}
void pa_ipm_site_stack(pa_ipm_site_t *site, uintptr_t caller); /* unwinds: out of line */
/* The whole site of a call whose shim was called from `caller`. */
static inline void pa_ipm_site(pa_ipm_site_t *site, const void *caller)
{
    uintptr_t at = (uintptr_t)caller;
    if (pa_ipm_unwinds(at))
        pa_ipm_site_stack(site, at);
    else
        *site = (pa_ipm_site_t){.frames = {at & pa_ipm_sites.mask}};
}

/* Polls (polls.c): the Test family, counted per thread, timed exactly for the first
 * PA_IPM_POLL_EXACT calls of a run and then one call in PA_IPM_POLL_EVERY, at random gaps. */
#define PA_IPM_POLL_CALLS 4
extern const int pa_ipm_poll_calls[PA_IPM_POLL_CALLS]; /* MPI_Test, Testany, Testall, Testsome */
#define PA_IPM_POLL_EXACT 64
#define PA_IPM_POLL_EVERY 256
typedef struct {
    int slot, region;
    uintptr_t site;           /* the caller (pa_ipm_site_t.frames[0]): a run is one site's */
    int countdown;            /* calls until the next timed one (<= 0: this one) */
    uint64_t random;          /* the gaps' generator (0: not seeded yet) */
    uint64_t calls, timed;    /* counted, timed */
    uint64_t exact_ticks;     /* of the first PA_IPM_POLL_EXACT calls, all timed */
    uint64_t ticks, min, max; /* of every timed call */
} pa_ipm_poll_t;
/* Whether the next call of `run` is timed (then pa_ipm_poll_timed gets its ticks, and sets the
 * countdown to the one after); counts it. */
static inline int pa_ipm_poll_counts(pa_ipm_poll_t *run)
{
    run->calls++;
    return --run->countdown <= 0;
}
/* What the event path reads of this thread, in one thread-local block (one thread-pointer offset,
 * not one per variable). */
struct pa_ipm_table;
typedef struct {
    int in_mpi; /* depth of MPI calls: I/O inside MPI (MPI-IO's own writes) is not counted twice */
    int region; /* the innermost region (0: outside every region), kept by table.c */
    struct pa_ipm_table *table; /* where this thread's events go (record.c); NULL until its first */
    pa_ipm_poll_t *polls;       /* this thread's poll runs, one per poll call (polls.c) */
    const void *caller; /* set by a Fortran entry point around its call of a shim (PA_IPM_CALLER) */
    uint64_t cpu_countdown; /* events until the next CPU sample (placement.c); other threads'
                               start at 0 and wrap: never sampled */
} pa_ipm_thread_t;
extern PA_IPM_THREAD_LOCAL pa_ipm_thread_t pa_ipm_self;

/* The return address into the code that called the running shim: the program's, or -- for a
 * call through one of the library's Fortran entry points, which set pa_ipm_self.caller -- the
 * Fortran program's call of that entry point, not the entry point's call of the shim. Only in
 * the shims themselves (exported functions, never inlined into their callers). */
#define PA_IPM_CALLER() \
    (pa_ipm_self.caller != NULL ? pa_ipm_self.caller : __builtin_return_address(0))

/* The CPU of the thread that called MPI_Init is sampled every PA_IPM_CPU_EVERY-th event of
 * its own (placement.c). */
#define PA_IPM_CPU_EVERY 4096
void pa_ipm_cpu_sample(void);

/* One event of `call` in `region` at `site` that moved `bytes` with `peer` (a rank of `comm`, or
 * negative for none) and took `ticks` timer ticks. Safe from any thread (record.c). A
 * nonblocking receive's event belongs where it was posted, so the region and site are arguments. */
void pa_ipm_record_at(int region, const pa_ipm_site_t *site, int call, uint64_t bytes, int peer,
                      MPI_Comm comm, uint64_t ticks);
/* The one function every shim calls: the event in this thread's innermost region, at the site
 * of `caller` (PA_IPM_CALLER() of the shim). Out of line, and the only call of the event path:
 * its six arguments travel in registers. */
void pa_ipm_record(int call, uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks,
                   const void *caller);
/* This thread's innermost region (0: outside every region). */
static inline int pa_ipm_current_region(void) { return pa_ipm_self.region; }

/* This thread's run of poll `slot` in its current region at the site `caller`; NULL when not
 * recording or when the site is more than its caller (then the shim records the call itself).
 * The common case inline: a run already in this region, at this site. */
pa_ipm_poll_t *pa_ipm_poll_start_slow(int slot, const void *caller);
static inline pa_ipm_poll_t *pa_ipm_poll_start(int slot, const void *caller)
{
    pa_ipm_poll_t *run = pa_ipm_self.polls ? &pa_ipm_self.polls[slot] : NULL;
    if (run != NULL && run->region == pa_ipm_self.region &&
        run->site == ((uintptr_t)caller & pa_ipm_sites.mask) && pa_ipm_active)
        return run;
    return pa_ipm_poll_start_slow(slot, caller);
}

void pa_ipm_poll_timed(pa_ipm_poll_t *run, uint64_t ticks);
void pa_ipm_polls_calibrate(void); /* the timer's own cost, which timed polls leave out */
void pa_ipm_flush_polls(void);     /* every thread's runs into the table, at the end */
/* `events` events of `call` in `region` at the one-frame site `first` at once, taking
 * ticks_total in all (polls.c). */
void pa_ipm_record_batch(int region, uintptr_t first, int call, uint64_t events,
                         uint64_t ticks_total, uint64_t ticks_min, uint64_t ticks_max);

/* Nonblocking receives (requests.c): remember a posted receive until its request completes. */
void pa_ipm_post(MPI_Request request, int call, uint64_t posted_bytes, int peer, MPI_Comm comm,
                 uint64_t ticks, const void *caller);
void pa_ipm_flush_posted(void); /* at the end: receives that never completed, as posted */

/* Lifecycle (lifecycle.c calls these; table.c implements them). */
void pa_ipm_start(void);
void pa_ipm_region(int level, const char *name);
void pa_ipm_close_regions(void); /* regions still open at the end are closed there */

/* Output: each rank's own document (rank.c), the aggregated profile and banner (aggregate.c). */
void pa_ipm_write_rank(const char *partial_reason);
void pa_ipm_write_profile(void);

#define PA_IPM_EXPORT __attribute__((visibility("default")))

#endif
