/* pa-topology: the machine as hwloc sees it, as a perfatlas.topology/1 document (docs/contract.md).
 * Cores and packages are hwloc logical indices; PUs and NUMA nodes are OS indices, the numbers that
 * cpus= and node= take. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "args.h"
#include "cpu_arm.h"
#include "json.h"
#include "result.h"
#include "timer.h"

static const pa_param params[] = {0};

static void key_cpuset(pa_json *json, const char *key, hwloc_const_cpuset_t set)
{
    char list[1024];
    hwloc_bitmap_list_snprintf(list, sizeof list, set);
    pa_json_key_string(json, key, list);
}

/* The package's CPUModel info attribute, else the first "model name" of /proc/cpuinfo, else (an
 * Arm CPU, which hwloc describes by MIDR fields only) the name MIDR_EL1 gives (cpu_arm.c). */
static void cpu_model(hwloc_topology_t topo, char *out, size_t size)
{
    hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : NULL;
    snprintf(out, size, "%s", model ? model : "unknown");
    /* /proc/cpuinfo describes this machine, not one loaded from HWLOC_XMLFILE */
    int here = hwloc_topology_is_thissystem(topo);
    FILE *cpuinfo = model || !here ? NULL : fopen("/proc/cpuinfo", "r");
    char line[512];
    while (cpuinfo && fgets(line, sizeof line, cpuinfo)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, size, "%s", colon + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (cpuinfo)
        fclose(cpuinfo);
    if (!model && here && !strcmp(out, "unknown"))
        pa_arm_cpu_describe(out, size);
}

/* Memory a NUMA node of this subtype holds is not the PUs' ordinary memory (hwloc's NUMANode
 * subtypes: HBM, GPUMemory, NVM, SPM, CXL-DRAM ...); DRAM or none is ordinary. */
static int special_memory(hwloc_obj_t node)
{
    return node->subtype && strcmp(node->subtype, "DRAM") != 0;
}

/* The local NUMA node of a PU: among the nodes whose locality holds it, the one with the
 * narrowest locality (a package's node before a machine-wide CXL node), ordinary memory before
 * HBM or GPU memory of the same locality; NULL where no node holds it (a restricted cpuset). */
static hwloc_obj_t numa_node_of(hwloc_topology_t topo, unsigned pu)
{
    hwloc_obj_t best = NULL, node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node))) {
        if (!hwloc_bitmap_isset(node->cpuset, pu))
            continue;
        if (!best) {
            best = node;
            continue;
        }
        int weight = hwloc_bitmap_weight(node->cpuset);
        int best_weight = hwloc_bitmap_weight(best->cpuset);
        if (weight < best_weight ||
            (weight == best_weight && special_memory(best) && !special_memory(node)))
            best = node;
    }
    return best;
}

static long long ancestor_index(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_obj_t pu)
{
    hwloc_obj_t above = hwloc_get_ancestor_obj_by_type(topo, type, pu);
    return above ? (long long)above->logical_index : -1;
}

static void write_pus(pa_json *json, hwloc_topology_t topo)
{
    pa_json_key(json, "pus");
    pa_json_begin_array(json);
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu))) {
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
        hwloc_obj_t node = numa_node_of(topo, pu->os_index);
        pa_json_begin_object(json);
        pa_json_key_int(json, "os_index", pu->os_index);
        pa_json_key_int(json, "core", core ? (long long)core->logical_index : -1);
        pa_json_key_int(json, "package", package ? (long long)package->logical_index : -1);
        pa_json_key_int(json, "numa_node", node ? (long long)node->os_index : -1);
        /* the caches and die it shares with other PUs (cpu.core_to_core checks its groups
         * against them): hwloc logical indices, -1 where there is none */
        pa_json_key_int(json, "l2", ancestor_index(topo, HWLOC_OBJ_L2CACHE, pu));
        pa_json_key_int(json, "l3", ancestor_index(topo, HWLOC_OBJ_L3CACHE, pu));
        pa_json_key_int(json, "die", ancestor_index(topo, HWLOC_OBJ_DIE, pu));
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

/* Whether some PU has this node as its local node; a node that is no PU's local node holds
 * memory only (CXL expanders, HBM in flat mode, GPU memory exposed as a NUMA node). */
static int local_to_some_pu(hwloc_topology_t topo, hwloc_obj_t node)
{
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)))
        if (numa_node_of(topo, pu->os_index) == node)
            return 1;
    return 0;
}

/* A memory-side cache in front of the node (hwloc MemCache: e.g. DRAM caching NVM, or MCDRAM in
 * cache mode): the node's memory parents up to the first CPU-side object. */
static void write_memory_side_cache(pa_json *json, hwloc_obj_t node)
{
    pa_json_key(json, "memory_side_cache");
    hwloc_obj_t parent = node->parent;
    while (parent && parent->type != HWLOC_OBJ_MEMCACHE && hwloc_obj_type_is_memory(parent->type))
        parent = parent->parent;
    if (!parent || parent->type != HWLOC_OBJ_MEMCACHE) {
        pa_json_null(json);
        return;
    }
    pa_json_begin_object(json);
    pa_json_key_int(json, "size_bytes", (long long)parent->attr->cache.size);
    pa_json_key_int(json, "line_bytes", parent->attr->cache.linesize);
    pa_json_key_int(json, "level", parent->attr->cache.depth);
    pa_json_end_object(json);
}

static void write_numa_nodes(pa_json *json, hwloc_topology_t topo)
{
    pa_json_key(json, "numa_nodes");
    pa_json_begin_array(json);
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node))) {
        pa_json_begin_object(json);
        pa_json_key_int(json, "os_index", node->os_index);
        pa_json_key_int(json, "memory_bytes", (long long)node->attr->numanode.local_memory);
        key_cpuset(json, "cpus", node->cpuset);
        if (node->subtype)
            pa_json_key_string(json, "subtype", node->subtype);
        else {
            pa_json_key(json, "subtype");
            pa_json_null(json);
        }
        pa_json_key_bool(json, "memory_only", !local_to_some_pu(topo, node));
        write_memory_side_cache(json, node);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

/* Hybrid processors: hwloc's CPU kinds (efficiency 0 = the least powerful), with the CoreType and
 * FrequencyMaxMHz infos where the OS or hwloc reports them; one kind (or none) on most machines. */
static void write_cpu_kinds(pa_json *json, hwloc_topology_t topo)
{
    pa_json_key(json, "cpu_kinds");
    pa_json_begin_array(json);
    int kinds = hwloc_cpukinds_get_nr(topo, 0);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int k = 0; k < kinds; k++) {
        int efficiency = -1;
        unsigned ninfos = 0;
        struct hwloc_info_s *infos = NULL;
        if (hwloc_cpukinds_get_info(topo, (unsigned)k, set, &efficiency, &ninfos, &infos, 0))
            continue;
        pa_json_begin_object(json);
        key_cpuset(json, "cpus", set);
        pa_json_key_int(json, "efficiency", efficiency);
        for (unsigned i = 0; i < ninfos; i++)
            if (!strcmp(infos[i].name, "CoreType"))
                pa_json_key_string(json, "core_type", infos[i].value);
            else if (!strcmp(infos[i].name, "FrequencyMaxMHz"))
                pa_json_key_int(json, "max_mhz", atoll(infos[i].value));
        pa_json_end_object(json);
    }
    hwloc_bitmap_free(set);
    pa_json_end_array(json);
}

/* Relative latencies between NUMA nodes as the OS reports them (ACPI SLIT); where none are reported
 * (one node, or firmware without a SLIT) 10 on the diagonal, null elsewhere, and the source says
 * so. */
static void write_distances(pa_json *json, hwloc_topology_t topo)
{
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    struct hwloc_distances_s *found = NULL;
    unsigned count = 1;
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &count, &found,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) ||
        count == 0)
        found = NULL;
    pa_json_key(json, "numa_distances");
    pa_json_begin_array(json);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t from = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        pa_json_begin_array(json);
        for (int j = 0; j < n; j++) {
            hwloc_obj_t to = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)j);
            hwloc_uint64_t forward, backward;
            if (found && !hwloc_distances_obj_pair_values(found, from, to, &forward, &backward))
                pa_json_int(json, (long long)forward);
            else if (!found && i == j)
                pa_json_int(json, 10);
            else
                pa_json_null(json);
        }
        pa_json_end_array(json);
    }
    pa_json_end_array(json);
    pa_json_key_string(json, "numa_distances_source",
                       found ? "operating system (ACPI SLIT)"
                             : "identity: the operating system reports no NUMA distances");
    if (found)
        hwloc_distances_release(topo, found);
}

static const char *cache_type(hwloc_obj_t cache)
{
    switch (cache->attr->cache.type) {
    case HWLOC_OBJ_CACHE_DATA:
        return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION:
        return "instruction";
    default:
        return "unified";
    }
}

/* One entry per distinct cache (level, type), from L1 outwards. */
static void write_caches(pa_json *json, hwloc_topology_t topo)
{
    static const hwloc_obj_type_t types[] = {
        HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
        HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
    pa_json_key(json, "caches");
    pa_json_begin_array(json);
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        int count = hwloc_get_nbobjs_by_type(topo, types[t]);
        hwloc_obj_t first = hwloc_get_obj_by_type(topo, types[t], 0);
        if (count <= 0 || !first)
            continue;
        pa_json_begin_object(json);
        pa_json_key_int(json, "level", first->attr->cache.depth);
        pa_json_key_string(json, "type", cache_type(first));
        pa_json_key_int(json, "size_bytes", (long long)first->attr->cache.size);
        pa_json_key_int(json, "line_bytes", first->attr->cache.linesize);
        key_cpuset(json, "cpus", first->cpuset);
        pa_json_key_int(json, "count", count);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

static int compare_sizes(const void *a, const void *b)
{
    hwloc_uint64_t x = *(const hwloc_uint64_t *)a, y = *(const hwloc_uint64_t *)b;
    return (x > y) - (x < y);
}

/* Page sizes larger than the base page that any NUMA node offers (hugetlbfs sizes). */
static void write_huge_page_sizes(pa_json *json, hwloc_topology_t topo)
{
    hwloc_uint64_t sizes[64];
    int n = 0;
    hwloc_uint64_t base = (hwloc_uint64_t)sysconf(_SC_PAGESIZE);
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)))
        for (unsigned i = 0; i < node->attr->numanode.page_types_len; i++) {
            hwloc_uint64_t size = node->attr->numanode.page_types[i].size;
            int seen = size <= base;
            for (int k = 0; k < n && !seen; k++)
                seen = sizes[k] == size;
            if (!seen && n < 64)
                sizes[n++] = size;
        }
    qsort(sizes, (size_t)n, sizeof *sizes, compare_sizes);
    pa_json_key(json, "huge_page_sizes");
    pa_json_begin_array(json);
    for (int i = 0; i < n; i++)
        pa_json_int(json, (long long)sizes[i]);
    pa_json_end_array(json);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-topology", "the machine's topology (hwloc) as JSON", params, 0, argc,
                  argv);
    hwloc_topology_t topo = pa_topology();
    char model[256];
    cpu_model(topo, model, sizeof model);

    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    pa_json_begin_object(&json);
    pa_json_key_string(&json, "schema", "perfatlas.topology/1");
    pa_json_key_string(&json, "hwloc_version", HWLOC_VERSION);
    pa_json_key_string(&json, "cpu_model", model);
    pa_json_key_int(&json, "packages", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
    pa_json_key_int(&json, "cores", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    write_pus(&json, topo);
    write_numa_nodes(&json, topo);
    write_distances(&json, topo);
    write_caches(&json, topo);
    write_huge_page_sizes(&json, topo);
    write_cpu_kinds(&json, topo);
    /* 0 where the topology came from HWLOC_XMLFILE: nothing can be bound or measured on it */
    pa_json_key_bool(&json, "this_system", hwloc_topology_is_thissystem(topo));
    pa_timer_init(); /* the timer every measuring executable uses, for `perfatlas doctor` */
    pa_timer_json(&json);
    pa_result_build_json(&json); /* what the executables were built for, for `perfatlas doctor` */
    pa_json_end_object(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
