/* pa-mem-numa-matrix: latency and read bandwidth from every CPU node to every memory node, in one
 * launch (the NUMA matrix of Intel's Memory Latency Checker and of McCalpin's STREAM NUMA runs).
 *
 * For each NUMA node with PUs (a row) and each node with memory (a column) the buffer is bound to
 * the column's node (mbind MPOL_BIND, memory.h) before its first touch, and its placement is read
 * back with move_pages; then
 *   latency:   one thread pinned to the row's first PU builds and follows a page-local random
 *              pointer chain (chase.h: lmbench's lat_mem_rd),
 *   bandwidth: threads pinned to the row's PUs (one per core first, hwloc) each first-touch and
 *              read their own slice (kernels.def's read: cachebench's read kernel).
 * Memory-only nodes (no PUs) appear as columns only, CPU-only nodes (no memory) as rows only. One
 * document per (cpu node, memory node, measure), written as one JSON array at the end. */
#include <numa.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "chase.h"
#include "kernels.h"
#include "memory.h"
#include "numa_counters.h"
#include "result.h"
#include "sampler.h"
#include "timer.h"

static const pa_param params[] = {
    {"latency_bytes", PA_SIZE, "64MiB", "working set of the pointer chase", NULL, 4096, 0x1p37},
    {"bandwidth_bytes", PA_SIZE, "256MiB", "buffer read by the threads of one CPU node", NULL, 4096,
     0x1p40},
    {"threads", PA_INT, "0",
     "bandwidth threads per CPU node, one per core first then SMT siblings (0: one per core)", NULL,
     0, 4096},
    {"page", PA_SIZE, "4KiB", "page size of the buffers", "4KiB,2MiB", 0, 0},
    {"samples", PA_INT, "7", "timed samples of each cell after warm-up", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
    {"seed", PA_INT, "1", "seed of the random chain order", NULL, 0, 0x1p62},
};

typedef struct {
    int os_index;
    int npus, ncores; /* PUs of the node, one per core first; cores among them */
    int *pus;
    int has_memory;
} node;

typedef struct {
    int cpu_node, mem_node, latency; /* latency, else bandwidth */
    int nthreads;
    pa_thread_placement *threads;
    pa_buffer buffer; /* unmapped after the measurement; its read-back fields stay */
    char why[512];    /* not measurable, or empty */
    double *seconds, *values;
    pa_chain chain; /* latency: its shape, for "derived" */
    uint64_t repetitions;
    size_t elements; /* bandwidth: doubles read per pass over all threads */
} cell;

/* PUs of a node's cpuset, the first PU of every core before any core's second (Machine's order). */
static int node_pus(hwloc_const_cpuset_t cpuset, int *pus, int *ncores)
{
    hwloc_topology_t topo = pa_topology();
    int count = 0, cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, cpuset, HWLOC_OBJ_CORE);
    *ncores = cores;
    for (int round = 0;; round++) {
        int added = 0;
        for (int c = 0; c < cores; c++) {
            hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(topo, cpuset, HWLOC_OBJ_CORE, c);
            hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU,
                                                                 (unsigned)round);
            if (pu && hwloc_bitmap_isset(cpuset, pu->os_index)) {
                pus[count++] = (int)pu->os_index;
                added = 1;
            }
        }
        if (!added)
            break;
    }
    if (cores == 0) /* no Core objects (some VMs): the PUs in index order */
        for (int p = hwloc_bitmap_first(cpuset); p >= 0; p = hwloc_bitmap_next(cpuset, p))
            pus[count++] = p, *ncores = count;
    return count;
}

static node *find_nodes(int *count)
{
    hwloc_topology_t topo = pa_topology();
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    node *nodes = pa_calloc((size_t)n, sizeof *nodes, "nodes");
    int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        nodes[i].os_index = (int)obj->os_index;
        nodes[i].pus = pa_calloc((size_t)npus + 1, sizeof(int), "pus");
        nodes[i].npus = node_pus(obj->cpuset, nodes[i].pus, &nodes[i].ncores);
        /* hwloc's size where it knows it, else libnuma's; a node without memory cannot hold a
         * buffer bound to it */
        long long bytes = numa_available() < 0 ? 0 : numa_node_size64(nodes[i].os_index, NULL);
        nodes[i].has_memory = obj->attr->numanode.local_memory > 0 || bytes > 0 || n == 1;
    }
    *count = n;
    return nodes;
}

/* Bind to the node; a kernel without NUMA support has one node, where first touch is the binding. */
static int policy(int mem_node) { return numa_available() < 0 ? PA_NODE_LOCAL : mem_node; }

static void copy_why(cell *c, const char *why)
{
    if (why && !c->why[0])
        snprintf(c->why, sizeof c->why, "%s", why);
}

static void measure_latency(cell *c, const node *row, size_t bytes, size_t page, double min_s,
                            int samples, uint64_t seed)
{
    c->nthreads = 1;
    c->threads[0].cpu_requested = row->pus[0];
    copy_why(c, pa_buffer_map(&c->buffer, bytes, page, policy(c->mem_node)));
    pa_pin_self(row->pus[0], c->threads[0].cpus_allowed, sizeof c->threads[0].cpus_allowed);
    if (c->why[0])
        return;
    pa_chain_build(&c->chain, c->buffer.base, bytes, pa_cache_line_bytes(), page, PA_CHAIN_PAGE,
                   seed);
    copy_why(c, pa_buffer_verify(&c->buffer));
    if (pa_chain_check(&c->chain))
        pa_fail(3, "the chain is not one cycle through all %zu lines", c->chain.lines);
    if (c->why[0])
        return;
    pa_chaser chaser;
    pa_chaser_init(&chaser, &c->chain);
    pa_chaser_warm(&chaser);
    pa_sampler sampler = {.work = pa_chaser_work, .min_seconds = min_s, .team = 0};
    c->repetitions = pa_sampler_calibrate(&sampler, &chaser);
    for (int i = 0; i < samples; i++) {
        c->seconds[i] = pa_sampler_sample(&sampler, &chaser, c->repetitions);
        c->values[i] = c->seconds[i] * 1e9 / (double)(c->repetitions * PA_CHASE_BLOCK);
    }
    if (pa_chaser_check(&chaser))
        pa_fail(3, "the pointer chase did not end where %llu loads lead: the chain is corrupt",
                (unsigned long long)chaser.loads);
}

/* Each thread first-touches and reads its own contiguous slice, as pa-mem-bandwidth does. */
static void measure_bandwidth(cell *c, const node *row, int threads, size_t bytes, size_t page,
                              double min_s, int samples)
{
    const pa_kernel *read = pa_kernel_find("read");
    c->nthreads = threads;
    size_t grain = PA_KERNEL_GRAIN * sizeof(double) * (size_t)threads;
    if (bytes < grain)
        pa_fail(2, "bandwidth_bytes=%zu is too small for %d threads: it needs at least %zu bytes",
                bytes, threads, grain);
    size_t per_thread = bytes / grain * PA_KERNEL_GRAIN;
    c->elements = per_thread * (size_t)threads;
    copy_why(c, pa_buffer_map(&c->buffer, c->elements * sizeof(double), page, policy(c->mem_node)));
    char failure[320] = "";
    omp_set_dynamic(0);
#pragma omp parallel num_threads(threads)
    {
        int t = pa_team_thread(threads);
        c->threads[t].cpu_requested = row->pus[t];
        pa_pin_self(row->pus[t], c->threads[t].cpus_allowed, sizeof c->threads[t].cpus_allowed);
        pa_slice slice = {.kernel = read, .n = per_thread};
        slice.array[0] = (double *)c->buffer.base + (size_t)t * per_thread;
        if (!c->why[0])
            pa_slice_init(&slice);
#pragma omp barrier
#pragma omp master
        if (!c->why[0])
            copy_why(c, pa_buffer_verify(&c->buffer));
#pragma omp barrier
        if (!c->why[0]) {
            pa_sampler sampler = {.work = pa_slice_work, .min_seconds = min_s, .team = 1};
            uint64_t iterations = pa_sampler_calibrate(&sampler, &slice);
            for (int i = 0; i < samples; i++) {
                double seconds = pa_sampler_sample(&sampler, &slice, iterations);
#pragma omp master
                c->seconds[i] = seconds;
            }
            char why[256];
            if (pa_slice_verify(&slice, why, sizeof why)) {
#pragma omp critical
                snprintf(failure, sizeof failure, "thread %d: %s", t, why);
            }
#pragma omp master
            c->repetitions = iterations;
        }
    }
    if (failure[0])
        pa_fail(3, "%s", failure);
    double moved = (double)pa_kernel_bytes_per_iteration(read) * (double)c->elements;
    for (int i = 0; i < samples && !c->why[0]; i++)
        c->values[i] = moved * (double)c->repetitions / c->seconds[i];
}

static void write_cell(pa_json *json, const pa_args *args, const cell *c, int samples)
{
    pa_result_begin(json, "mem.numa_matrix", args);
    pa_json_key_int(json, "cpu_node", c->cpu_node);
    pa_json_key_int(json, "mem_node", c->mem_node);
    pa_json_key_string(json, "measure", c->latency ? "latency" : "bandwidth");
    pa_result_context(json, c->threads, c->nthreads, &c->buffer);
    if (c->why[0]) {
        pa_result_not_measurable(json, c->why);
    } else {
        if (c->latency)
            pa_result_samples(json, "latency_ns", "ns", c->values, c->seconds, samples);
        else
            pa_result_samples(json, "bandwidth_Bps", "byte/s", c->values, c->seconds, samples);
        pa_json_key(json, "derived");
        pa_json_begin_object(json);
        /* the kernel's relative distance (ACPI SLIT: 10 local), 0 where unknown */
        pa_json_key_int(json, "distance",
                        numa_available() < 0 ? 0 : numa_distance(c->cpu_node, c->mem_node));
        if (c->latency)
            pa_chase_derived_json(json, &c->chain, c->repetitions);
        else
            pa_kernel_derived_json(json, pa_kernel_find("read"), c->elements, c->repetitions, 1);
        pa_json_end_object(json);
    }
    pa_result_end(json);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-mem-numa-matrix",
                  "latency and read bandwidth from every CPU node to every memory node", params,
                  sizeof params / sizeof *params, argc, argv);
    pa_timer_init();
    pa_numa_counters_start(); /* before the OpenMP teams, which then count with it */
    size_t latency_bytes = pa_arg_size(&args, "latency_bytes");
    size_t bandwidth_bytes = pa_arg_size(&args, "bandwidth_bytes");
    size_t page = pa_arg_size(&args, "page");
    int per_node = (int)pa_arg_int(&args, "threads");
    int samples = (int)pa_arg_int(&args, "samples");
    double min_s = pa_arg_double(&args, "min_sample_time");
    uint64_t seed = (uint64_t)pa_arg_int(&args, "seed");

    int nnodes;
    node *nodes = find_nodes(&nnodes);
    pa_json json; /* each cell's document is written (and flushed) as soon as it is measured */
    pa_json_init(&json, pa_args_output(&args));
    pa_json_begin_array(&json);
    cell *cells = pa_calloc((size_t)(2 * nnodes * nnodes), sizeof *cells, "cells");
    int ncells = 0;
    for (int r = 0; r < nnodes; r++) {
        if (nodes[r].npus == 0)
            continue; /* memory only: a column, never a row */
        int threads = per_node ? per_node : nodes[r].ncores;
        if (threads > nodes[r].npus)
            pa_fail(2, "threads=%d exceeds the %d PUs of NUMA node %d", threads, nodes[r].npus,
                    nodes[r].os_index);
        for (int m = 0; m < nnodes; m++) {
            if (!nodes[m].has_memory)
                continue; /* no memory: a row, never a column */
            for (int latency = 1; latency >= 0; latency--) {
                cell *c = &cells[ncells++];
                c->cpu_node = nodes[r].os_index;
                c->mem_node = nodes[m].os_index;
                c->latency = latency;
                c->threads = pa_calloc((size_t)threads, sizeof *c->threads, "threads");
                c->seconds = pa_calloc((size_t)samples, sizeof(double), "seconds");
                c->values = pa_calloc((size_t)samples, sizeof(double), "values");
                if (latency)
                    measure_latency(c, &nodes[r], latency_bytes, page, min_s, samples, seed);
                else
                    measure_bandwidth(c, &nodes[r], threads, bandwidth_bytes, page, min_s, samples);
                pa_buffer_unmap(&c->buffer);
                write_cell(&json, &args, c, samples);
            }
        }
    }
    if (ncells == 0)
        pa_fail(2, "hwloc reports no NUMA node with both PUs and memory reachable");
    pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
