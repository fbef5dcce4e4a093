/* Rank 0 writes the whole program's profile, perfatlas.ipm/1 (docs/profile.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "counters.h"
#include "timer.h"

#define PA_IPM_LBST_METHOD                                                                       \
    "per region and collective call: a rank's total time in the call minus the least total any " \
    "calling rank spent in it"

void pa_ipm_command_words(char ***words, int *count)
{
    static char buffer[8192];
    static char *list[256];
    *words = list;
    *count = 0;
    FILE *file = fopen("/proc/self/cmdline", "r");
    if (file == NULL)
        return;
    size_t length = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[length] = '\0';
    for (size_t at = 0; at < length && *count < 256; at += strlen(buffer + at) + 1)
        list[(*count)++] = buffer + at;
}

static void write_spread(pa_json *json, const char *key, pa_ipm_spread_t spread, double ranks)
{
    pa_json_key(json, key);
    pa_json_begin_object(json);
    pa_json_key_double(json, "sum", spread.sum);
    pa_json_key_double(json, "min", ranks > 0 ? spread.min : 0);
    pa_json_key_double(json, "max", ranks > 0 ? spread.max : 0);
    pa_json_key_double(json, "avg", ranks > 0 ? spread.sum / ranks : 0);
    pa_json_end_object(json);
}

static void write_regions(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "regions");
    pa_json_begin_array(json);
    for (int id = 0; id < profile->regions; id++) {
        char parent[PA_IPM_PATH], name[PA_IPM_PATH];
        pa_ipm_path_split(profile->paths[id], parent, name, sizeof name);
        pa_json_begin_object(json);
        pa_json_key_int(json, "id", id);
        pa_json_key_string(json, "name", name);
        pa_json_key_string(json, "path", profile->paths[id]);
        pa_json_key_index_or_null(json, "parent", profile->parents[id]);
        pa_json_key_int(json, "ranks", (long long)profile->region_ranks[id]);
        pa_json_key_int(json, "entries", (long long)profile->region_entries[id]);
        for (int q = 0; q < PA_IPM_NQ; q++)
            write_spread(json, pa_ipm_quantity_names[q], profile->region[id * PA_IPM_NQ + q],
                         profile->region_ranks[id]);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static const char *category(int call)
{
    int kind = pa_ipm_call_kinds[call];
    return kind == PA_IPM_KIND_POSIX                               ? "posix-io"
           : kind == PA_IPM_KIND_IO || kind == PA_IPM_KIND_IO_READ ? "mpi-io"
                                                                   : "mpi";
}

static void write_calls(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "calls");
    pa_json_begin_array(json);
    for (int at = 0; at < profile->regions * PA_IPM_NCALLS; at++) {
        if (profile->call_ranks[at] == 0)
            continue;
        int call = at % PA_IPM_NCALLS;
        pa_json_begin_object(json);
        pa_json_key_int(json, "region", at / PA_IPM_NCALLS);
        pa_json_key_string(json, "call", pa_ipm_call_names[call]);
        pa_json_key_string(json, "category", category(call));
        pa_json_key_bool(json, "collective", pa_ipm_call_kinds[call] == PA_IPM_KIND_COLL);
        pa_json_key_int(json, "count", (long long)profile->call_count[at]);
        pa_json_key_int(json, "bytes", (long long)profile->call_bytes[at]);
        pa_json_key_int(json, "ranks", (long long)profile->call_ranks[at]);
        write_spread(json, "time_s", profile->call_time[at], profile->call_ranks[at]);
        pa_json_key_double(json, "lbst_s", profile->call_lbst[at]);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static void write_histogram(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "histogram");
    pa_json_begin_array(json);
    for (int at = 0; at < PA_IPM_NCALLS * PA_IPM_BUCKETS; at++) {
        if (profile->hist_count[at] == 0)
            continue;
        pa_json_begin_object(json);
        pa_json_key_string(json, "call", pa_ipm_call_names[at / PA_IPM_BUCKETS]);
        pa_json_key_int(json, "bucket", at % PA_IPM_BUCKETS);
        pa_json_key_int(json, "count", (long long)profile->hist_count[at]);
        pa_json_key_int(json, "bytes", (long long)profile->hist_bytes[at]);
        pa_json_key_double(json, "time_s", profile->hist_time[at]);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static void write_matrix_rows(pa_json *json, const char *key, const double *matrix, int tasks)
{
    pa_json_key(json, key);
    pa_json_begin_array(json);
    long long *row = malloc((size_t)tasks * sizeof *row);
    for (int from = 0; from < tasks; from++) {
        for (int to = 0; to < tasks; to++)
            row[to] = (long long)matrix[from * tasks + to];
        pa_json_int_array(json, row, tasks);
    }
    free(row);
    pa_json_end_array(json);
}

static void write_matrix(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "matrix");
    if (profile->matrix_bytes == NULL) {
        pa_json_null(json); /* more tasks than PA_IPM_MATRIX_MAX_TASKS */
        return;
    }
    pa_json_begin_object(json);
    pa_json_key_string(json, "what",
                       "point-to-point and one-sided bytes and messages, sender row, receiver "
                       "column (collectives excluded)");
    write_matrix_rows(json, "bytes", profile->matrix_bytes, profile->tasks);
    write_matrix_rows(json, "messages", profile->matrix_messages, profile->tasks);
    pa_json_end_object(json);
}

static void write_ranks(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "ranks");
    pa_json_begin_array(json);
    for (int rank = 0; rank < profile->tasks; rank++) {
        const pa_ipm_rank_row_t *row = &profile->ranks[rank];
        pa_json_begin_object(json);
        pa_json_key_int(json, "rank", rank);
        pa_json_key_string(json, "host", row->host);
        pa_json_key_int(json, "pid", (long long)row->pid);
        pa_json_key_text_or_null(json, "cpus_allowed", row->cpus_allowed);
        pa_json_key_index_or_null(json, "cpu", row->cpu);
        pa_json_key_bool(json, "partial", row->partial != 0);
        for (int q = 0; q < PA_IPM_NQ; q++)
            pa_json_key_double(json, pa_ipm_quantity_names[q], row->q[q]);
        pa_json_key_double(json, "maxrss_bytes", row->maxrss_bytes);
        pa_json_key_int(json, "overflow_events", (long long)row->overflow_events);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static void write_header(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key_string(json, "schema", "perfatlas.ipm/1");
    pa_json_key_bool(json, "partial", 0);
    char **words;
    int count;
    pa_ipm_command_words(&words, &count);
    pa_json_key(json, "command");
    pa_json_begin_array(json);
    for (int i = 0; i < count; i++)
        pa_json_string(json, words[i]);
    pa_json_end_array(json);
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int length = 0;
    PMPI_Get_library_version(library, &length);
    library[strcspn(library, "\n")] = '\0';
    pa_json_key_string(json, "mpi_library", library);
    pa_json_key_int(json, "tasks", profile->tasks);
    pa_json_key(json, "hosts");
    pa_json_begin_array(json);
    for (int rank = 0; rank < profile->tasks; rank++)
        if (pa_ipm_first_on_host(profile, rank))
            pa_json_string(json, profile->ranks[rank].host);
    pa_json_end_array(json);
    pa_json_key_double(json, "started_unix", pa_ipm.start_unix);
    pa_timer_json(json);
    pa_json_key_string(json, "lbst_method", PA_IPM_LBST_METHOD);
    write_spread(json, "wallclock_s", profile->region[PA_IPM_Q_WALL], profile->tasks);
    write_spread(json, "maxrss_bytes", profile->maxrss, profile->tasks);
    pa_json_key(json, "hardware_counters");
    pa_json_begin_object(json);
    pa_json_key_bool(json, "available", profile->counted);
    if (profile->counted) {
        pa_json_key_string(json, "source", pa_ipm_counters_source());
        pa_json_key(json, "events");
        pa_json_begin_object(json);
        write_spread(json, pa_ipm.counter_event, profile->counter, profile->tasks);
        pa_json_end_object(json);
    } else {
        pa_json_key_string(json, "reason", pa_ipm_counters_reason()); /* rank 0's */
    }
    pa_json_end_object(json);
}

static void write_footer(pa_json *json, const pa_ipm_profile_t *profile)
{
    pa_json_key(json, "table");
    pa_json_begin_object(json);
    pa_json_key_int(json, "capacity", pa_ipm.capacity);
    pa_json_key_int(json, "used_max", (long long)profile->table_used_max);
    pa_json_end_object(json);
    pa_json_key(json, "overflow");
    pa_json_begin_object(json);
    pa_json_key_int(json, "count", (long long)profile->overflow_count);
    pa_json_key_int(json, "bytes", (long long)profile->overflow_bytes);
    pa_json_key_double(json, "time_s", profile->overflow_time);
    pa_json_key_int(json, "ranks", (long long)profile->overflow_ranks);
    pa_json_end_object(json);
    pa_json_key(json, "region_errors");
    pa_json_begin_object(json);
    pa_json_key_int(json, "regions_full", (long long)profile->regions_full);
    pa_json_key_int(json, "unbalanced_pops", (long long)profile->unbalanced_pops);
    pa_json_key_int(json, "mismatched_pops", (long long)profile->mismatched_pops);
    pa_json_key_int(json, "too_deep", (long long)profile->too_deep);
    pa_json_key_int(json, "paths_dropped", profile->paths_dropped);
    pa_json_end_object(json);
    pa_json_key_int(json, "untracked_receives", (long long)profile->untracked_receives);
    pa_json_key(json, "poll_sampling"); /* polls.c: how the Test family's time is taken */
    pa_json_begin_object(json);
    pa_json_key(json, "calls");
    pa_json_begin_array(json);
    for (int slot = 0; slot < PA_IPM_POLL_CALLS; slot++)
        pa_json_string(json, pa_ipm_call_names[pa_ipm_poll_calls[slot]]);
    pa_json_end_array(json);
    pa_json_key_int(json, "timed_first", PA_IPM_POLL_EXACT);
    pa_json_key_int(json, "then_one_in", PA_IPM_POLL_EVERY);
    pa_json_key_string(
        json, "method",
        "every call counted; per thread, region and call, the first timed_first calls "
        "timed, then one in then_one_in on average at random gaps (uniform on 1 .. "
        "2 then_one_in - 1); total time = the first calls' time + the sampled calls' mean time "
        "x the calls after the first");
    pa_json_end_object(json);
}

void pa_ipm_write_profile_json(const pa_ipm_profile_t *profile)
{
    char path[4096];
    FILE *file = pa_ipm_open_output("ipm-profile.json", path, sizeof path);
    if (file == NULL)
        return;
    pa_json json;
    pa_json_init(&json, file);
    pa_json_begin_object(&json);
    write_header(&json, profile);
    write_regions(&json, profile);
    write_calls(&json, profile);
    write_histogram(&json, profile);
    write_matrix(&json, profile);
    write_ranks(&json, profile);
    write_footer(&json, profile);
    pa_json_end_object(&json);
    pa_ipm_close_output(file, &json, path);
}
