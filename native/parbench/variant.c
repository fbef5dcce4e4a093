#include "variant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"

int pb_variant_shape(const pb_variant *v, pb_instance *one, char *why, size_t size)
{
    if (v->stride == 0 || v->stride > PB_STRIDE_GRAIN || (v->stride & (v->stride - 1))) {
        snprintf(why, size, "stride=%zu is not one of 1, 2, 4, 8, 16, 32", v->stride);
        return -1;
    }
    if (v->stride > 1 && !v->kernel->strided) {
        snprintf(why, size,
                 "stride=%zu does not apply to kernel %s, which has no stride (give stride=1)",
                 v->stride, v->kernel->name);
        return -1;
    }
    return pb_instance_shape(one, v->kernel, v->bytes / (size_t)v->threads, v->stride, why, size);
}

static void record(char *failure, size_t size, int t, const char *why)
{
#pragma omp critical(pb_failure)
    if (!failure[0])
        snprintf(failure, size, "thread %d: %s", t, why);
}

void pb_team_setup(const pb_variant *v, const int *cpus, int t, pb_instance *k,
                   pa_thread_placement *placement, char *failure, size_t size)
{
    if (cpus) {
        placement->cpu_requested = cpus[t];
        pa_pin_self(cpus[t], placement->cpus_allowed, sizeof placement->cpus_allowed);
    } else { /* bind=none: where the OS may run the thread, read back */
        placement->cpu_requested = -1;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (hwloc_get_cpubind(pa_topology(), set, HWLOC_CPUBIND_THREAD))
            hwloc_bitmap_zero(set);
        hwloc_bitmap_list_snprintf(placement->cpus_allowed, sizeof placement->cpus_allowed, set);
        hwloc_bitmap_free(set);
    }
    char why[256];
    if (pb_variant_shape(v, k, why, sizeof why))
        record(failure, size, t, why);
    else
        pb_instance_setup(k);
}

void pb_team_check(pb_instance *k, int t, char *failure, size_t size)
{
    const char *corrupt = getenv("PERFATLAS_PARBENCH_CORRUPT");
    if (corrupt && strcmp(corrupt, "1") == 0 && t == 0)
        pb_instance_corrupt(k);
    char why[320];
    if (pb_instance_check(k, why, sizeof why))
        record(failure, size, t, why);
    pb_instance_free(k);
}

void pb_kernel_counts_json(pa_json *json, const pb_kernel *kernel)
{
    int bytes = pb_kernel_bytes_per_iteration(kernel);
    pa_json_key_string(json, "class", kernel->class_name);
    pa_json_key_string(json, "iteration", kernel->iteration);
    pa_json_key_int(json, "load_bytes_per_iteration", kernel->load_bytes);
    pa_json_key_int(json, "store_bytes_per_iteration", kernel->store_bytes);
    pa_json_key_int(json, "bytes_per_iteration", bytes);
    pa_json_key_int(json, "flops_per_iteration", kernel->flops);
    pa_json_key_double(json, "write_fraction", bytes ? (double)kernel->store_bytes / bytes : 0.0);
}
