/* Where a rank ran: the CPUs the thread that called MPI_Init may run on (its affinity as the
 * kernel lists it, /proc/self/task/TID/status: Cpus_allowed_list, read at MPI_Init) and the CPUs
 * it was seen on: sched_getcpu(3) at MPI_Init, at every PA_IPM_CPU_EVERY-th event of that thread
 * (pa_ipm_record counts them down) and where the profile is written. The CPU seen most is the
 * rank's CPU: the profile maps it to its core group, package and NUMA node through the machine's
 * topology, and each pair of ranks to the link class that carries its messages (docs/profile.md,
 * Placement). Read back, never assumed from what the launcher was asked: a rank not bound
 * migrates, and its samples say so. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipm.h"
#include "placement.h"
#include "proc_field.h"

#define PA_IPM_MAX_CPUS 4096 /* CPUs counted one by one; one beyond is counted as "beyond" */

static _Atomic unsigned samples[PA_IPM_MAX_CPUS];
static _Atomic unsigned beyond; /* samples of a CPU numbered PA_IPM_MAX_CPUS or more */
static char allowed[256];
static pid_t init_thread;

static void sample(void)
{
    int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < PA_IPM_MAX_CPUS)
        atomic_fetch_add_explicit(&samples[cpu], 1, memory_order_relaxed);
    else if (cpu >= PA_IPM_MAX_CPUS)
        atomic_fetch_add_explicit(&beyond, 1, memory_order_relaxed);
}

void pa_ipm_cpu_sample(void)
{
    sample();
    pa_ipm_self.cpu_countdown = PA_IPM_CPU_EVERY;
}

void pa_ipm_placement_start(void)
{
    init_thread = (pid_t)syscall(SYS_gettid);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)init_thread);
    if (!pa_proc_field(path, "Cpus_allowed_list:", allowed, sizeof allowed))
        allowed[0] = '\0';
    pa_ipm_cpu_sample();
}

static int most_seen(void)
{
    int most = -1;
    unsigned best = 0;
    for (int cpu = 0; cpu < PA_IPM_MAX_CPUS; cpu++) {
        unsigned seen = atomic_load_explicit(&samples[cpu], memory_order_relaxed);
        if (seen > best)
            best = seen, most = cpu;
    }
    return most;
}

void pa_ipm_placement_end(char *cpus_allowed, size_t size, int *cpu)
{
    static atomic_flag ended = ATOMIC_FLAG_INIT; /* the rank file and the profile both ask */
    if (!atomic_flag_test_and_set(&ended) && (pid_t)syscall(SYS_gettid) == init_thread)
        sample();
    snprintf(cpus_allowed, size, "%s", allowed);
    *cpu = most_seen();
}

void pa_ipm_write_placement(pa_json *json)
{
    char list[sizeof allowed];
    int cpu;
    pa_ipm_placement_end(list, sizeof list, &cpu);
    pa_json_key(json, "placement");
    pa_json_begin_object(json);
    pa_json_key_text_or_null(json, "cpus_allowed", list);
    pa_json_key_index_or_null(json, "cpu", cpu);
    pa_json_key(json, "cpu_samples"); /* [[cpu, samples], ...], the CPUs seen, in order */
    pa_json_begin_array(json);
    for (int c = 0; c < PA_IPM_MAX_CPUS; c++) {
        unsigned seen = atomic_load_explicit(&samples[c], memory_order_relaxed);
        if (seen > 0) {
            long long pair[2] = {c, seen};
            pa_json_int_array(json, pair, 2);
        }
    }
    pa_json_end_array(json);
    pa_json_key_int(json, "samples_beyond", atomic_load_explicit(&beyond, memory_order_relaxed));
    pa_json_end_object(json);
}
