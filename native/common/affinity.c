#define _GNU_SOURCE
#include "affinity.h"

#include <omp.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "files.h"

static hwloc_topology_t topology;
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

/* HWLOC_XMLFILE names a topology to use instead of this machine's (hwloc's own variable). hwloc
 * quietly falls back to the real machine when that file cannot be loaded; here it is an error,
 * so that a plan is never computed for another machine than the one asked for. hwloc opens it
 * itself and would wait forever on a FIFO without a writer: only a regular file is handed on. */
static void topology_load_once(void)
{
    const char *xml = getenv("HWLOC_XMLFILE");
    if (xml && *xml)
        pa_require_regular(xml, "HWLOC_XMLFILE", "give an hwloc XML file (lstopo topology.xml)");
    if (hwloc_topology_init(&topology))
        pa_fail(2, "hwloc cannot read this machine's topology: %s", strerror(errno));
    /* memory-side caches (hwloc MemCache) are dropped by default; pa-topology reports them */
    hwloc_topology_set_type_filter(topology, HWLOC_OBJ_MEMCACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (xml && *xml && hwloc_topology_set_xml(topology, xml))
        pa_fail(2, "HWLOC_XMLFILE=%s is not a topology hwloc can load: %s", xml, strerror(errno));
    if (hwloc_topology_load(topology))
        pa_fail(2, "hwloc cannot load the topology%s%s: %s", xml ? " of HWLOC_XMLFILE=" : "",
                xml ? xml : "", strerror(errno));
}

/* Loaded once per process, whichever thread asks first: unpinned OpenMP teams each ask for the
 * topology at once (pa-parbench bind=none), and two concurrent hwloc loads corrupt each other. */
void pa_topology_load(void) { pthread_once(&topology_once, topology_load_once); }

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
