/* Cross-rank aggregation at MPI_Finalize (docs/profile.md), with reductions on the profiler's own
 * duplicate of MPI_COMM_WORLD: no rank sends its record table anywhere.
 *
 * 1. Regions are matched by path ("outer/inner"): rank 0 gathers the paths (names only), numbers
 *    them, and broadcasts the list; each rank maps its regions onto it.
 * 2. Each rank lays its figures out in that numbering — per region its quantities, per (region,
 *    call) its count, bytes and time, per (call, size bucket) its histogram — and three reductions
 *    (sum, min, max) combine them; min and max skip the ranks that have no such figure.
 * 3. LBST (docs/profile.md, Categories): an allreduce of the least time any rank spent in each
 *    (region, collective call) lets every rank count its own waiting time before step 2's sums.
 * 4. The communication matrix is one row per rank, gathered (it is tasks x tasks by nature);
 *    so is one short row of totals per rank for the per-rank views. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "aggregate.h"
#include "placement.h"
#include "timer.h"

const char *const pa_ipm_quantity_names[PA_IPM_NQ] = {"wall_s", "calc_s", "mpi_s",   "io_s",
                                                      "lbst_s", "user_s", "system_s"};

/* Region paths of this rank; region 0 is "". A region's parent precedes it, and its path fits
 * (PA_IPM_PATH holds PA_IPM_MAX_DEPTH escaped names). */
static void local_paths(char (*paths)[PA_IPM_PATH])
{
    paths[0][0] = '\0';
    for (int id = 1; id < pa_ipm.region_count; id++) {
        const pa_ipm_region_t *region = &pa_ipm.regions[id];
        pa_ipm_path_join(paths[id], PA_IPM_PATH, paths[region->parent], region->name);
    }
}

static int find_path(char (*paths)[PA_IPM_PATH], int count, const char *path)
{
    for (int id = 0; id < count; id++)
        if (strcmp(paths[id], path) == 0)
            return id;
    return -1;
}

/* Step 1: the numbering of every rank's regions, and this rank's map onto it. */
static void unify_regions(pa_ipm_profile_t *profile, int map[PA_IPM_MAX_REGIONS])
{
    static char mine[PA_IPM_MAX_REGIONS][PA_IPM_PATH];
    local_paths(mine);
    int size = pa_ipm.size, root = pa_ipm.rank == 0;
    int packed = 0;
    char *buffer = malloc((size_t)pa_ipm.region_count * PA_IPM_PATH);
    for (int id = 1; id < pa_ipm.region_count; id++) {
        size_t length = strlen(mine[id]) + 1;
        memcpy(buffer + packed, mine[id], length);
        packed += (int)length;
    }
    int *lengths = root ? calloc((size_t)size, sizeof *lengths) : NULL;
    int *offsets = root ? calloc((size_t)size, sizeof *offsets) : NULL;
    PMPI_Gather(&packed, 1, MPI_INT, lengths, 1, MPI_INT, 0, pa_ipm.comm);
    long total = 0;
    for (int rank = 0; root && rank < size; rank++) {
        offsets[rank] = (int)total;
        total += lengths[rank];
    }
    char *all = root ? malloc((size_t)total + 1) : NULL;
    PMPI_Gatherv(buffer, packed, MPI_CHAR, all, lengths, offsets, MPI_CHAR, 0, pa_ipm.comm);

    profile->paths = calloc(PA_IPM_MAX_PATHS, sizeof *profile->paths);
    profile->regions = 1;
    if (root)
        for (long at = 0; at < total; at += (long)strlen(all + at) + 1) {
            if (find_path(profile->paths, profile->regions, all + at) >= 0)
                continue;
            if (profile->regions == PA_IPM_MAX_PATHS) {
                profile->paths_dropped++;
                continue;
            }
            snprintf(profile->paths[profile->regions++], PA_IPM_PATH, "%s", all + at);
        }
    PMPI_Bcast(&profile->regions, 1, MPI_INT, 0, pa_ipm.comm);
    PMPI_Bcast(profile->paths, profile->regions * PA_IPM_PATH, MPI_CHAR, 0, pa_ipm.comm);

    /* A path's parent is the path without its last name; a region's parent precedes it. */
    profile->parents = malloc((size_t)profile->regions * sizeof *profile->parents);
    profile->parents[0] = -1;
    for (int id = 1; id < profile->regions; id++) {
        char parent[PA_IPM_PATH], name[PA_IPM_PATH];
        pa_ipm_path_split(profile->paths[id], parent, name, sizeof parent);
        profile->parents[id] = find_path(profile->paths, id, parent);
        if (profile->parents[id] < 0)
            profile->parents[id] = 0;
    }
    for (int id = 0; id < pa_ipm.region_count; id++) {
        int global = find_path(profile->paths, profile->regions, mine[id]);
        map[id] = global < 0 ? 0 : global; /* dropped: counted in the whole program only */
    }
    free(buffer), free(lengths), free(offsets), free(all);
}

/* Sums of `n` values to rank 0; min and max over the ranks where present[i] (NULL: all). */
static void reduce_spread(const double *values, const unsigned char *present, int n,
                          pa_ipm_spread_t *out)
{
    double *low = malloc(3 * (size_t)n * sizeof *low), *high = low + n, *result = high + n;
    for (int i = 0; i < n; i++) {
        int here = present == NULL || present[i];
        low[i] = here ? values[i] : INFINITY;
        high[i] = here ? values[i] : -INFINITY;
    }
    PMPI_Reduce(values, result, n, MPI_DOUBLE, MPI_SUM, 0, pa_ipm.comm);
    for (int i = 0; pa_ipm.rank == 0 && i < n; i++)
        out[i].sum = result[i];
    PMPI_Reduce(low, result, n, MPI_DOUBLE, MPI_MIN, 0, pa_ipm.comm);
    for (int i = 0; pa_ipm.rank == 0 && i < n; i++)
        out[i].min = result[i];
    PMPI_Reduce(high, result, n, MPI_DOUBLE, MPI_MAX, 0, pa_ipm.comm);
    for (int i = 0; pa_ipm.rank == 0 && i < n; i++)
        out[i].max = result[i];
    free(low);
}

/* Sums of `n` values over the ranks, in a new array (meaningful on rank 0). */
static double *reduce_sum(const double *values, int n)
{
    double *sum = calloc((size_t)n, sizeof *sum);
    PMPI_Reduce(values, sum, n, MPI_DOUBLE, MPI_SUM, 0, pa_ipm.comm);
    return sum;
}

/* Step 2 and 3 for the (region, call) figures; returns this rank's LBST per global region. */
static void aggregate_calls(pa_ipm_profile_t *profile, const int map[], double *lbst)
{
    int n = profile->regions * PA_IPM_NCALLS;
    double *count = calloc((size_t)n, sizeof *count), *bytes = calloc((size_t)n, sizeof *bytes);
    double *time = calloc((size_t)n, sizeof *time), *waited = calloc((size_t)n, sizeof *waited);
    double *least = malloc((size_t)n * sizeof *least), *made = calloc((size_t)n, sizeof *made);
    unsigned char *present = calloc((size_t)n, 1);
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *record = &pa_ipm.table.records[slot];
        if (!record->used)
            continue;
        int at = map[record->region] * PA_IPM_NCALLS + record->call;
        count[at] += (double)record->count;
        bytes[at] += (double)record->bytes;
        time[at] += pa_ticks_to_seconds(record->ticks_total);
        present[at] = made[at] = 1;
    }
    for (int at = 0; at < n; at++)
        least[at] = present[at] ? time[at] : INFINITY;
    PMPI_Allreduce(MPI_IN_PLACE, least, n, MPI_DOUBLE, MPI_MIN, pa_ipm.comm);
    for (int at = 0; at < n; at++)
        if (present[at] && pa_ipm_call_kinds[at % PA_IPM_NCALLS] == PA_IPM_KIND_COLL) {
            waited[at] = time[at] - least[at];
            pa_ipm_add_inclusive(lbst, profile->parents, at / PA_IPM_NCALLS, waited[at]);
        }
    profile->call_time = calloc((size_t)n, sizeof *profile->call_time);
    reduce_spread(time, present, n, profile->call_time);
    profile->call_count = reduce_sum(count, n);
    profile->call_bytes = reduce_sum(bytes, n);
    profile->call_lbst = reduce_sum(waited, n);
    profile->call_ranks = reduce_sum(made, n);
    free(count), free(bytes), free(time), free(waited), free(least), free(made), free(present);
}

/* Step 2 for the regions: wall, CPU and the four categories. */
static void aggregate_regions(pa_ipm_profile_t *profile, const int map[], const double *lbst,
                              pa_ipm_rank_row_t *row)
{
    int g = profile->regions, n = g * PA_IPM_NQ;
    double mpi_s[PA_IPM_MAX_REGIONS], io_s[PA_IPM_MAX_REGIONS];
    pa_ipm_region_times(mpi_s, io_s);
    double *values = calloc((size_t)n, sizeof *values),
           *entries = calloc((size_t)g, sizeof *entries);
    double *ranks = calloc((size_t)g, sizeof *ranks);
    unsigned char *present = calloc((size_t)n, 1);
    for (int id = 0; id < pa_ipm.region_count; id++) {
        const pa_ipm_region_t *region = &pa_ipm.regions[id];
        double *q = &values[map[id] * PA_IPM_NQ];
        q[PA_IPM_Q_WALL] += pa_ticks_to_seconds(region->ticks);
        q[PA_IPM_Q_MPI] += mpi_s[id];
        q[PA_IPM_Q_IO] += io_s[id];
        q[PA_IPM_Q_USER] += region->user_s;
        q[PA_IPM_Q_SYSTEM] += region->system_s;
        entries[map[id]] += (double)region->entries;
        ranks[map[id]] = 1;
        memset(&present[map[id] * PA_IPM_NQ], 1, PA_IPM_NQ);
    }
    for (int id = 0; id < g; id++) {
        double *q = &values[id * PA_IPM_NQ];
        q[PA_IPM_Q_LBST] = lbst[id];
        q[PA_IPM_Q_MPI] -= lbst[id];
        q[PA_IPM_Q_CALC] = q[PA_IPM_Q_WALL] - q[PA_IPM_Q_MPI] - q[PA_IPM_Q_IO] - q[PA_IPM_Q_LBST];
    }
    memcpy(row->q, values, sizeof row->q);
    profile->region = calloc((size_t)n, sizeof *profile->region);
    reduce_spread(values, present, n, profile->region);
    profile->region_entries = reduce_sum(entries, g);
    profile->region_ranks = reduce_sum(ranks, g);
    free(values), free(entries), free(ranks), free(present);
}

/* Step 2 for the message-size histogram, over all regions. */
static void aggregate_histogram(pa_ipm_profile_t *profile)
{
    int n = PA_IPM_NCALLS * PA_IPM_BUCKETS;
    double *count = calloc((size_t)n, sizeof *count), *bytes = calloc((size_t)n, sizeof *bytes);
    double *time = calloc((size_t)n, sizeof *time);
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *record = &pa_ipm.table.records[slot];
        if (!record->used)
            continue;
        int at = record->call * PA_IPM_BUCKETS + record->bucket;
        count[at] += (double)record->count;
        bytes[at] += (double)record->bytes;
        time[at] += pa_ticks_to_seconds(record->ticks_total);
    }
    profile->hist_count = reduce_sum(count, n);
    profile->hist_bytes = reduce_sum(bytes, n);
    profile->hist_time = reduce_sum(time, n);
    free(count), free(bytes), free(time);
}

/* Step 4: this rank's row of the matrix (sends and puts by destination), gathered. */
static void aggregate_matrix(pa_ipm_profile_t *profile)
{
    int tasks = pa_ipm.size;
    if (tasks > PA_IPM_MATRIX_MAX_TASKS)
        return;
    double *row = calloc(2 * (size_t)tasks, sizeof *row);
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *record = &pa_ipm.table.records[slot];
        int kind = pa_ipm_call_kinds[record->call];
        if (record->used && record->peer >= 0 &&
            (kind == PA_IPM_KIND_SEND || kind == PA_IPM_KIND_PUT)) {
            row[record->peer] += (double)record->bytes;
            row[tasks + record->peer] += (double)record->count;
        }
    }
    double *both = pa_ipm.rank == 0 ? malloc(2 * (size_t)tasks * tasks * sizeof *both) : NULL;
    PMPI_Gather(row, 2 * tasks, MPI_DOUBLE, both, 2 * tasks, MPI_DOUBLE, 0, pa_ipm.comm);
    if (both != NULL) {
        profile->matrix_bytes = malloc((size_t)tasks * tasks * sizeof *profile->matrix_bytes);
        profile->matrix_messages = malloc((size_t)tasks * tasks * sizeof *profile->matrix_bytes);
        for (int from = 0; from < tasks; from++)
            for (int to = 0; to < tasks; to++) {
                profile->matrix_bytes[from * tasks + to] = both[from * 2 * tasks + to];
                profile->matrix_messages[from * tasks + to] = both[from * 2 * tasks + tasks + to];
            }
    }
    free(row), free(both);
}

/* The small figures: overflow, table use, region errors, memory. */
static void aggregate_counters(pa_ipm_profile_t *profile, const pa_ipm_rank_row_t *row)
{
    double mine[9] = {(double)pa_ipm.table.overflow.count,
                      (double)pa_ipm.table.overflow.bytes,
                      pa_ticks_to_seconds(pa_ipm.table.overflow.ticks_total),
                      pa_ipm.table.overflow.count > 0,
                      (double)pa_ipm.regions_full,
                      (double)pa_ipm.unbalanced_pops,
                      (double)pa_ipm.mismatched_pops,
                      (double)pa_ipm.untracked_receives,
                      (double)pa_ipm.too_deep};
    double *sums = reduce_sum(mine, 9);
    if (pa_ipm.rank == 0) {
        profile->overflow_count = sums[0], profile->overflow_bytes = sums[1];
        profile->overflow_time = sums[2], profile->overflow_ranks = sums[3];
        profile->regions_full = sums[4], profile->unbalanced_pops = sums[5];
        profile->mismatched_pops = sums[6], profile->untracked_receives = sums[7];
        profile->too_deep = sums[8];
    }
    free(sums);
    double used = pa_ipm.table.used;
    PMPI_Reduce(&used, &profile->table_used_max, 1, MPI_DOUBLE, MPI_MAX, 0, pa_ipm.comm);
    reduce_spread(&row->maxrss_bytes, NULL, 1, &profile->maxrss);
    PMPI_Allreduce(&pa_ipm.counted, &profile->counted, 1, MPI_INT, MPI_MIN, pa_ipm.comm);
    if (profile->counted)
        reduce_spread(&pa_ipm.counter_value, NULL, 1, &profile->counter);
}

void pa_ipm_aggregate(pa_ipm_profile_t *profile)
{
    memset(profile, 0, sizeof *profile);
    profile->tasks = pa_ipm.size;
    int map[PA_IPM_MAX_REGIONS];
    unify_regions(profile, map);
    pa_ipm_rank_row_t row = {.pid = (double)getpid()};
    gethostname(row.host, sizeof row.host - 1);
    pa_ipm_placement_end(row.cpus_allowed, sizeof row.cpus_allowed, &row.cpu);
    double *lbst = calloc((size_t)profile->regions, sizeof *lbst);
    aggregate_calls(profile, map, lbst);
    aggregate_regions(profile, map, lbst, &row);
    free(lbst);
    aggregate_histogram(profile);
    aggregate_matrix(profile);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    row.maxrss_bytes = 1024.0 * (double)usage.ru_maxrss;
    row.overflow_events = (double)pa_ipm.table.overflow.count;
    aggregate_counters(profile, &row);
    if (pa_ipm.rank == 0)
        profile->ranks = malloc((size_t)profile->tasks * sizeof *profile->ranks);
    PMPI_Gather(&row, sizeof row, MPI_BYTE, profile->ranks, sizeof row, MPI_BYTE, 0, pa_ipm.comm);
}

int pa_ipm_first_on_host(const pa_ipm_profile_t *profile, int rank)
{
    for (int before = 0; before < rank; before++)
        if (strcmp(profile->ranks[before].host, profile->ranks[rank].host) == 0)
            return 0;
    return 1;
}

void pa_ipm_profile_free(pa_ipm_profile_t *profile)
{
    free(profile->paths), free(profile->parents), free(profile->region);
    free(profile->region_ranks), free(profile->region_entries), free(profile->call_time);
    free(profile->call_count), free(profile->call_bytes), free(profile->call_lbst);
    free(profile->call_ranks), free(profile->hist_count), free(profile->hist_bytes);
    free(profile->hist_time), free(profile->matrix_bytes), free(profile->matrix_messages);
    free(profile->ranks);
}

void pa_ipm_write_profile(void)
{
    pa_ipm_profile_t profile;
    pa_ipm_aggregate(&profile);
    if (pa_ipm.rank == 0) {
        pa_ipm_write_profile_json(&profile);
        pa_ipm_print_banner(&profile, stderr);
    }
    pa_ipm_profile_free(&profile);
}
