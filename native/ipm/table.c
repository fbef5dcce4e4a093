/* The state of perfatlas-ipm shared by its parts (pa_ipm), and its regions.
 *
 * The record tables and the event path are record.c's. Updates of the shared state after MPI_Init
 * (regions, their error counters, the pending receives of requests.c) happen under one spinlock
 * (a C11 atomic_flag), held for a few dozen instructions. Region stacks are per thread
 * (_Thread_local): MPI_Pcontrol in one thread places that thread's calls. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "counters.h"
#include "names.h"
#include "placement.h"
#include "sites.h"
#include "table.h"
#include "timer.h"

const char *const pa_ipm_call_names[PA_IPM_NCALLS] = {
#define PA_IPM_CALL(kind, ret, name, params, args, bytes, peer, comm) #name,
#include "calls.def"
#undef PA_IPM_CALL
#define PA_IPM_POSIX(name) #name,
#include "posix.def"
#undef PA_IPM_POSIX
};

const unsigned char pa_ipm_call_kinds[PA_IPM_NCALLS] = {
#define PA_IPM_CALL(kind, ret, name, params, args, bytes, peer, comm) PA_IPM_KIND_##kind,
#include "calls.def"
#undef PA_IPM_CALL
#define PA_IPM_POSIX(name) PA_IPM_KIND_POSIX,
#include "posix.def"
#undef PA_IPM_POSIX
};

pa_ipm_state_t pa_ipm = {.capacity = PA_IPM_MAX_RECORDS,
                         .regions = {{.name = "", .parent = -1}},
                         .region_count = 1,
                         .rank = -1,
                         .comm = MPI_COMM_NULL};
int pa_ipm_active;

static atomic_flag table_lock = ATOMIC_FLAG_INIT;

/* This thread's open regions; depth may exceed PA_IPM_MAX_DEPTH (deeper levels are counted in
 * too_deep, not kept: their events and time are the deepest kept region's). */
typedef struct {
    int id;   /* where its events go: the region, or the enclosing one when the table was full */
    int kept; /* the region has a slot of the region table: it gets its time when left */
    uint64_t entered;
    double user_s, system_s;
} open_region_t;
static PA_IPM_THREAD_LOCAL open_region_t region_stack[PA_IPM_MAX_DEPTH];
static PA_IPM_THREAD_LOCAL int region_depth;

void pa_ipm_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
        ;
}

void pa_ipm_unlock(void) { atomic_flag_clear_explicit(&table_lock, memory_order_release); }

int pa_ipm_in_rank_process(void) { return (long)getpid() == pa_ipm.pid; }

void pa_ipm_cpu_seconds(int who, double *user_s, double *system_s)
{
    struct rusage usage;
    getrusage(who, &usage);
    *user_s = (double)usage.ru_utime.tv_sec + 1e-6 * (double)usage.ru_utime.tv_usec;
    *system_s = (double)usage.ru_stime.tv_sec + 1e-6 * (double)usage.ru_stime.tv_usec;
}

/* The innermost region of this thread's stack, which its events go to (pa_ipm_self.region). */
static int innermost(void)
{
    if (region_depth == 0)
        return 0;
    int top = region_depth < PA_IPM_MAX_DEPTH ? region_depth : PA_IPM_MAX_DEPTH;
    return region_stack[top - 1].id;
}

/* A job started by MPI_Comm_spawn shares its parent's environment, so its files would land on
 * its parent's (ipm-rank-0.json, ipm-profile.json): it writes them in a folder of its own beside
 * them, spawned-HOST-PID after its rank 0, which every rank learns from it. */
static void name_spawned_job(void)
{
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        return;
    char name[sizeof pa_ipm.job_folder] = "";
    if (pa_ipm.rank == 0) {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        snprintf(name, sizeof name, "spawned-%s-%ld", host, pa_ipm.pid);
    }
    PMPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, pa_ipm.comm);
    memcpy(pa_ipm.job_folder, name, sizeof name);
}

void pa_ipm_start(void)
{
    pa_timer_start_calibration(); /* finished at the end: nothing to wait for at MPI_Init */
    pa_ipm_polls_calibrate();
    pa_ipm.pid = (long)getpid();
    PMPI_Comm_rank(MPI_COMM_WORLD, &pa_ipm.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &pa_ipm.size);
    int provided = MPI_THREAD_MULTIPLE;
    PMPI_Query_thread(&provided);
    pa_ipm.thread_multiple = provided == MPI_THREAD_MULTIPLE;
    PMPI_Comm_dup(MPI_COMM_WORLD, &pa_ipm.comm);
    name_spawned_job();
    const char *size = getenv("PERFATLAS_IPM_TABLE_SIZE");
    if (size && *size) {
        int wanted = atoi(size);
        pa_ipm.capacity = wanted < 1                    ? 1
                          : wanted > PA_IPM_MAX_RECORDS ? PA_IPM_MAX_RECORDS
                                                        : wanted;
    }
    struct timeval now;
    gettimeofday(&now, NULL);
    pa_ipm.start_unix = (double)now.tv_sec + 1e-6 * (double)now.tv_usec;
    pa_ipm_cpu_seconds(RUSAGE_SELF, &pa_ipm.start_user_s, &pa_ipm.start_system_s);
    pa_ipm_counters_start();
    pa_ipm_sites_start();
    pa_ipm_placement_start();
    pa_ipm_record_start();
    pa_ipm.start_ticks = pa_ticks();
    pa_ipm_active = 1;
}

/* MPI_Get_count with MPI_BYTE gives the bytes a status describes, whatever the datatype of the
 * receive (Open MPI and MPICH keep the byte count in the status). */
uint64_t pa_ipm_received(const MPI_Status *status)
{
    int bytes = 0;
    if (PMPI_Get_count(status, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes == MPI_UNDEFINED)
        return 0;
    return bytes < 0 ? 0 : (uint64_t)bytes;
}

int *pa_ipm_world_ranks(MPI_Group group)
{
    int size = 0;
    MPI_Group world;
    PMPI_Group_size(group, &size);
    int *cache = malloc(2 * (size_t)size * sizeof *cache);
    if (cache == NULL)
        return NULL;
    int *ranks = cache + size;
    for (int rank = 0; rank < size; rank++)
        ranks[rank] = rank;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(group, size, ranks, world, cache);
    PMPI_Group_free(&world);
    return realloc(cache, (size_t)size * sizeof *cache); /* shrinking: cannot fail */
}

/* The region named `name` inside `parent`, added if new; -1 when the region table is full. */
static int intern_region(int parent, const char *name)
{
    for (int id = 1; id < pa_ipm.region_count; id++)
        if (pa_ipm.regions[id].parent == parent && strcmp(pa_ipm.regions[id].name, name) == 0)
            return id;
    if (pa_ipm.region_count == PA_IPM_MAX_REGIONS)
        return -1;
    pa_ipm_region_t *region = &pa_ipm.regions[pa_ipm.region_count];
    snprintf(region->name, sizeof region->name, "%s", name); /* cut to size already (names.h) */
    region->parent = parent;
    return pa_ipm.region_count++;
}

/* Leaves this thread's innermost region: a kept one gets its wallclock and CPU time since entry. */
static void leave_region(uint64_t now)
{
    region_depth--;
    if (region_depth >= PA_IPM_MAX_DEPTH)
        return; /* a level deeper than the stack keeps (too_deep): its time is its parent's */
    const open_region_t *open = &region_stack[region_depth];
    if (!open->kept)
        return; /* the region table was full: its time is in the enclosing region already */
    double user_s, system_s;
    pa_ipm_cpu_seconds(RUSAGE_THREAD, &user_s, &system_s);
    pa_ipm_region_t *region = &pa_ipm.regions[open->id];
    region->entries++;
    region->ticks += now - open->entered;
    region->user_s += user_s - open->user_s;
    region->system_s += system_s - open->system_s;
}

/* MPI_Pcontrol(1, name), under the lock: a region nested in the innermost one, kept while the
 * stack has room; deeper levels are counted, never interned (they would be phantom children of
 * the deepest kept level). */
static void enter_region(const char *name, uint64_t now)
{
    if (region_depth >= PA_IPM_MAX_DEPTH) {
        pa_ipm.too_deep++;
        region_depth++;
        return;
    }
    int parent = innermost();
    int id = intern_region(parent, name);
    open_region_t *open = &region_stack[region_depth++];
    open->kept = id >= 0;
    if (id < 0)
        pa_ipm.regions_full++; /* its events are counted in the enclosing region */
    open->id = id < 0 ? parent : id;
    open->entered = now;
    pa_ipm_cpu_seconds(RUSAGE_THREAD, &open->user_s, &open->system_s);
}

/* MPI_Pcontrol(-1, name), under the lock. The pop of a level deeper than the stack, or of a
 * region the full table could not keep, matches its push: its name is not known to compare. */
static void pop_region(const char *name, uint64_t now)
{
    if (region_depth == 0) {
        pa_ipm.unbalanced_pops++;
        return;
    }
    if (region_depth <= PA_IPM_MAX_DEPTH) {
        const open_region_t *open = &region_stack[region_depth - 1];
        if (open->kept && strcmp(pa_ipm.regions[open->id].name, name) != 0)
            pa_ipm.mismatched_pops++;
    }
    leave_region(now);
}

void pa_ipm_region(int level, const char *name)
{
    if (!pa_ipm_active)
        return;
    uint64_t now = pa_ticks();
    char exact[PA_IPM_REGION_NAME];
    pa_ipm_region_name(exact, sizeof exact, name == NULL ? "(null)" : name);
    pa_ipm_lock();
    if (level == 1)
        enter_region(exact, now);
    else
        pop_region(exact, now);
    pa_ipm_self.region = innermost();
    pa_ipm_unlock();
}

void pa_ipm_close_regions(void)
{
    uint64_t now = pa_ticks();
    pa_timer_finish_calibration(); /* ticks become seconds from here on */
    pa_ipm_lock();
    while (region_depth > 0)
        leave_region(now);
    pa_ipm_self.region = 0;
    pa_ipm_region_t *program = &pa_ipm.regions[0];
    double user_s, system_s;
    pa_ipm_cpu_seconds(RUSAGE_SELF, &user_s, &system_s);
    program->entries = 1;
    program->ticks = now - pa_ipm.start_ticks;
    program->user_s = user_s - pa_ipm.start_user_s;
    program->system_s = system_s - pa_ipm.start_system_s;
    pa_ipm.end_ticks = now;
    pa_ipm.counted = pa_ipm_counters_stop(&pa_ipm.counter_value, &pa_ipm.counter_event);
    pa_ipm_unlock();
}

int pa_ipm_is_io(int call)
{
    int kind = pa_ipm_call_kinds[call];
    return kind == PA_IPM_KIND_IO || kind == PA_IPM_KIND_IO_READ || kind == PA_IPM_KIND_POSIX;
}

void pa_ipm_add_inclusive(double values[], const int parents[], int region, double value)
{
    for (; region >= 0; region = parents[region])
        values[region] += value;
}

void pa_ipm_region_times(double mpi_s[], double io_s[])
{
    int parents[PA_IPM_MAX_REGIONS];
    for (int id = 0; id < pa_ipm.region_count; id++) {
        parents[id] = pa_ipm.regions[id].parent;
        mpi_s[id] = io_s[id] = 0;
    }
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *record = &pa_ipm.table.records[slot];
        if (record->used)
            pa_ipm_add_inclusive(pa_ipm_is_io(record->call) ? io_s : mpi_s, parents, record->region,
                                 pa_ticks_to_seconds(record->ticks_total));
    }
    mpi_s[0] += pa_ticks_to_seconds(pa_ipm.table.overflow.ticks_total); /* its region is unknown */
}
