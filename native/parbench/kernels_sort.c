/* Bottom-up merge sort (Knuth, TAOCP 5.2.4, straight two-way merging): pass w merges runs of 2^w
 * elements from one array into the other, ceil(log2 n) passes in all. The first pass reads the
 * input, which is never written, so every invocation sorts the same unsorted data.
 * (0: input, 1 and 2: the arrays the passes alternate between) */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

static uint64_t merge_passes(size_t n)
{
    uint64_t passes = 0;
    while (((size_t)1 << passes) < n)
        passes++;
    return passes;
}

size_t pb_sort_shape(pb_instance *k, size_t bytes)
{
    size_t n = bytes / 24;
    k->n = n >= 2 ? n : 0;
    k->iterations = n * merge_passes(n);
    k->array_bytes[0] = k->array_bytes[1] = k->array_bytes[2] = 8 * n;
    k->output = merge_passes(n) % 2 ? 1 : 2;
    return 48;
}

static double input_value(size_t i) { return (double)(pb_mix(i) % 1000000); }

void pb_sort_init(pb_instance *k)
{
    double *input = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        input[i] = input_value(i);
    memset(k->array[1], 0, 8 * k->n);
    memset(k->array[2], 0, 8 * k->n);
}

static void merge_pass(const double *restrict from, double *restrict to, size_t n, size_t width)
{
    for (size_t low = 0; low < n; low += 2 * width) {
        size_t middle = low + width < n ? low + width : n;
        size_t high = low + 2 * width < n ? low + 2 * width : n;
        size_t i = low, j = middle, out = low;
        while (i < middle && j < high)
            to[out++] = from[j] < from[i] ? from[j++] : from[i++];
        while (i < middle)
            to[out++] = from[i++];
        while (j < high)
            to[out++] = from[j++];
    }
}

void pb_sort_pass(pb_instance *k)
{
    const double *from = k->array[0];
    size_t width = 1;
    for (uint64_t pass = 0; width < k->n; pass++, width *= 2) {
        double *to = k->array[1 + pass % 2];
        merge_pass(from, to, k->n, width);
        from = to;
    }
}

/* Sorted, and the same multiset: the sum (exact: integers below 2^53) and the xor of the bit
 * patterns agree with the input's. */
int pb_sort_check(pb_instance *k, char *why, size_t size)
{
    const double *out = k->array[k->output];
    double sum = 0, expected_sum = 0;
    uint64_t bits = 0, expected_bits = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (i && out[i] < out[i - 1]) {
            snprintf(why, size,
                     "kernel %s failed its check: element %zu (%.17g) is below the one "
                     "before it (%.17g)",
                     k->kernel->name, i, out[i], out[i - 1]);
            return -1;
        }
        double x = input_value(i);
        uint64_t pattern, expected_pattern;
        memcpy(&pattern, &out[i], 8);
        memcpy(&expected_pattern, &x, 8);
        sum += out[i], expected_sum += x;
        bits ^= pattern, expected_bits ^= expected_pattern;
    }
    if (pb_expect(k, "the sum of pass", (size_t)k->passes, sum, expected_sum, 0, why, size))
        return -1;
    if (bits != expected_bits) {
        snprintf(why, size,
                 "kernel %s failed its check: the output is not a permutation of the "
                 "input (the xor of its bit patterns differs)",
                 k->kernel->name);
        return -1;
    }
    return 0;
}
