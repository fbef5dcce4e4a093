#define _GNU_SOURCE /* strerrorname_np */
#include "numa_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef PA_HAVE_PAPI
#include <papi.h>
#endif

#include "cpu_arm.h"
#include "files.h"

/* -- the events, by CPU ------------------------------------------------------------------------ */

typedef struct {
    const char *name;      /* Linux perf's name (tools/perf/pmu-events/arch/x86/<cpu>/) */
    const char *pfm;       /* libpfm4's name, the one PAPI resolves; NULL where libpfm4 has none */
    unsigned event, umask; /* raw encoding: perf_event_attr.config = umask << 8 | event */
} dram_event;

typedef struct {
    const char *counts; /* what the two events count */
    dram_event local, remote;
} event_pair;

/* Intel Xeon: retired loads that missed L3, by the DRAM that served them (Intel's event lists,
 * perfmon.intel.com; Linux perf haswellx, broadwellx, skylakex, icelakex, sapphirerapids,
 * emeraldrapids: memory.json). Stores and prefetches are not counted. */
static const event_pair intel_hsx = {
    .counts = "user-mode retired loads that missed L3, served by local / by remote DRAM",
    .local = {"MEM_LOAD_UOPS_L3_MISS_RETIRED.LOCAL_DRAM",
              "MEM_LOAD_UOPS_L3_MISS_RETIRED:LOCAL_DRAM", 0xd3, 0x01},
    .remote = {"MEM_LOAD_UOPS_L3_MISS_RETIRED.REMOTE_DRAM",
               "MEM_LOAD_UOPS_L3_MISS_RETIRED:REMOTE_DRAM", 0xd3, 0x04},
};
static const event_pair intel_skx = {
    .counts = "user-mode retired loads that missed L3, served by local / by remote DRAM",
    .local = {"MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM", "MEM_LOAD_L3_MISS_RETIRED:LOCAL_DRAM", 0xd3,
              0x01},
    .remote = {"MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM", "MEM_LOAD_L3_MISS_RETIRED:REMOTE_DRAM", 0xd3,
               0x02},
};
/* AMD Zen: demand data-cache fills by data source, PMCx043 (AMD's Processor Programming Reference
 * of each family; Linux perf amdzen2..amdzen5): umask bit 3 = DRAM or MMIO of the same NUMA node,
 * bit 6 = of another node. Loads and stores that miss the caches, not prefetches. */
#define AMD_FILLS "user-mode demand data-cache fills from DRAM or MMIO of the same / another node"
static const event_pair amd_zen2 = {
    .counts = AMD_FILLS,
    .local = {"ls_refills_from_sys.ls_mabresp_lcl_dram",
              "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM", 0x43, 0x08},
    .remote = {"ls_refills_from_sys.ls_mabresp_rmt_dram",
               "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_RMT_DRAM", 0x43, 0x40},
};
static const event_pair amd_zen3 = {
    .counts = AMD_FILLS,
    .local = {"ls_dmnd_fills_from_sys.mem_io_local",
              "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", 0x43, 0x08},
    .remote = {"ls_dmnd_fills_from_sys.mem_io_remote",
               "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_RMT", 0x43, 0x40},
};
static const event_pair amd_zen4 = {
    .counts = AMD_FILLS,
    .local = {"ls_dmnd_fills_from_sys.dram_io_near",
              "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR", 0x43, 0x08},
    .remote = {"ls_dmnd_fills_from_sys.dram_io_far",
               "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_FAR", 0x43, 0x40},
};
/* Zen 5: Linux perf's amdzen5 list; libpfm4 4.13 (Debian 12) has no Zen 5 table, so raw only. */
static const event_pair amd_zen5 = {
    .counts = AMD_FILLS,
    .local = {"ls_dmnd_fills_from_sys.dram_io_near", NULL, 0x43, 0x08},
    .remote = {"ls_dmnd_fills_from_sys.dram_io_far", NULL, 0x43, 0x40},
};

/* The table: which pair counts on which CPU (/proc/cpuinfo vendor_id, cpu family, model range).
 * The libpfm4 names and encodings above were checked against libpfm4 4.13 (LIBPFM_FORCE_PMU=<pmu>,
 * pfm_get_event_encoding): the same event and umask as the raw columns. */
typedef struct {
    const char *vendor;
    int family, first_model, last_model;
    const char *cpu; /* the generation, for the document */
    const event_pair *events;
} cpu_events;

static const cpu_events table[] = {
    {"GenuineIntel", 6, 0x3f, 0x3f, "Intel Haswell-EP", &intel_hsx},
    {"GenuineIntel", 6, 0x4f, 0x4f, "Intel Broadwell-EP", &intel_hsx},
    {"GenuineIntel", 6, 0x55, 0x55, "Intel Skylake-SP / Cascade Lake / Cooper Lake", &intel_skx},
    {"GenuineIntel", 6, 0x6a, 0x6a, "Intel Ice Lake-SP", &intel_skx},
    {"GenuineIntel", 6, 0x6c, 0x6c, "Intel Ice Lake-D", &intel_skx},
    {"GenuineIntel", 6, 0x8f, 0x8f, "Intel Sapphire Rapids", &intel_skx},
    {"GenuineIntel", 6, 0xcf, 0xcf, "Intel Emerald Rapids", &intel_skx},
    {"AuthenticAMD", 0x17, 0x30, 0xff, "AMD Zen 2", &amd_zen2},
    {"AuthenticAMD", 0x19, 0x00, 0x0f, "AMD Zen 3", &amd_zen3},
    {"AuthenticAMD", 0x19, 0x10, 0x1f, "AMD Zen 4", &amd_zen4},
    {"AuthenticAMD", 0x19, 0x20, 0x5f, "AMD Zen 3", &amd_zen3},
    {"AuthenticAMD", 0x19, 0x60, 0xaf, "AMD Zen 4", &amd_zen4},
    {"AuthenticAMD", 0x1a, 0x00, 0xff, "AMD Zen 5", &amd_zen5},
};
#define TABLE_COVERS "Intel Xeon from Haswell-EP to Emerald Rapids and AMD Zen 2 to Zen 5"

/* Arm cores (implementer 0x41 Neoverse, Fujitsu A64FX, NVIDIA Grace's Neoverse V2): their PMUs
 * (Arm's Neoverse N1, V1, N2, V2 technical reference manuals, PMU events; Linux perf
 * arch/arm64/arm/neoverse-*) count REMOTE_ACCESS (0x31: accesses served by another socket, its
 * caches or its memory) and LL_CACHE_MISS_RD (0x37: last-level misses wherever served), but no
 * event counts the accesses that local DRAM served, and neither splits DRAM from caches: the
 * local/remote DRAM pair this document reports does not exist there. */
#define ARM_NO_PAIR                                                                             \
    "%s: its PMU counts accesses served by another socket (REMOTE_ACCESS, event 0x31) and "     \
    "last-level cache misses (LL_CACHE_MISS_RD, 0x37) but no event counts local DRAM accesses " \
    "or tells DRAM from a remote cache, so local and remote DRAM accesses are not counted"

/* -- state ------------------------------------------------------------------------------------- */

enum backend {
    NOT_STARTED,
    NONE,
    PERF_EVENT,
    PAPI
};

static struct {
    enum backend backend;
    const cpu_events *cpu;
    int fd[2]; /* PERF_EVENT: local, remote */
    int papi_set;
    char papi_version[32];
    char reason[512]; /* NONE: why nothing is counted */
} state = {.fd = {-1, -1}};

/* "ENOENT" for ENOENT (glibc 2.32 on), else the message. */
static const char *errno_name(int code)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
    const char *name = strerrorname_np(code);
    if (name)
        return name;
#endif
    return strerror(code);
}

/* -- which CPU --------------------------------------------------------------------------------- */

/* The file that describes the CPU: /proc/cpuinfo, or the one named by PERFATLAS_CPUINFO (another
 * machine's cpuinfo, to check the table; tests/test_numa_counters.py). */
static const char *cpuinfo_path(void)
{
    const char *path = getenv("PERFATLAS_CPUINFO");
    return path && *path ? path : "/proc/cpuinfo";
}

/* Whether the first `length` characters of a cpuinfo line are the field name `key`. */
static int is_key(const char *line, size_t length, const char *key)
{
    return length == strlen(key) && strncmp(line, key, length) == 0;
}

/* vendor_id, cpu family and model of the first processor listed (x86); or, for an Arm CPU, its
 * "CPU implementer" and "CPU part" (MIDR_EL1's fields), with family and model -1; -1 where they
 * cannot be read. Only a regular file is read (/proc's is one): a FIFO named by
 * PERFATLAS_CPUINFO would block; that is -2, with the sentence in `why`. */
static int identify_cpu(char *vendor, size_t size, int *family, int *model, int *implementer,
                        int *part, char *why, size_t why_size)
{
    FILE *file = pa_open_regular(cpuinfo_path(), "the CPU description",
                                 "give a copy of a /proc/cpuinfo", why, why_size);
    if (!file)
        return strncmp(why, "cannot read", strlen("cannot read")) == 0 ? -1 : -2;
    *vendor = '\0';
    *family = *model = *implementer = *part = -1;
    char line[512];
    while (fgets(line, sizeof line, file) && (!*vendor || *family < 0 || *model < 0) &&
           (*implementer < 0 || *part < 0)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t key = strcspn(line, "\t:");
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if (is_key(line, key, "vendor_id") && !*vendor)
            snprintf(vendor, size, "%.*s", (int)strcspn(value, " \n"), value);
        else if (is_key(line, key, "cpu family") && *family < 0)
            *family = atoi(value);
        else if (is_key(line, key, "model") && *model < 0)
            *model = atoi(value);
        else if (is_key(line, key, "CPU implementer") && *implementer < 0)
            *implementer = (int)strtol(value, NULL, 0);
        else if (is_key(line, key, "CPU part") && *part < 0)
            *part = (int)strtol(value, NULL, 0);
    }
    fclose(file);
    if (*implementer >= 0 && *part >= 0)
        return 0;
    return *vendor && *family >= 0 && *model >= 0 ? 0 : -1;
}

/* The architecture this program was compiled for, and whether the CPU described is another one:
 * under qemu-user an aarch64 program reads the x86-64 host's /proc/cpuinfo, and the host's
 * counters are not the emulated program's. A file named by PERFATLAS_CPUINFO is a table check. */
#if defined(__x86_64__) || defined(__i386__)
#define THIS_ARCH  "x86-64"
#define CPU_FIELDS "vendor_id, cpu family and model"
#elif defined(__aarch64__)
#define THIS_ARCH  "aarch64"
#define CPU_FIELDS "CPU implementer and CPU part"
#else
#define THIS_ARCH  "another architecture"
#define CPU_FIELDS "vendor_id, cpu family and model, or CPU implementer and CPU part,"
#endif
static int described_elsewhere(int is_arm)
{
    const char *path = getenv("PERFATLAS_CPUINFO");
    if (path && *path)
        return 0;
    return is_arm ? strcmp(THIS_ARCH, "aarch64") != 0 : strcmp(THIS_ARCH, "x86-64") != 0;
}

static const cpu_events *find_cpu(void)
{
    char vendor[64];
    int family, model, implementer, part;
    char why[sizeof state.reason] = "";
    int identified =
        identify_cpu(vendor, sizeof vendor, &family, &model, &implementer, &part, why, sizeof why);
    if (identified == -2) {
        snprintf(state.reason, sizeof state.reason, "%s", why);
        return NULL;
    }
    if (identified != 0) {
        snprintf(state.reason, sizeof state.reason, "cannot read the CPU's " CPU_FIELDS " from %s",
                 cpuinfo_path());
        return NULL;
    }
    int is_arm = implementer >= 0;
    if (described_elsewhere(is_arm)) {
        snprintf(state.reason, sizeof state.reason,
                 "%s describes %s CPU but this program is " THIS_ARCH
                 ": it runs under emulation (qemu-user), where the hardware counters are not "
                 "this program's",
                 cpuinfo_path(), is_arm ? "an Arm" : "an x86-64");
        return NULL;
    }
    if (is_arm) {
        const char *name = pa_arm_cpu_name((unsigned)implementer, (unsigned)part);
        char cpu[96];
        snprintf(cpu, sizeof cpu, "%s (implementer 0x%02x, part 0x%03x)", name ? name : "Arm CPU",
                 (unsigned)implementer, (unsigned)part);
        snprintf(state.reason, sizeof state.reason, ARM_NO_PAIR, cpu);
        return NULL;
    }
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].vendor, vendor) && table[i].family == family &&
            table[i].first_model <= model && model <= table[i].last_model)
            return &table[i];
    snprintf(state.reason, sizeof state.reason,
             "no local and remote DRAM access events are known for this CPU (%s family 0x%x "
             "model 0x%x): the table in native/common/numa_counters.c covers " TABLE_COVERS,
             vendor, family, model);
    return NULL;
}

/* -- perf_event_open with raw encodings -------------------------------------------------------- */

static int open_raw(const dram_event *event)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_RAW;
    attr.config = (uint64_t)event->umask << 8 | event->event;
    attr.inherit = 1;        /* threads (and processes) created later count into this event */
    attr.exclude_kernel = 1; /* user mode: what perf_event_paranoid 2 allows an unprivileged user */
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* Why perf_event_open refused `event`, in one sentence (perf_event_open(2), ERRORS). */
static void explain_refusal(const dram_event *event, int code, const char *papi)
{
    char paranoid[16] = "?";
    FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (file) {
        if (fgets(paranoid, sizeof paranoid, file))
            paranoid[strcspn(paranoid, "\n")] = '\0';
        fclose(file);
    }
    char papi_note[300] = "";
    if (*papi)
        snprintf(papi_note, sizeof papi_note, "; PAPI: %s", papi);
    if ((code == EACCES || code == EPERM) && atoi(paranoid) <= 2 && *paranoid != '?')
        snprintf(state.reason, sizeof state.reason,
                 "perf_event_open(%s) is not permitted (%s%s) although perf_event_paranoid=%s "
                 "allows it: a container's seccomp profile or a security module blocks it",
                 event->name, errno_name(code), papi_note, paranoid);
    else if (code == EACCES || code == EPERM)
        snprintf(state.reason, sizeof state.reason,
                 "perf_event_paranoid=%s forbids counting this process's events "
                 "(perf_event_open(%s): %s%s); set /proc/sys/kernel/perf_event_paranoid to 2 or "
                 "lower",
                 paranoid, event->name, errno_name(code), papi_note);
    else if (code == ENOENT || code == ENODEV || code == EOPNOTSUPP)
        snprintf(state.reason, sizeof state.reason,
                 "no hardware counters on this machine (perf_event_open(%s): %s%s)", event->name,
                 errno_name(code), papi_note);
    else
        snprintf(state.reason, sizeof state.reason, "perf_event_open(%s) failed (%s: %s%s)",
                 event->name, errno_name(code), strerror(code), papi_note);
}

static int start_perf_event(const event_pair *pair, const char *papi)
{
    const dram_event *events[2] = {&pair->local, &pair->remote};
    for (int i = 0; i < 2; i++) {
        state.fd[i] = open_raw(events[i]);
        if (state.fd[i] < 0) {
            explain_refusal(events[i], errno, papi);
            if (i == 1)
                close(state.fd[0]);
            state.fd[0] = -1;
            return -1;
        }
    }
    return 0;
}

/* Counts since the start; a counter that shared the PMU with others (multiplexed) is scaled by
 * enabled / running time, and `share` is the smallest fraction of the time it counted. */
static int read_perf_event(double counts[2], double *share)
{
    *share = 1.0;
    for (int i = 0; i < 2; i++) {
        uint64_t values[3]; /* count, time enabled, time running (ns) */
        ssize_t got = read(state.fd[i], values, sizeof values);
        if (got != (ssize_t)sizeof values) {
            snprintf(state.reason, sizeof state.reason, "reading the counters failed (%s)",
                     got < 0 ? errno_name(errno) : "short read");
            return -1;
        }
        if (values[2] == 0) {
            snprintf(state.reason, sizeof state.reason,
                     "the counters were never scheduled on the PMU (time running 0): other users "
                     "hold them, e.g. the NMI watchdog or another perf session");
            return -1;
        }
        counts[i] = (double)values[0] * ((double)values[1] / (double)values[2]);
        if ((double)values[2] / (double)values[1] < *share)
            *share = (double)values[2] / (double)values[1];
    }
    return 0;
}

/* -- PAPI (libpfm4 resolves the names for this exact CPU) -------------------------------------- */

#ifdef PA_HAVE_PAPI
static int papi_failed(const char *what, int code, char *why, size_t size)
{
    snprintf(why, size, "%s: %s", what, PAPI_strerror(code));
    if (state.papi_set != PAPI_NULL) {
        PAPI_cleanup_eventset(state.papi_set);
        PAPI_destroy_eventset(&state.papi_set);
    }
    return -1;
}

static int start_papi(const event_pair *pair, char *why, size_t size)
{
    state.papi_set = PAPI_NULL;
    const int current = PAPI_VER_CURRENT;
    int version = PAPI_is_initialized() ? current : PAPI_library_init(current);
    if (version != current)
        return papi_failed("PAPI_library_init", version, why, size);
    int component = PAPI_get_component_index("perf_event");
    const PAPI_component_info_t *info = component < 0 ? NULL : PAPI_get_component_info(component);
    if (!info || info->disabled) {
        snprintf(why, size, "perf_event component disabled (%.200s)",
                 info ? info->disabled_reason : "not built in");
        return -1;
    }
    int code = PAPI_create_eventset(&state.papi_set);
    if (code != PAPI_OK)
        return papi_failed("PAPI_create_eventset", code, why, size);
    if ((code = PAPI_assign_eventset_component(state.papi_set, component)) != PAPI_OK)
        return papi_failed("PAPI_assign_eventset_component", code, why, size);
    PAPI_option_t option;
    memset(&option, 0, sizeof option);
    option.inherit.eventset = state.papi_set;
    option.inherit.inherit = PAPI_INHERIT_ALL; /* threads created later count too */
    if ((code = PAPI_set_opt(PAPI_INHERIT, &option)) != PAPI_OK)
        return papi_failed("PAPI_set_opt(PAPI_INHERIT)", code, why, size);
    const dram_event *events[2] = {&pair->local, &pair->remote};
    for (int i = 0; i < 2; i++)
        if ((code = PAPI_add_named_event(state.papi_set, events[i]->pfm)) != PAPI_OK) {
            char what[128];
            snprintf(what, sizeof what, "PAPI_add_named_event(%s)", events[i]->pfm);
            return papi_failed(what, code, why, size);
        }
    if ((code = PAPI_start(state.papi_set)) != PAPI_OK)
        return papi_failed("PAPI_start", code, why, size);
    snprintf(state.papi_version, sizeof state.papi_version, "PAPI %d.%d.%d.%d",
             PAPI_VERSION_MAJOR(version), PAPI_VERSION_MINOR(version),
             PAPI_VERSION_REVISION(version), PAPI_VERSION_INCREMENT(version));
    return 0;
}

static int read_papi(double counts[2])
{
    long long values[2];
    int code = PAPI_read(state.papi_set, values);
    if (code != PAPI_OK) {
        snprintf(state.reason, sizeof state.reason, "PAPI_read failed (%s)", PAPI_strerror(code));
        return -1;
    }
    counts[0] = (double)values[0];
    counts[1] = (double)values[1];
    return 0;
}
#endif

/* -- the interface ----------------------------------------------------------------------------- */

void pa_numa_counters_start(void)
{
    if (state.backend != NOT_STARTED)
        return;
    state.backend = NONE;
    state.cpu = find_cpu();
    if (!state.cpu)
        return;
    char papi[256] = "";
#ifdef PA_HAVE_PAPI
    const event_pair *pair = state.cpu->events;
    if (pair->local.pfm && pair->remote.pfm && start_papi(pair, papi, sizeof papi) == 0) {
        state.backend = PAPI;
        return;
    }
#endif
    if (start_perf_event(state.cpu->events, papi) == 0)
        state.backend = PERF_EVENT;
}

static void write_unavailable(pa_json *json, const char *reason)
{
    pa_json_key_bool(json, "available", 0);
    pa_json_key_string(json, "reason", reason);
}

void pa_numa_counters_json(pa_json *json)
{
    pa_json_key(json, "numa_accesses");
    pa_json_begin_object(json);
    double counts[2], share = 1.0;
    int counted = -1;
    char source[400] = "";
    const event_pair *pair = state.cpu ? state.cpu->events : NULL;
    if (state.backend == PERF_EVENT) {
        counted = read_perf_event(counts, &share);
        snprintf(source, sizeof source, "perf_event: %s, %s (%s)", pair->local.name,
                 pair->remote.name, state.cpu->cpu);
    }
#ifdef PA_HAVE_PAPI
    if (state.backend == PAPI) {
        counted = read_papi(counts);
        snprintf(source, sizeof source, "%s: %s, %s (%s)", state.papi_version, pair->local.pfm,
                 pair->remote.pfm, state.cpu->cpu);
    }
#endif
    if (state.backend == NOT_STARTED) {
        write_unavailable(json, "not counted: this benchmark does not start the NUMA access "
                                "counters (pa_numa_counters_start)");
    } else if (counted != 0) {
        write_unavailable(json, state.reason);
    } else {
        pa_json_key_bool(json, "available", 1);
        pa_json_key_int(json, "local", (long long)(counts[0] + 0.5));
        pa_json_key_int(json, "remote", (long long)(counts[1] + 0.5));
        if (share < 1.0) {
            size_t used = strlen(source);
            snprintf(source + used, sizeof source - used,
                     "; multiplexed: counted %.0f %% of the time, scaled", 100.0 * share);
        }
        pa_json_key_string(json, "source", source);
        pa_json_key_string(json, "counts", pair->counts);
    }
    pa_json_end_object(json);
}
