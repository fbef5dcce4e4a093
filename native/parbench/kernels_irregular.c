/* Irregular access: gather and scatter through a random permutation, HPCC RandomAccess, a
 * pointer chase around one random cycle, and a histogram of hashed keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kernels.h"

#define HISTOGRAM_BINS 4096

/* Fisher-Yates (Knuth, TAOCP 3.4.2, algorithm P) on 32-bit indices. */
static void random_permutation(uint32_t *index, size_t n)
{
    for (size_t i = 0; i < n; i++)
        index[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = pb_mix(i) % (i + 1);
        uint32_t t = index[i];
        index[i] = index[j], index[j] = t;
    }
}

/* -- gather and scatter (0: x = 0, 1, 2, ...; 1: the permutation; 2: y) --------------------- */
static size_t permute_shape(pb_instance *k, size_t bytes)
{
    size_t n = bytes / 20;
    k->n = n <= UINT32_MAX ? n : UINT32_MAX;
    k->iterations = k->n;
    k->array_bytes[0] = k->array_bytes[2] = 8 * k->n;
    k->array_bytes[1] = 4 * k->n;
    k->output = 2;
    return 20;
}
static void permute_init(pb_instance *k)
{
    double *x = k->array[0], *y = k->array[2];
    random_permutation(k->array[1], k->n);
    for (size_t i = 0; i < k->n; i++)
        x[i] = (double)i, y[i] = -1;
}

size_t pb_gather_shape(pb_instance *k, size_t bytes) { return permute_shape(k, bytes); }
void pb_gather_init(pb_instance *k) { permute_init(k); }
void pb_gather_pass(pb_instance *k)
{
    const double *restrict x = k->array[0];
    const uint32_t *restrict index = k->array[1];
    double *restrict y = k->array[2];
    for (size_t i = 0; i < k->n; i++)
        y[i] = x[index[i]];
}
int pb_gather_check(pb_instance *k, char *why, size_t size)
{
    const uint32_t *index = k->array[1];
    const double *y = k->array[2];
    for (size_t i = 0; i < k->n; i++)
        if (pb_expect(k, "element of y", i, y[i], (double)index[i], 0, why, size))
            return -1;
    return 0;
}

size_t pb_scatter_shape(pb_instance *k, size_t bytes) { return permute_shape(k, bytes); }
void pb_scatter_init(pb_instance *k) { permute_init(k); }
void pb_scatter_pass(pb_instance *k)
{
    const double *restrict x = k->array[0];
    const uint32_t *restrict index = k->array[1];
    double *restrict y = k->array[2];
    for (size_t i = 0; i < k->n; i++)
        y[index[i]] = x[i];
}
int pb_scatter_check(pb_instance *k, char *why, size_t size)
{
    const uint32_t *index = k->array[1];
    const double *y = k->array[2];
    for (size_t i = 0; i < k->n; i++)
        if (pb_expect(k, "element of y", index[i], y[index[i]], (double)i, 0, why, size))
            return -1;
    return 0;
}

/* -- RandomAccess (HPCC; Luszczek et al., SC06): t[r mod n] ^= r for n values of a xorshift
 * sequence (Marsaglia 2003) that restarts every pass. Each pass xors the same values in, so two
 * passes restore the table: the check adds one when the count is odd and expects t[i] = i. ---- */
static uint64_t xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    return x ^ (x << 17);
}
size_t pb_random_access_shape(pb_instance *k, size_t bytes)
{
    size_t n = 32;
    while (n * 2 * 8 <= bytes)
        n *= 2;
    k->n = n * 8 <= bytes ? n : 0;
    k->iterations = n;
    k->array_bytes[0] = 8 * n;
    k->output = 0;
    return 8 * 32;
}
void pb_random_access_init(pb_instance *k)
{
    uint64_t *t = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        t[i] = i;
}
void pb_random_access_pass(pb_instance *k)
{
    uint64_t *t = k->array[0], r = 0x2545f4914f6cdd1du;
    const uint64_t mask = k->n - 1;
    for (size_t i = 0; i < k->n; i++) {
        r = xorshift(r);
        t[r & mask] ^= r;
    }
}
int pb_random_access_check(pb_instance *k, char *why, size_t size)
{
    if (k->passes % 2)
        pb_instance_run(k, 1);
    const uint64_t *t = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        if (t[i] != i) {
            snprintf(why, size,
                     "kernel %s failed its check: entry %zu is %llu after an even number of "
                     "passes (%llu), expected %zu",
                     k->kernel->name, i, (unsigned long long)t[i], (unsigned long long)k->passes,
                     i);
            return -1;
        }
    return 0;
}

/* -- Pointer chase: Sattolo's algorithm (Sattolo 1986) makes one cycle through all n elements.
 * A pass takes the next HOPS hops around it (all n when fewer), going on where the last pass
 * stopped, so an invocation lasts milliseconds at any size. The check walks the cycle again:
 * after T hops in all the chase stands where T mod n hops from 0 lead, and the indices visited
 * sum to T div n full cycles of n (n - 1) / 2 plus those of the last partial round. ---------- */
#define HOPS 16384
size_t pb_pointer_chase_shape(pb_instance *k, size_t bytes)
{
    size_t n = bytes / 8;
    k->n = n >= 2 ? n : 0;
    k->iterations = n < HOPS ? n : HOPS;
    k->array_bytes[0] = 8 * n;
    return 16;
}
void pb_pointer_chase_init(pb_instance *k)
{
    uint64_t *next = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        next[i] = i;
    for (size_t i = k->n - 1; i > 0; i--) {
        size_t j = pb_mix(i) % i;
        uint64_t t = next[i];
        next[i] = next[j], next[j] = t;
    }
    k->state = 0;
    k->word = 0;
}
void pb_pointer_chase_pass(pb_instance *k)
{
    const uint64_t *next = k->array[0];
    uint64_t p = k->state, sum = k->word;
    for (uint64_t i = 0; i < k->iterations; i++) {
        sum += p;
        p = next[p];
    }
    k->state = p;
    k->word = sum;
}
int pb_pointer_chase_check(pb_instance *k, char *why, size_t size)
{
    const uint64_t *next = k->array[0];
    const uint64_t n = k->n, hops = k->passes * k->iterations;
    uint64_t p = 0, sum = (hops / n) * (n * (n - 1) / 2);
    for (uint64_t i = 0; i < hops % n; i++) {
        sum += p;
        p = next[p];
    }
    if (k->state == p && k->word == sum)
        return 0;
    snprintf(why, size,
             "kernel %s failed its check: after %llu hops the chase stands at %llu having summed "
             "%llu, expected %llu and %llu",
             k->kernel->name, (unsigned long long)hops, (unsigned long long)k->state,
             (unsigned long long)k->word, (unsigned long long)p, (unsigned long long)sum);
    return -1;
}

/* -- Histogram of 32-bit hashed keys (0: keys, 1: counts) ---------------------------------- */
size_t pb_histogram_shape(pb_instance *k, size_t bytes)
{
    const size_t counts = 4 * HISTOGRAM_BINS;
    size_t n = bytes > counts ? (bytes - counts) / 4 : 0;
    k->n = n >= 64 ? n : 0;
    k->iterations = n;
    k->array_bytes[0] = 4 * n;
    k->array_bytes[1] = counts;
    k->output = 1;
    return counts + 4 * 64;
}
void pb_histogram_init(pb_instance *k)
{
    uint32_t *key = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        key[i] = (uint32_t)pb_mix(i);
    memset(k->array[1], 0, 4 * HISTOGRAM_BINS);
}
void pb_histogram_pass(pb_instance *k)
{
    const uint32_t *restrict key = k->array[0];
    uint32_t *restrict count = k->array[1];
    memset(count, 0, 4 * HISTOGRAM_BINS);
    for (size_t i = 0; i < k->n; i++)
        count[key[i] % HISTOGRAM_BINS]++;
}
int pb_histogram_check(pb_instance *k, char *why, size_t size)
{
    uint32_t *expected = pa_calloc(HISTOGRAM_BINS, 4, "expected");
    const uint32_t *count = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        expected[(uint32_t)pb_mix(i) % HISTOGRAM_BINS]++;
    int failed = 0;
    for (size_t b = 0; b < HISTOGRAM_BINS && !failed; b++)
        failed = pb_expect(k, "bin", b, count[b], expected[b], 0, why, size);
    free(expected);
    return failed;
}
