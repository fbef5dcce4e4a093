/* The record table of perfatlas-ipm.
 *
 * One fixed-size open-addressing hash table per process, keyed by (region, call, size bucket,
 * peer as a rank of MPI_COMM_WORLD); each record keeps the event count, the exact bytes and the
 * total, minimum and maximum time. Memory is fixed (no allocation after MPI_Init): when no slot is
 * left, an event is folded into one overflow record whose count the report gives, so nothing is
 * dropped silently.
 *
 * Threads (MPI_THREAD_MULTIPLE): every update of the table happens under one spinlock (a C11
 * atomic_flag). Step 1 keeps it simple; the lock is held for a few dozen instructions, and a
 * lock-free or per-thread table is a later step. Region stacks are per thread (_Thread_local):
 * MPI_Pcontrol in one thread places that thread's calls. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipm.h"
#include "json.h"
#include "timer.h"

#define PA_IPM_MAX_RECORDS 4096 /* the compiled-in capacity; $PERFATLAS_IPM_TABLE_SIZE lowers it */
#define PA_IPM_MAX_REGIONS 64
#define PA_IPM_REGION_NAME 64
#define PA_IPM_MAX_DEPTH 16

static const char *const call_names[PA_IPM_NCALLS] = {
#define PA_IPM_CALL(ret, name, params, args, bytes, peer, comm) #name,
#include "calls.def"
#undef PA_IPM_CALL
};

typedef struct {
    int used;
    int region, call, bucket, peer; /* the key; peer is a world rank, or -1 for none */
    uint64_t count, bytes;
    uint64_t ticks_total, ticks_min, ticks_max;
} pa_ipm_record_t;

typedef struct {
    char name[PA_IPM_REGION_NAME];
    int parent; /* region id; -1 for region 0, the program outside every region */
} pa_ipm_region_t;

static pa_ipm_record_t records[PA_IPM_MAX_RECORDS];
static pa_ipm_record_t overflow; /* every event that found no slot */
static int capacity = PA_IPM_MAX_RECORDS;
static int records_used;

static pa_ipm_region_t regions[PA_IPM_MAX_REGIONS] = {{"", -1}};
static int region_count = 1;
static uint64_t regions_full;    /* MPI_Pcontrol(1, ...) that found the region table full */
static uint64_t unbalanced_pops; /* MPI_Pcontrol(-1, ...) outside every region */
static uint64_t mismatched_pops; /* MPI_Pcontrol(-1, name) whose name is not the innermost */

static atomic_flag table_lock = ATOMIC_FLAG_INIT;
static int world_rank = -1, world_size;
static MPI_Group world_group = MPI_GROUP_NULL;

/* This thread's region stack; depth may exceed PA_IPM_MAX_DEPTH (deeper levels are counted, and
 * their events go to the deepest region kept). */
static _Thread_local int region_stack[PA_IPM_MAX_DEPTH];
static _Thread_local int region_depth;

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
        ;
}

static void unlock(void) { atomic_flag_clear_explicit(&table_lock, memory_order_release); }

static int current_region(void)
{
    if (region_depth == 0)
        return 0;
    int top = region_depth < PA_IPM_MAX_DEPTH ? region_depth : PA_IPM_MAX_DEPTH;
    return region_stack[top - 1];
}

void pa_ipm_start(void)
{
    pa_timer_init();
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    const char *size = getenv("PERFATLAS_IPM_TABLE_SIZE");
    if (size && *size) {
        int wanted = atoi(size);
        capacity = wanted < 1 ? 1 : wanted > PA_IPM_MAX_RECORDS ? PA_IPM_MAX_RECORDS : wanted;
    }
}

uint64_t pa_ipm_bytes(int count, MPI_Datatype datatype)
{
    int size = 0;
    if (count <= 0 || datatype == MPI_DATATYPE_NULL)
        return 0;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* A peer rank of comm as a rank of MPI_COMM_WORLD (-1 for none: MPI_ANY_SOURCE, MPI_PROC_NULL,
 * MPI_ROOT). An intercommunicator's peer is a rank of its remote group. Step 1 translates on
 * every call outside MPI_COMM_WORLD; a per-communicator cache is a later step. */
static int world_peer(int peer, MPI_Comm comm)
{
    if (peer < 0 || comm == MPI_COMM_NULL)
        return -1;
    if (comm == MPI_COMM_WORLD || world_group == MPI_GROUP_NULL)
        return peer;
    int inter = 0, translated = MPI_UNDEFINED;
    MPI_Group group;
    PMPI_Comm_test_inter(comm, &inter);
    int code = inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group);
    if (code != MPI_SUCCESS)
        return -1;
    PMPI_Group_translate_ranks(group, 1, &peer, world_group, &translated);
    PMPI_Group_free(&group);
    return translated == MPI_UNDEFINED ? -1 : translated;
}

/* Size bucket: the bit length of bytes, so bucket b holds [2^(b-1), 2^b) bytes and 0 holds 0. */
static int size_bucket(uint64_t bytes) { return bytes ? 64 - __builtin_clzll(bytes) : 0; }

static uint64_t key_hash(int region, int call, int bucket, int peer)
{
    uint64_t key = ((uint64_t)(uint32_t)peer << 32) ^ ((uint64_t)region << 16) ^
                   ((uint64_t)call << 8) ^ (uint64_t)bucket;
    key ^= key >> 33; /* murmur3's finalizer */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    return key ^ (key >> 33);
}

static void add_event(pa_ipm_record_t *record, uint64_t bytes, uint64_t ticks)
{
    if (record->count == 0 || ticks < record->ticks_min)
        record->ticks_min = ticks;
    if (ticks > record->ticks_max)
        record->ticks_max = ticks;
    record->count++;
    record->bytes += bytes;
    record->ticks_total += ticks;
}

void pa_ipm_record(int call, uint64_t bytes, int peer, MPI_Comm comm, uint64_t ticks)
{
    int region = current_region();
    int bucket = size_bucket(bytes);
    int world = world_peer(peer, comm);
    uint64_t start = key_hash(region, call, bucket, world) % (uint64_t)capacity;
    lock();
    pa_ipm_record_t *found = &overflow;
    for (int probe = 0; probe < capacity; probe++) {
        pa_ipm_record_t *slot = &records[(start + (uint64_t)probe) % (uint64_t)capacity];
        if (!slot->used) {
            *slot = (pa_ipm_record_t){1, region, call, bucket, world, 0, 0, 0, 0, 0};
            records_used++;
            found = slot;
            break;
        }
        if (slot->region == region && slot->call == call && slot->bucket == bucket &&
            slot->peer == world) {
            found = slot;
            break;
        }
    }
    add_event(found, bytes, ticks);
    unlock();
}

/* The region named `name` inside `parent`, added if new; -1 when the region table is full. */
static int intern_region(int parent, const char *name)
{
    for (int id = 1; id < region_count; id++)
        if (regions[id].parent == parent &&
            strncmp(regions[id].name, name, PA_IPM_REGION_NAME - 1) == 0)
            return id;
    if (region_count == PA_IPM_MAX_REGIONS)
        return -1;
    pa_ipm_region_t *region = &regions[region_count];
    snprintf(region->name, sizeof region->name, "%s", name);
    region->parent = parent;
    return region_count++;
}

void pa_ipm_region(int level, const char *name)
{
    if (name == NULL)
        name = "(null)";
    int parent = current_region();
    lock();
    if (level == 1) {
        int id = intern_region(parent, name);
        if (id < 0) {
            regions_full++;
            id = parent; /* its events are counted in the enclosing region */
        }
        if (region_depth < PA_IPM_MAX_DEPTH)
            region_stack[region_depth] = id;
        region_depth++;
    } else if (region_depth == 0) {
        unbalanced_pops++;
    } else {
        if (strncmp(regions[parent].name, name, PA_IPM_REGION_NAME - 1) != 0)
            mismatched_pops++;
        region_depth--;
    }
    unlock();
}

static void write_record(pa_json *json, const pa_ipm_record_t *record)
{
    pa_json_key_int(json, "count", (long long)record->count);
    pa_json_key_int(json, "bytes", (long long)record->bytes);
    pa_json_key_double(json, "total_s", pa_ticks_to_seconds(record->ticks_total));
    pa_json_key_double(json, "min_s", pa_ticks_to_seconds(record->ticks_min));
    pa_json_key_double(json, "max_s", pa_ticks_to_seconds(record->ticks_max));
}

static void write_document(pa_json *json)
{
    pa_json_begin_object(json);
    pa_json_key_string(json, "schema", "perfatlas.ipm-rank/1");
    pa_json_key_int(json, "rank", world_rank);
    pa_json_key_int(json, "size", world_size);
    pa_json_key_int(json, "pid", (long long)getpid());
    pa_timer_json(json);
    pa_json_key(json, "table");
    pa_json_begin_object(json);
    pa_json_key_int(json, "capacity", capacity);
    pa_json_key_int(json, "used", records_used);
    pa_json_end_object(json);
    pa_json_key(json, "regions");
    pa_json_begin_array(json);
    for (int id = 0; id < region_count; id++) {
        pa_json_begin_object(json);
        pa_json_key_int(json, "id", id);
        pa_json_key_string(json, "name", regions[id].name);
        pa_json_key(json, "parent");
        if (regions[id].parent < 0)
            pa_json_null(json);
        else
            pa_json_int(json, regions[id].parent);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
    pa_json_key(json, "region_errors");
    pa_json_begin_object(json);
    pa_json_key_int(json, "regions_full", (long long)regions_full);
    pa_json_key_int(json, "unbalanced_pops", (long long)unbalanced_pops);
    pa_json_key_int(json, "mismatched_pops", (long long)mismatched_pops);
    pa_json_end_object(json);
    pa_json_key(json, "records");
    pa_json_begin_array(json);
    for (int slot = 0; slot < capacity; slot++) {
        const pa_ipm_record_t *record = &records[slot];
        if (!record->used)
            continue;
        pa_json_begin_object(json);
        pa_json_key_string(json, "call", call_names[record->call]);
        pa_json_key_int(json, "region", record->region);
        pa_json_key_int(json, "bucket", record->bucket);
        pa_json_key(json, "peer");
        if (record->peer < 0)
            pa_json_null(json);
        else
            pa_json_int(json, record->peer);
        write_record(json, record);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
    pa_json_key(json, "overflow");
    pa_json_begin_object(json);
    write_record(json, &overflow);
    pa_json_end_object(json);
    pa_json_end_object(json);
}

void pa_ipm_write(void)
{
    const char *folder = getenv("PERFATLAS_IPM_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ipm-rank-%d.json", folder && *folder ? folder : ".",
             world_rank);
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        fprintf(stderr,
                "perfatlas-ipm: cannot write %s; set PERFATLAS_IPM_DIR to a writable folder\n",
                path);
        return;
    }
    pa_json json;
    pa_json_init(&json, file);
    lock();
    write_document(&json);
    unlock();
    int failed = pa_json_finish(&json) != 0;
    failed |= fclose(file) != 0;
    if (failed)
        fprintf(stderr, "perfatlas-ipm: writing %s failed (disk full?)\n", path);
}
