/* pa-comm-rma: MPI-3 one-sided latency: MPI_Get and MPI_Put of k elements (k = 1, 2, 4 ..
 * max_count) of char, int and double, and load/store through a shared-memory window.
 *
 * Get and put run in one passive-target epoch (MPI_Win_lock_all); one iteration is the operation
 * followed by MPI_Win_flush, so it lasts until the data have arrived (get) or are complete at the
 * target (put). Cases (one document per case, operation, type and k):
 *   one             rank 1 accesses rank 0's window; the others sleep
 *   two_same_node   two ranks of one host (not rank 0) access rank 0's window at once
 *   each_side       rank 0 accesses rank 1's window while rank 1 accesses rank 0's
 *   shared_memory   rank 0 and a rank on its host: MPI_Win_allocate_shared, and a flag ping-pong
 *                   of direct stores and loads (k elements, then a flag); the latency is half
 *                   the round trip (core-to-core transfer of the lines)
 * A target that does not access itself (one, two_same_node) polls in MPI meanwhile, so that a
 * library that progresses one-sided access only inside the target's MPI calls (MPICH's ch4
 * without a progress thread) serves each access at once rather than when a sleep ends.
 * Every fetched element is compared with the value its owner wrote (get), every put is read
 * back with a get and compared (put), every loaded element is checked (shared memory). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "result.h"
#include "spin.h"
#include "timer.h"

enum {
    NTYPES = 3,
    MAX_COUNT = 1 << 17 /* 1 MiB of doubles: a one-sided transfer's bandwidth too */
};

static const pa_param params[] = {
    {"max_count", PA_INT, "64", "largest k (elements per access; k doubles from 1)", NULL, 1,
     MAX_COUNT},
    {"cases", PA_CHOICE, "all", "which access patterns",
     "all,one,two_same_node,each_side,shared_memory", 0, 0},
    PA_COMM_TIMING_PARAMS("11", "1ms", "500ms"),
};

/* -- the window: values each rank owns, and a place per accessor to put into ------------------ */

typedef struct {
    const char *name;
    MPI_Datatype datatype;
    int size;
} element_type;

static const element_type TYPES[] = {
    {"char", MPI_CHAR, 1}, {"int", MPI_INT, 4}, {"double", MPI_DOUBLE, 8}};

/* A region holds max_count elements of each type, one after the other, each type's 8-byte
 * aligned; regions are 64-byte aligned (a cache line). */
typedef struct {
    MPI_Aint offset[NTYPES];
    MPI_Aint region;
    int max_count;
} layout;

static MPI_Aint aligned(MPI_Aint bytes, MPI_Aint to) { return (bytes + to - 1) / to * to; }

static layout layout_of(int max_count)
{
    layout l = {.max_count = max_count};
    MPI_Aint at = 0;
    for (int t = 0; t < NTYPES; t++) {
        l.offset[t] = at;
        at = aligned(at + (MPI_Aint)max_count * TYPES[t].size, 8);
    }
    l.region = aligned(at, 64);
    return l;
}

/* Region 0 of a rank's window holds what it owns (read by get); region 1 + a receives accessor
 * a's puts. Element j of type t, written by rank `owner` (`put`: by accessor `owner`). */
static void value(int t, int owner, int j, int put, void *out)
{
    switch (t) {
    case 0:
        *(char *)out = (char)((put ? 'A' : 'a') + (owner * 7 + j) % 26);
        break;
    case 1:
        *(int *)out = (put ? -1 : 1) * (owner * 100000 + j + 1);
        break;
    default:
        *(double *)out = (put ? -1.0 : 1.0) * (owner * 1000.0 + j + 0.25);
    }
}

static void fill_region(char *region, const layout *l, int owner, int put)
{
    for (int t = 0; t < NTYPES; t++)
        for (int j = 0; j < l->max_count; j++)
            value(t, owner, j, put, region + l->offset[t] + (MPI_Aint)j * TYPES[t].size);
}

static int first_mismatch(const char *data, int t, int owner, int put, int count)
{
    char expected[8];
    for (int j = 0; j < count; j++) {
        value(t, owner, j, put, expected);
        if (memcmp(data + (size_t)j * (size_t)TYPES[t].size, expected, (size_t)TYPES[t].size))
            return j;
    }
    return -1;
}

/* -- get and put ------------------------------------------------------------------------------ */

typedef struct {
    MPI_Win window;
    const layout *layout;
    int target, slot, t, count, put;
    char *local; /* max_count doubles */
} rma_access;

/* Where access `a` reads (get) or writes (put) in its target's window. */
static MPI_Aint access_offset(const rma_access *a)
{
    MPI_Aint region = a->put ? a->layout->region * (1 + a->slot) : 0;
    return region + a->layout->offset[a->t];
}

static double access_batch(void *context, long iterations, uint64_t *laps)
{
    rma_access *a = context;
    const element_type *type = &TYPES[a->t];
    MPI_Aint where = access_offset(a);
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        if (a->put)
            MPI_Put(a->local, a->count, type->datatype, a->target, where, a->count, type->datatype,
                    a->window);
        else
            MPI_Get(a->local, a->count, type->datatype, a->target, where, a->count, type->datatype,
                    a->window);
        MPI_Win_flush(a->target, a->window);
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

/* After the timed accesses: the data fetched (get), or the target's slot read back (put). */
static void verify_access(rma_access *a, int me, double *checked)
{
    const element_type *type = &TYPES[a->t];
    int owner = a->target, put = 0;
    if (a->put) {
        MPI_Get(a->local, a->count, type->datatype, a->target, access_offset(a), a->count,
                type->datatype, a->window);
        MPI_Win_flush(a->target, a->window);
        owner = me;
        put = 1;
    }
    int j = first_mismatch(a->local, a->t, owner, put, a->count);
    if (j >= 0)
        pa_comm_wrong("MPI_%s of %d %s from rank %d delivered a wrong element %d",
                      a->put ? "Put" : "Get", a->count, type->name, a->target, j);
    switch (a->t) { /* element 0 as a number, for the document */
    case 0:
        *checked = (double)a->local[0];
        break;
    case 1:
        *checked = (double)*(int *)a->local;
        break;
    default:
        *checked = *(double *)a->local;
    }
}

/* -- load/store through a shared-memory window ------------------------------------------------ */

typedef struct {
    char *mine, *other; /* each rank's segment: a flag line, then the payload */
    int me, t, count;
    uint64_t sequence;
} shared;

static void wait_flag(volatile uint64_t *flag, uint64_t sequence)
{
    for (unsigned spins = 1; __atomic_load_n(flag, __ATOMIC_ACQUIRE) != sequence; spins++) {
        pa_spin_pause();
        if (spins % 256 == 0) /* an oversubscribed host: let the other rank run */
            sched_yield();
    }
}

static void store_payload(shared *s, uint64_t sequence)
{
    const element_type *type = &TYPES[s->t];
    for (int j = 0; j < s->count; j++)
        value(s->t, s->me, j, (int)(sequence & 1), s->other + 64 + (size_t)j * (size_t)type->size);
    __atomic_store_n((uint64_t *)s->other, sequence, __ATOMIC_RELEASE);
}

static void load_payload(shared *s, uint64_t sequence)
{
    wait_flag((volatile uint64_t *)s->mine, sequence);
    int j = first_mismatch(s->mine + 64, s->t, 1 - s->me, (int)(sequence & 1), s->count);
    if (j >= 0)
        pa_comm_wrong("a load from the shared-memory window saw a wrong element %d of %d %s", j,
                      s->count, TYPES[s->t].name);
}

static double shared_batch(void *context, long iterations, uint64_t *laps)
{
    shared *s = context;
    uint64_t start = pa_ticks();
    PA_LAP(laps, 0);
    for (long i = 0; i < iterations; i++) {
        uint64_t sequence = ++s->sequence;
        if (s->me == 0) {
            store_payload(s, sequence);
            load_payload(s, sequence);
        } else {
            load_payload(s, sequence);
            store_payload(s, sequence);
        }
        PA_LAP(laps, i + 1);
    }
    return pa_ticks_to_seconds(pa_ticks() - start);
}

/* -- documents -------------------------------------------------------------------------------- */

typedef struct {
    const char *name, *op;
    int accessors[2], targets[2], naccessors;
    const char *why; /* not measurable here */
} rma_case;

/* t < 0: a document for the whole case and operation (one that cannot be measured here). */
static void document_head(pa_json *json, const pa_args *args, const pa_world *world,
                          const rma_case *c, int t, int count)
{
    pa_comm_doc_begin(json, "comm.rma", args, world);
    pa_json_key_string(json, "case", c->name);
    pa_json_key_string(json, "op", c->op);
    if (t >= 0) {
        pa_json_key_string(json, "type", TYPES[t].name);
        pa_json_key_int(json, "count", count);
        pa_json_key_int(json, "bytes", (long long)count * TYPES[t].size);
    }
    int involved[4], n = 0;
    for (int a = 0; a < c->naccessors; a++)
        involved[n++] = c->accessors[a];
    if (c->naccessors && c->targets[0] >= 0) {
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= involved[i] == c->targets[0];
        if (!seen)
            involved[n++] = c->targets[0];
    }
    pa_comm_doc_context(json, world, involved, n);
}

static void write_unmeasurable(pa_json *json, const pa_args *args, const pa_world *world,
                               const rma_case *c)
{
    document_head(json, args, world, c, -1, 0);
    pa_result_not_measurable(json, c->why);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    pa_json_key_string(json, "latency_ns", "ns");
    pa_json_end_object(json);
    pa_result_end(json);
}

static void write_measured(pa_json *json, const pa_args *args, const pa_world *world,
                           const rma_case *c, int t, int count, const pa_timing *timing,
                           const pa_series *series, const pa_histogram *histogram, int rows,
                           int per_row, const double *seconds, const int *ranks, double expected,
                           double checked)
{
    int n = rows * per_row;
    double half = strcmp(c->op, "load_store") == 0 ? 0.5 : 1.0; /* a round trip counts half */
    double *latency = pa_calloc((size_t)n + 1, sizeof(double), "latency");
    for (int i = 0; i < n; i++)
        latency[i] = seconds[i] * 1e9 * half / (double)series->iterations;
    document_head(json, args, world, c, t, count);
    pa_metric metric = {"latency_ns", "ns", latency, n};
    pa_comm_doc_samples(json, &metric, 1, seconds, n);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key(json, "accessors");
    pa_json_begin_array(json);
    for (int r = 0; r < rows; r++)
        pa_json_int(json, ranks[r]);
    pa_json_end_array(json);
    pa_json_key(json, "targets");
    pa_json_begin_array(json);
    for (int a = 0; a < c->naccessors; a++)
        pa_json_int(json, c->targets[a]);
    pa_json_end_array(json);
    pa_json_key_string(json, "samples_layout",
                       "accessor-major: sample a*n+i is accessors[a] in its sample i");
    pa_json_key_string(json, "definition",
                       half < 1.0 ? "half the round trip of a store of k elements and a flag "
                                    "into the other rank's segment, answered alike"
                                  : "one operation followed by MPI_Win_flush");
    pa_json_key_int(json, "element_bytes", TYPES[t].size);
    pa_comm_timing_json(json, timing, series);
    pa_histogram_json(json, histogram, half);
    pa_json_key(json, "check");
    pa_json_begin_object(json);
    pa_json_key_int(json, "element", 0);
    pa_json_key_double(json, "expected", expected);
    pa_json_key_double(json, "found", checked);
    pa_json_end_object(json);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
    pa_result_end(json);
    free(latency);
}

/* -- cases ------------------------------------------------------------------------------------ */

/* Two ranks other than 0 that report the same host, or -1. */
static void same_host_pair(const pa_world *world, int *a, int *b)
{
    *a = *b = -1;
    for (int i = 1; i < world->size && *a < 0; i++)
        for (int j = i + 1; j < world->size; j++)
            if (pa_same_host(world, i, j)) {
                *a = i;
                *b = j;
                break;
            }
}

static int wanted(const pa_args *args, const char *name)
{
    const char *cases = pa_arg_text(args, "cases");
    return strcmp(cases, "all") == 0 || strcmp(cases, name) == 0;
}

typedef struct {
    const pa_args *args;
    const pa_world *world;
    const pa_timing *timing;
    pa_json *json;
    int max_count;
    layout layout;
    char *local; /* an accessor's buffer: max_count doubles */
    MPI_Win window;
    const char *window_failure; /* NULL when MPI_Win_allocate worked */
} context;

/* Every measurement of one get/put case: all types, all k; collective over the world. */
static void run_access_case(context *x, rma_case *c)
{
    const pa_world *world = x->world;
    if (!c->why && x->window_failure)
        c->why = x->window_failure;
    int slot = -1;
    for (int a = 0; a < c->naccessors; a++)
        if (c->accessors[a] == world->rank)
            slot = a;
    if (c->why) { /* one document for the case and operation says why */
        if (world->rank == 0)
            write_unmeasurable(x->json, x->args, world, c);
        return;
    }
    MPI_Comm group = pa_comm_of(world, c->accessors, c->naccessors);
    for (int t = 0; t < NTYPES; t++)
        for (int count = 1; count <= x->max_count; count *= 2) {
            rma_access a = {.window = x->window,
                            .layout = &x->layout,
                            .local = x->local,
                            .slot = slot,
                            .t = t,
                            .count = count,
                            .put = strcmp(c->op, "put") == 0};
            pa_series series = {0};
            pa_histogram histogram;
            pa_histogram_clear(&histogram);
            double checked = 0, expected = 0;
            if (group != MPI_COMM_NULL) {
                a.target = c->targets[slot];
                for (int j = 0; a.put && j < count; j++)
                    value(t, world->rank, j, 1, a.local + (size_t)j * (size_t)TYPES[t].size);
                pa_comm_measure(group, access_batch, &a, x->timing, &series, &histogram);
                verify_access(&a, world->rank, &checked);
            }
            int target = 0;
            for (int i = 0; i < c->naccessors; i++)
                target |= c->targets[i] == world->rank;
            if (target && group == MPI_COMM_NULL)
                pa_comm_serve(MPI_COMM_WORLD); /* a target that does not access: in MPI */
            else
                pa_comm_join(MPI_COMM_WORLD);
            pa_histogram_reduce(&histogram, 0, MPI_COMM_WORLD);
            /* the first accessor's check travels to rank 0 for the document */
            if (world->rank == c->accessors[0] && world->rank != 0)
                MPI_Send(&checked, 1, MPI_DOUBLE, 0, 41, MPI_COMM_WORLD);
            if (world->rank == 0 && c->accessors[0] != 0)
                MPI_Recv(&checked, 1, MPI_DOUBLE, c->accessors[0], 41, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            char first[8];
            value(t, a.put ? c->accessors[0] : c->targets[0], 0, a.put, first);
            expected = t == 0   ? (double)first[0]
                       : t == 1 ? (double)*(int *)first
                                : *(double *)first;
            int per_row = 0, *ranks = NULL;
            double *values = NULL;
            int rows = pa_comm_collect(world, group != MPI_COMM_NULL ? &series : NULL, &per_row,
                                       &values, &ranks);
            /* rank 0 needs the calibrated iteration count of the accessors' series */
            long iterations = series.iterations;
            MPI_Bcast(&iterations, 1, MPI_LONG, c->accessors[0], MPI_COMM_WORLD);
            if (world->rank == 0) {
                pa_series shown = series;
                shown.iterations = iterations;
                shown.count = per_row;
                shown.requested = x->timing->samples;
                write_measured(x->json, x->args, world, c, t, count, x->timing, &shown, &histogram,
                               rows, per_row, values, ranks, expected, checked);
                free(values);
                free(ranks);
            }
            pa_series_free(&series);
        }
    if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
}

static void run_shared_case(context *x)
{
    const pa_world *world = x->world;
    rma_case c = {.name = "shared_memory", .op = "load_store", .naccessors = 2};
    int partner = -1;
    for (int r = 1; r < world->size && partner < 0; r++)
        if (pa_same_host(world, 0, r))
            partner = r;
    c.accessors[0] = 0;
    c.accessors[1] = partner;
    c.targets[0] = partner;
    c.targets[1] = 0;
    if (partner < 0) {
        c.naccessors = 0;
        c.targets[0] = -1;
        c.why = "no other rank shares rank 0's host, so a shared-memory window cannot be "
                "measured here; place two ranks on one host";
    }
    MPI_Comm pair = c.why ? MPI_COMM_NULL : pa_comm_of(world, c.accessors, 2);
    MPI_Win window = MPI_WIN_NULL;
    shared s = {0};
    int ok = 1;
    if (pair != MPI_COMM_NULL) {
        MPI_Comm_rank(pair, &s.me);
        MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
        char *base = NULL;
        MPI_Aint bytes = 64 + x->layout.region; /* a flag line, then k elements */
        ok = MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, pair, &base, &window) == MPI_SUCCESS;
        if (ok) {
            MPI_Aint size;
            int unit;
            s.mine = base;
            MPI_Win_shared_query(window, 1 - s.me, &size, &unit, &s.other);
            memset(s.mine, 0, (size_t)bytes);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
            MPI_Win_sync(window);
            MPI_Barrier(pair);
        }
    }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok && !c.why)
        c.why = "this MPI could not create a shared-memory window (MPI_Win_allocate_shared) "
                "for rank 0 and a rank on its host";
    if (c.why && world->rank == 0)
        write_unmeasurable(x->json, x->args, world, &c);
    for (int t = 0; t < NTYPES && !c.why; t++)
        for (int count = 1; count <= x->max_count; count *= 2) {
            pa_series series = {0};
            pa_histogram histogram;
            pa_histogram_clear(&histogram);
            if (pair != MPI_COMM_NULL) {
                s.t = t;
                s.count = count;
                pa_comm_measure(pair, shared_batch, &s, x->timing, &series, &histogram);
            }
            pa_comm_join(MPI_COMM_WORLD);
            pa_histogram_reduce(&histogram, 0, MPI_COMM_WORLD);
            int per_row = 0, *ranks = NULL;
            double *values = NULL;
            /* both ranks time the same round trips: rank 0's series is the figure */
            int rows = pa_comm_collect(world, world->rank == 0 ? &series : NULL, &per_row, &values,
                                       &ranks);
            if (world->rank == 0) {
                char first[8];
                value(t, partner, 0, (int)(s.sequence & 1), first);
                double expected = t == 0   ? (double)first[0]
                                  : t == 1 ? (double)*(int *)first
                                           : *(double *)first;
                char *seen = s.mine + 64;
                double found = t == 0   ? (double)seen[0]
                               : t == 1 ? (double)*(int *)seen
                                        : *(double *)seen;
                write_measured(x->json, x->args, world, &c, t, count, x->timing, &series,
                               &histogram, rows, per_row, values, ranks, expected, found);
                free(values);
                free(ranks);
            }
            pa_series_free(&series);
        }
    if (window != MPI_WIN_NULL) {
        MPI_Win_unlock_all(window);
        MPI_Win_free(&window);
    }
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-comm-rma", "MPI-3 one-sided (RMA) latency: get, put, load/store",
                  params, sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    pa_comm_require(&world, world.size >= 2, "one-sided access needs two ranks, but np=%d",
                    world.size);
    pa_timing timing;
    pa_timing_from_args(&timing, &args);
    pa_json json;
    pa_comm_docs_begin(&json, &world, &args);
    context x = {.args = &args,
                 .world = &world,
                 .timing = &timing,
                 .json = &json,
                 .max_count = (int)pa_arg_int(&args, "max_count")};
    x.layout = layout_of(x.max_count);
    x.local = pa_calloc((size_t)x.max_count, 8, "an accessor's buffer");

    /* One window for every get/put case; a library that cannot make one (Open MPI's osc/rdma
     * over TCP) makes those cases not measurable rather than the whole program fail. */
    char *base = NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* region 0: what this rank owns; regions 1 and 2: the puts of accessors 0 and 1 */
    int rc =
        MPI_Win_allocate(3 * x.layout.region, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &x.window);
    int ok = rc == MPI_SUCCESS, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    static char failure[MPI_MAX_ERROR_STRING + 256];
    if (!all_ok) {
        char text[MPI_MAX_ERROR_STRING] = "an error on another rank";
        int length = 0;
        if (!ok)
            MPI_Error_string(rc, text, &length);
        snprintf(failure, sizeof failure,
                 "this MPI cannot create an RMA window across these ranks (MPI_Win_allocate: "
                 "%s); with Open MPI over TCP pass --mca osc pt2pt (or ucx) in --mpirun-args",
                 text);
        x.window_failure = failure;
    } else {
        fill_region(base, &x.layout, world.rank, 0);
        memset(base + x.layout.region, 0, 2 * (size_t)x.layout.region);
        MPI_Win_lock_all(0, x.window);
        MPI_Win_sync(x.window);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    const char *ops[2] = {"get", "put"};
    for (int o = 0; o < 2; o++) {
        if (wanted(&args, "one")) {
            rma_case c = {
                .name = "one", .op = ops[o], .accessors = {1}, .targets = {0}, .naccessors = 1};
            run_access_case(&x, &c);
        }
        if (wanted(&args, "two_same_node")) {
            rma_case c = {
                .name = "two_same_node", .op = ops[o], .targets = {0, 0}, .naccessors = 2};
            same_host_pair(&world, &c.accessors[0], &c.accessors[1]);
            if (c.accessors[0] < 0) {
                c.naccessors = 0;
                c.why = world.size < 3 ? "two accessors besides the target need np of 3 or more"
                                       : "no two ranks other than rank 0 share a host here";
            }
            run_access_case(&x, &c);
        }
        if (wanted(&args, "each_side")) {
            rma_case c = {.name = "each_side",
                          .op = ops[o],
                          .accessors = {0, 1},
                          .targets = {1, 0},
                          .naccessors = 2};
            run_access_case(&x, &c);
        }
    }
    if (wanted(&args, "shared_memory"))
        run_shared_case(&x);
    if (!x.window_failure) {
        MPI_Win_unlock_all(x.window);
        MPI_Win_free(&x.window);
    }
    free(x.local);
    return pa_comm_docs_finish(&json, &world);
}
