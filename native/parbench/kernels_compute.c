/* Compute-bound kernels: polynomial evaluation, division and square root, integer hashing, and
 * branchy integer code. Each reads one array and writes one (or a running value), so its memory
 * traffic is small next to its arithmetic. (0: a, 1: b) */
#include <math.h>
#include <stdio.h>

#include "kernels.h"

#define DEGREE 16

static size_t unary_shape(pb_instance *k, size_t bytes, int arrays)
{
    size_t n = bytes / (8 * (size_t)arrays);
    k->n = n;
    k->iterations = n;
    for (int a = 0; a < arrays; a++)
        k->array_bytes[a] = 8 * n;
    k->output = arrays - 1 ? 1 : -1;
    return 8 * (size_t)arrays;
}

static int integer_mismatch(const pb_instance *k, size_t i, uint64_t found, uint64_t expected,
                            char *why, size_t size)
{
    snprintf(why, size, "kernel %s failed its check: element %zu is %llu, expected %llu",
             k->kernel->name, i, (unsigned long long)found, (unsigned long long)expected);
    return -1;
}

/* -- p(x) = sum_j x^j / (j + 1), j = 0 .. DEGREE, by Horner's rule ------------------------- */
static double polynomial_input(size_t i) { return (double)(i % 1000) / 1000.0 - 0.5; }
static double horner(double x)
{
    double p = 1.0 / (DEGREE + 1);
    for (int j = DEGREE - 1; j >= 0; j--)
        p = p * x + 1.0 / (j + 1);
    return p;
}
size_t pb_polynomial_shape(pb_instance *k, size_t bytes) { return unary_shape(k, bytes, 2); }
void pb_polynomial_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        a[i] = polynomial_input(i), b[i] = 0;
}
void pb_polynomial_pass(pb_instance *k)
{
    static const double coefficient[DEGREE + 1] = {
        1.0,      1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,  1.0 / 6,  1.0 / 7,  1.0 / 8, 1.0 / 9,
        1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17};
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
#pragma omp simd
    for (size_t i = 0; i < k->n; i++) {
        double p = coefficient[DEGREE];
        for (int j = DEGREE - 1; j >= 0; j--)
            p = p * a[i] + coefficient[j];
        b[i] = p;
    }
}
int pb_polynomial_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    for (size_t i = 0; i < k->n; i++) /* an FMA rounds once where the reference rounds twice */
        if (pb_expect(k, "element", i, b[i], horner(polynomial_input(i)), 1e-13, why, size))
            return -1;
    return 0;
}

/* -- sqrt(a) / (a + 1): both correctly rounded (IEEE 754), so the check is exact ------------ */
size_t pb_divide_sqrt_shape(pb_instance *k, size_t bytes) { return unary_shape(k, bytes, 2); }
void pb_divide_sqrt_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        a[i] = (double)(1 + i % 100), b[i] = 0;
}
void pb_divide_sqrt_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
#pragma omp simd
    for (size_t i = 0; i < k->n; i++)
        b[i] = sqrt(a[i]) / (a[i] + 1.0);
}
int pb_divide_sqrt_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    for (size_t i = 0; i < k->n; i++) {
        double a = (double)(1 + i % 100);
        if (pb_expect(k, "element", i, b[i], sqrt(a) / (a + 1.0), 0, why, size))
            return -1;
    }
    return 0;
}

/* -- MurmurHash3's fmix64 (Appleby 2011) over 64-bit integers ------------------------------- */
static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 33);
}
size_t pb_int_hash_shape(pb_instance *k, size_t bytes) { return unary_shape(k, bytes, 2); }
void pb_int_hash_init(pb_instance *k)
{
    uint64_t *a = k->array[0], *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        a[i] = i * 0x9e3779b97f4a7c15u, b[i] = 0;
}
void pb_int_hash_pass(pb_instance *k)
{
    const uint64_t *restrict a = k->array[0];
    uint64_t *restrict b = k->array[1];
#pragma omp simd
    for (size_t i = 0; i < k->n; i++)
        b[i] = fmix64(a[i]);
}
int pb_int_hash_check(pb_instance *k, char *why, size_t size)
{
    const uint64_t *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        if (b[i] != fmix64(i * 0x9e3779b97f4a7c15u))
            return integer_mismatch(k, i, b[i], fmix64(i * 0x9e3779b97f4a7c15u), why, size);
    return 0;
}

/* -- Branchy code: which of four different updates a running value takes depends on two random
 * bits of each input, and one of them loops a random 0..7 times: branches no predictor learns. */
#define LCG_MULTIPLIER 6364136223846793005u /* Knuth's MMIX */
#define LCG_INCREMENT  1442695040888963407u
size_t pb_branchy_shape(pb_instance *k, size_t bytes) { return unary_shape(k, bytes, 1); }
void pb_branchy_init(pb_instance *k)
{
    uint64_t *a = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        a[i] = pb_mix(i);
}
void pb_branchy_pass(pb_instance *k)
{
    const uint64_t *a = k->array[0];
    uint64_t value = 0;
    for (size_t i = 0; i < k->n; i++) {
        const uint64_t v = a[i];
        switch (v & 3) {
        case 0:
            value += v >> 3;
            break;
        case 1:
            value ^= v * 0x9e3779b97f4a7c15u;
            break;
        case 2:
            for (uint64_t r = (v >> 2) & 7; r > 0; r--)
                value = value * LCG_MULTIPLIER + LCG_INCREMENT;
            break;
        default:
            value = value << 7 | value >> 57;
        }
    }
    k->word = value;
}
/* The same updates as an if-chain, with the loop's count of LCG steps unrolled one at a time. */
static uint64_t branchy_reference(size_t n)
{
    uint64_t value = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = pb_mix(i), kind = v % 4;
        if (kind == 0)
            value = value + (v >> 3);
        else if (kind == 1)
            value = value ^ (v * 0x9e3779b97f4a7c15u);
        else if (kind == 2) {
            unsigned steps = (unsigned)((v >> 2) % 8);
            for (unsigned s = 0; s < steps; s++)
                value = value * LCG_MULTIPLIER + LCG_INCREMENT;
        } else
            value = (value << 7) | (value >> 57);
    }
    return value;
}
int pb_branchy_check(pb_instance *k, char *why, size_t size)
{
    uint64_t expected = branchy_reference(k->n);
    if (k->word == expected)
        return 0;
    snprintf(why, size, "kernel %s failed its check: the running value is %llu, expected %llu",
             k->kernel->name, (unsigned long long)k->word, (unsigned long long)expected);
    return -1;
}
