#define _GNU_SOURCE
#include "affinity.h"

#include <omp.h>

#include <errno.h>
#include <string.h>

#include "args.h"

static hwloc_topology_t topology;

void pa_topology_load(void)
{
    if (topology)
        return;
    if (hwloc_topology_init(&topology) || hwloc_topology_load(topology))
        pa_fail(2, "hwloc cannot read this machine's topology: %s", strerror(errno));
}

hwloc_topology_t pa_topology(void)
{
    pa_topology_load();
    return topology;
}

unsigned pa_cache_line_bytes(void)
{
    hwloc_obj_t l1 = hwloc_get_obj_by_type(pa_topology(), HWLOC_OBJ_L1CACHE, 0);
    return l1 && l1->attr->cache.linesize ? l1->attr->cache.linesize : 64;
}

static void list_string(hwloc_const_bitmap_t set, char *out, size_t size)
{
    if (hwloc_bitmap_list_snprintf(out, size, set) < 0 && size > 0)
        out[0] = '\0';
}

void pa_cpus_validate(const int *cpus, int ncpus)
{
    hwloc_topology_t topo = pa_topology();
    for (int i = 0; i < ncpus; i++) {
        if (hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpus[i]))
            continue;
        char available[256];
        list_string(hwloc_topology_get_allowed_cpuset(topo), available, sizeof available);
        pa_fail(2, "cpu %d does not exist: this machine has PUs %s", cpus[i], available);
    }
}

void pa_pin_self(int cpu, char *applied, size_t size)
{
    hwloc_topology_t topo = pa_topology();
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu);
    if (!pu)
        pa_fail(2, "cpu %d does not exist on this machine", cpu);
    if (hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT))
        pa_fail(2, "cannot bind a thread to cpu %d: %s (is it outside this job's cpuset?)", cpu,
                strerror(errno));
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD))
        hwloc_bitmap_zero(set);
    list_string(set, applied, size);
    hwloc_bitmap_free(set);
}

int pa_team_thread(int expected)
{
    if (omp_get_num_threads() != expected)
        pa_fail(2, "OpenMP gave %d threads instead of %d (check OMP_THREAD_LIMIT)",
                omp_get_num_threads(), expected);
    return omp_get_thread_num();
}
