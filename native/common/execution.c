#include "execution.h"

#include "numa_counters.h"
#include "proc_field.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PA_MAX_NODES 1024

/* The CPU a task last ran on: field 39 of /proc/.../stat, counted after the command's ')'. */
static int last_cpu(const char *task)
{
    char path[320], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", task);
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    int cpu = -1;
    if (fgets(line, sizeof line, file)) {
        char *field = strrchr(line, ')');
        /* after ')': field 3 (state) is the first; the processor is field 39 */
        for (int number = 2; field && number < 39; number++)
            field = strchr(field + 1, ' ');
        if (field)
            cpu = atoi(field + 1);
    }
    fclose(file);
    return cpu;
}

static void write_thread(pa_json *json, const char *task, long long *migrations_total)
{
    char path[320], name[64] = "", allowed[256] = "", migrations[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", task);
    FILE *file = fopen(path, "r");
    if (file) {
        if (fgets(name, sizeof name, file))
            name[strcspn(name, "\n")] = '\0';
        fclose(file);
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/status", task);
    pa_proc_field(path, "Cpus_allowed_list:", allowed, sizeof allowed);
    pa_json_begin_object(json);
    pa_json_key_int(json, "tid", atoll(task));
    pa_json_key_string(json, "name", name);
    pa_json_key_int(json, "cpu", last_cpu(task));
    pa_json_key_string(json, "cpus_allowed", allowed);
    pa_json_key(json, "migrations"); /* se.nr_migrations: only with CONFIG_SCHED_DEBUG */
    snprintf(path, sizeof path, "/proc/self/task/%s/sched", task);
    if (pa_proc_field(path, "se.nr_migrations", migrations, sizeof migrations)) {
        pa_json_int(json, atoll(migrations));
        if (*migrations_total >= 0)
            *migrations_total += atoll(migrations);
    } else {
        pa_json_null(json);
        *migrations_total = -1;
    }
    pa_json_end_object(json);
}

/* Whether a numa_maps line describes the process's data: anonymous memory (heap, stack, buffers),
 * huge pages, and shared-memory files (/dev/shm, System V: MPI windows). Program and library files
 * are not: their page cache is shared with every process and sits wherever the file was first
 * read, so counting it would show remote pages that the measurement never reads (seen in a
 * two-node guest: a quarter of the "pages" of a local 8 MiB buffer's process on the other node). */
static int is_data(const char *line)
{
    const char *file = strstr(line, " file=");
    return !file || strstr(line, " huge") || strncmp(file, " file=/dev/shm/", 15) == 0 ||
           strncmp(file, " file=/SYSV", 11) == 0;
}

/* Bytes per NUMA node over the data mappings of the process (/proc/self/numa_maps: "N<node>=<pages>"
 * counts pages of "kernelpagesize_kB" each). Returns the number of nodes seen, -1 if unreadable. */
static int pages_by_node(long long bytes[PA_MAX_NODES])
{
    FILE *file = fopen("/proc/self/numa_maps", "r");
    if (!file)
        return -1;
    memset(bytes, 0, sizeof(long long) * PA_MAX_NODES);
    int nodes = 0;
    char line[4096];
    while (fgets(line, sizeof line, file)) {
        if (!is_data(line))
            continue;
        long long page_kib = 4;
        const char *size = strstr(line, "kernelpagesize_kB=");
        if (size)
            page_kib = atoll(size + strlen("kernelpagesize_kB="));
        for (const char *word = strstr(line, " N"); word; word = strstr(word + 1, " N")) {
            if (!isdigit((unsigned char)word[2]))
                continue;
            int node = atoi(word + 2);
            const char *equals = strchr(word, '=');
            if (node < 0 || node >= PA_MAX_NODES || !equals)
                continue;
            bytes[node] += atoll(equals + 1) * page_kib * 1024;
            if (node + 1 > nodes)
                nodes = node + 1;
        }
    }
    fclose(file);
    return nodes;
}

void pa_execution_json(pa_json *json)
{
    pa_json_key(json, "execution");
    pa_json_begin_object(json);
    pa_json_key(json, "threads");
    pa_json_begin_array(json);
    long long migrations = 0;
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *entry; tasks && (entry = readdir(tasks));)
        if (isdigit((unsigned char)entry->d_name[0]))
            write_thread(json, entry->d_name, &migrations);
    if (tasks)
        closedir(tasks);
    pa_json_end_array(json);
    pa_json_key(json, "migrations");
    if (tasks && migrations >= 0)
        pa_json_int(json, migrations);
    else
        pa_json_null(json);
    char policy[256] = "";
    pa_proc_field("/proc/self/status", "Mems_allowed_list:", policy, sizeof policy);
    pa_json_key_string(json, "mems_allowed", policy);
    static long long bytes[PA_MAX_NODES];
    int nodes = pages_by_node(bytes);
    pa_json_key(json, "bytes_on_node");
    if (nodes < 0) {
        pa_json_null(json);
    } else {
        pa_json_begin_object(json);
        for (int n = 0; n < nodes; n++)
            if (bytes[n] > 0) {
                char key[16];
                snprintf(key, sizeof key, "%d", n);
                pa_json_key_int(json, key, bytes[n]);
            }
        pa_json_end_object(json);
    }
    pa_numa_counters_json(json);
    pa_json_end_object(json);
}
