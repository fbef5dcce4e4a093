#include "counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(uint64_t config, int group)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = group < 0;
    attr.exclude_kernel = 1; /* what perf_event_paranoid 2 allows an unprivileged user */
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_GROUP;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, group, 0);
}

int pb_counters_open(pb_counters *c, char *why, size_t size)
{
    c->group = open_event(PERF_COUNT_HW_CPU_CYCLES, -1);
    if (c->group < 0) {
        snprintf(why, size,
                 "no hardware counters: perf_event_open(cycles) failed (%s); a VM without a "
                 "virtual PMU, or /proc/sys/kernel/perf_event_paranoid above 2",
                 strerror(errno));
        c->instructions = -1;
        return -1;
    }
    c->instructions = open_event(PERF_COUNT_HW_INSTRUCTIONS, c->group);
    if (c->instructions < 0) {
        snprintf(why, size, "no hardware counters: perf_event_open(instructions) failed (%s)",
                 strerror(errno));
        pb_counters_close(c);
        return -1;
    }
    ioctl(c->group, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(c->group, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    return 0;
}

void pb_counters_read(const pb_counters *c, uint64_t *cycles, uint64_t *instructions)
{
    uint64_t values[3] = {0, 0, 0}; /* PERF_FORMAT_GROUP: count, then one value per event */
    if (read(c->group, values, sizeof values) != (ssize_t)sizeof values)
        values[1] = values[2] = 0;
    *cycles = values[1];
    *instructions = values[2];
}

void pb_counters_close(pb_counters *c)
{
    if (c->instructions >= 0)
        close(c->instructions);
    if (c->group >= 0)
        close(c->group);
    c->group = c->instructions = -1;
}
