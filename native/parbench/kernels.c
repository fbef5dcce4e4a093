/* The catalog built from kernels.def, and the life of one instance: shape, setup, passes, check. */
#include "kernels.h"
#include "alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PB_KERNEL(name, class_name, iteration, loads, stores, flops, strided, description) \
    {#name,                                                                                \
     #class_name,                                                                          \
     iteration,                                                                            \
     description,                                                                          \
     loads,                                                                                \
     stores,                                                                               \
     flops,                                                                                \
     strided,                                                                              \
     pb_##name##_shape,                                                                    \
     pb_##name##_init,                                                                     \
     pb_##name##_pass,                                                                     \
     pb_##name##_check},
static const pb_kernel kernels[] = {
#include "kernels.def"
};
#undef PB_KERNEL
#define KERNEL_COUNT (sizeof kernels / sizeof *kernels)

const pb_kernel *pb_kernel_first(void) { return &kernels[0]; }

const pb_kernel *pb_kernel_next(const pb_kernel *kernel)
{
    return kernel + 1 < kernels + KERNEL_COUNT ? kernel + 1 : NULL;
}

const pb_kernel *pb_kernel_find(const char *name)
{
    for (size_t i = 0; i < KERNEL_COUNT; i++)
        if (strcmp(kernels[i].name, name) == 0)
            return &kernels[i];
    return NULL;
}

const char *pb_kernel_names(void)
{
    static char names[1024];
    if (!names[0])
        for (size_t i = 0; i < KERNEL_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "",
                     kernels[i].name);
    return names;
}

int pb_instance_shape(pb_instance *k, const pb_kernel *kernel, size_t bytes, size_t stride,
                      char *why, size_t size)
{
    memset(k, 0, sizeof *k);
    k->kernel = kernel;
    k->stride = stride;
    k->output = -1;
    size_t fewest = kernel->shape(k, bytes);
    if (k->n == 0) {
        snprintf(why, size, "%zu bytes per thread are too few for kernel %s: it needs at least %zu",
                 bytes, kernel->name, fewest);
        return -1;
    }
    return 0;
}

void pb_instance_setup(pb_instance *k)
{
    for (int a = 0; a < PB_MAX_ARRAYS; a++) {
        if (!k->array_bytes[a])
            continue;
        size_t rounded = (k->array_bytes[a] + 63) / 64 * 64;
        k->array[a] = pa_alloc_aligned(64, rounded, 1, "a kernel's array");
    }
    k->kernel->init(k);
    k->passes = 0;
}

void pb_instance_run(pb_instance *k, uint64_t passes)
{
    for (uint64_t p = 0; p < passes; p++) {
        k->kernel->pass(k);
        k->passes++;
    }
    /* observable: the compiler must keep the passes that produced them */
    *(volatile double *)&k->result = k->result;
    *(volatile uint64_t *)&k->word = k->word;
}

void pb_instance_work(void *instance, uint64_t passes) { pb_instance_run(instance, passes); }

int pb_instance_check(pb_instance *k, char *why, size_t size)
{
    if (k->passes == 0)
        return 0;
    return k->kernel->check(k, why, size);
}

void pb_instance_corrupt(pb_instance *k)
{
    if (k->output < 0) {
        k->result = k->result * 1.5 + 1.0;
        k->word ^= 1u << 20;
        return;
    }
    /* the middle of the output: every check covers all of it, written or not (a dgemm's rows
     * not yet computed must still be zero) */
    unsigned char *bytes = k->array[k->output];
    size_t middle = k->array_bytes[k->output] / 2 / 8 * 8;
    bytes[middle + 7] ^= 0x40; /* bit 62: a double's top exponent bit, far from any tolerance */
}

void pb_instance_free(pb_instance *k)
{
    for (int a = 0; a < PB_MAX_ARRAYS; a++) {
        free(k->array[a]);
        k->array[a] = NULL;
    }
}

size_t pb_instance_bytes(const pb_instance *k)
{
    size_t total = 0;
    for (int a = 0; a < PB_MAX_ARRAYS; a++)
        total += k->array_bytes[a];
    return total;
}

int pb_expect(const pb_instance *k, const char *what, size_t index, double found, double expected,
              double tolerance, char *why, size_t size)
{
    if (fabs(found - expected) <= tolerance * fmax(1.0, fabs(expected)))
        return 0;
    snprintf(why, size,
             "kernel %s failed its check: %s %zu is %.17g after %llu passes, expected %.17g",
             k->kernel->name, what, index, found, (unsigned long long)k->passes, expected);
    return -1;
}
