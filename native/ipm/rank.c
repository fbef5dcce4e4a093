/* Each rank's own document, perfatlas.ipm-rank/1 (docs/profile.md): its raw record table, its
 * regions, and the objects its call sites are resolved against. Written at MPI_Finalize, or flagged partial at MPI_Abort or an exit without it. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "json.h"
#include "placement.h"
#include "sites.h"
#include "table.h"
#include "timer.h"

static void write_times(pa_json *json, const pa_ipm_record_t *record)
{
    pa_json_key_int(json, "count", (long long)record->count);
    pa_json_key_int(json, "bytes", (long long)record->bytes);
    pa_json_key_double(json, "total_s", pa_ticks_to_seconds(record->ticks_total));
    pa_json_key_double(json, "min_s", pa_ticks_to_seconds(record->ticks_min));
    pa_json_key_double(json, "max_s", pa_ticks_to_seconds(record->ticks_max));
}

static void write_regions(pa_json *json)
{
    double mpi_s[PA_IPM_MAX_REGIONS], io_s[PA_IPM_MAX_REGIONS];
    pa_ipm_region_times(mpi_s, io_s);
    pa_json_key(json, "regions");
    pa_json_begin_array(json);
    for (int id = 0; id < pa_ipm.region_count; id++) {
        const pa_ipm_region_t *region = &pa_ipm.regions[id];
        double wall_s = pa_ticks_to_seconds(region->ticks);
        pa_json_begin_object(json);
        pa_json_key_int(json, "id", id);
        pa_json_key_string(json, "name", region->name);
        pa_json_key_index_or_null(json, "parent", region->parent);
        pa_json_key_int(json, "entries", (long long)region->entries);
        pa_json_key_double(json, "wall_s", wall_s);
        pa_json_key_double(json, "calc_s", wall_s - mpi_s[id] - io_s[id]);
        pa_json_key_double(json, "mpi_s", mpi_s[id]);
        pa_json_key_double(json, "io_s", io_s[id]);
        pa_json_key_double(json, "user_s", region->user_s);
        pa_json_key_double(json, "system_s", region->system_s);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

/* The kinds of calls.def by enum pa_ipm_kind: a partial profile built from rank files (Python)
 * needs them for the communication matrix (send, put) and for load imbalance (coll). */
static const char *const kind_names[] = {"send", "recv",    "irecv", "coll",       "put",
                                         "io",   "io_read", "other", "completion", "posix"};
_Static_assert(sizeof kind_names / sizeof *kind_names == PA_IPM_KIND_POSIX + 1, "one name a kind");

static void write_records(pa_json *json)
{
    pa_json_key(json, "records");
    pa_json_begin_array(json);
    for (int slot = 0; slot < pa_ipm.capacity; slot++) {
        const pa_ipm_record_t *record = &pa_ipm.table.records[slot];
        if (!record->used)
            continue;
        pa_json_begin_object(json);
        pa_json_key_string(json, "call", pa_ipm_call_names[record->call]);
        pa_json_key_string(json, "kind", kind_names[pa_ipm_call_kinds[record->call]]);
        pa_json_key_int(json, "region", record->region);
        pa_json_key_int(json, "bucket", record->bucket);
        pa_json_key_index_or_null(json, "peer", record->peer);
        pa_ipm_write_site(json, &record->site);
        write_times(json, record);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static void write_document(pa_json *json, const char *partial_reason)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    pa_json_begin_object(json);
    pa_json_key_string(json, "schema", "perfatlas.ipm-rank/1");
    pa_json_key_bool(json, "partial", partial_reason != NULL);
    if (partial_reason != NULL)
        pa_json_key_string(json, "reason", partial_reason);
    pa_json_key_int(json, "rank", pa_ipm.rank);
    pa_json_key_int(json, "size", pa_ipm.size);
    pa_json_key_string(json, "host", host);
    pa_json_key_int(json, "pid", (long long)getpid());
    pa_json_key_double(json, "started_unix", pa_ipm.start_unix);
    pa_json_key_double(json, "maxrss_bytes", 1024.0 * (double)usage.ru_maxrss);
    pa_timer_json(json);
    pa_json_key(json, "hardware_counters");
    pa_json_begin_object(json);
    pa_json_key_bool(json, "available", pa_ipm.counted);
    if (pa_ipm.counted) {
        pa_json_key_string(json, "source", pa_ipm_counters_source());
        pa_json_key_double(json, pa_ipm.counter_event, pa_ipm.counter_value);
    } else {
        pa_json_key_string(json, "reason", pa_ipm_counters_reason());
    }
    pa_json_end_object(json);
    pa_json_key(json, "table");
    pa_json_begin_object(json);
    pa_json_key_int(json, "capacity", pa_ipm.capacity);
    pa_json_key_int(json, "used", pa_ipm.table.used);
    pa_json_end_object(json);
    write_regions(json);
    pa_json_key_int(json, "callstack", pa_ipm_sites.depth);
    pa_ipm_write_unwinder(json);
    pa_ipm_write_placement(json);
    pa_ipm_write_objects(json);
    pa_json_key(json, "region_errors");
    pa_json_begin_object(json);
    pa_json_key_int(json, "regions_full", (long long)pa_ipm.regions_full);
    pa_json_key_int(json, "unbalanced_pops", (long long)pa_ipm.unbalanced_pops);
    pa_json_key_int(json, "mismatched_pops", (long long)pa_ipm.mismatched_pops);
    pa_json_key_int(json, "too_deep", (long long)pa_ipm.too_deep);
    pa_json_end_object(json);
    pa_json_key_int(json, "untracked_receives", (long long)pa_ipm.untracked_receives);
    write_records(json);
    pa_json_key(json, "overflow");
    pa_json_begin_object(json);
    write_times(json, &pa_ipm.table.overflow);
    pa_json_end_object(json);
    pa_json_end_object(json);
}

/* The file a document is written to before it is renamed to `path`: a rank killed while writing
 * (MPICH's launcher ends the others as soon as one exits without MPI_Finalize) leaves no
 * document or a whole one, never a truncated one under the document's name. */
static void temporary_name(char *temporary, size_t size, const char *path)
{
    snprintf(temporary, size, "%s.writing", path);
}

/* Opens `name` in $PERFATLAS_IPM_DIR (default: the current directory) for writing, under a
 * temporary name until pa_ipm_close_output; NULL, with one sentence on stderr, when it cannot,
 * and NULL in a process forked from the rank (lifecycle.c). */
FILE *pa_ipm_open_output(const char *name, char *path, size_t path_size)
{
    if (!pa_ipm_in_rank_process())
        return NULL;
    const char *folder = getenv("PERFATLAS_IPM_DIR");
    folder = folder && *folder ? folder : ".";
    if (pa_ipm.job_folder[0]) { /* a spawned job's (table.c): made by whichever rank is first */
        snprintf(path, path_size, "%s/%s", folder, pa_ipm.job_folder);
        mkdir(path, 0777);
        snprintf(path, path_size, "%s/%s/%s", folder, pa_ipm.job_folder, name);
    } else {
        snprintf(path, path_size, "%s/%s", folder, name);
    }
    char temporary[4096 + 16];
    temporary_name(temporary, sizeof temporary, path);
    FILE *file = fopen(temporary, "w");
    if (file == NULL)
        fprintf(stderr,
                "perfatlas-ipm: cannot write %s; set PERFATLAS_IPM_DIR to a writable folder\n",
                path);
    return file;
}

void pa_ipm_close_output(FILE *file, pa_json *json, const char *path)
{
    char temporary[4096 + 16];
    temporary_name(temporary, sizeof temporary, path);
    int failed = pa_json_finish(json) != 0;
    failed |= fclose(file) != 0;
    if (!failed && rename(temporary, path) != 0)
        failed = 1;
    if (failed) {
        unlink(temporary);
        fprintf(stderr, "perfatlas-ipm: writing %s failed (disk full?)\n", path);
    }
}

void pa_ipm_write_rank(const char *partial_reason)
{
    char name[64], path[4096];
    snprintf(name, sizeof name, "ipm-rank-%d.json", pa_ipm.rank);
    FILE *file = pa_ipm_open_output(name, path, sizeof path);
    if (file == NULL)
        return;
    pa_json json;
    pa_json_init(&json, file);
    pa_ipm_lock();
    write_document(&json, partial_reason);
    pa_ipm_unlock();
    pa_ipm_close_output(file, &json, path);
}
