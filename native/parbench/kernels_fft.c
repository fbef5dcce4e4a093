/* Radix-2 decimation-in-time FFT (Cooley & Tukey 1965), iterative: the input is copied in
 * bit-reversed order, then log2 n stages of n/2 butterflies each, twiddles from a table.
 * Y[m] = sum_t x[t] exp(-2 pi i m t / n). The input is two complex exponentials, at bins F and
 * G with amplitudes 1 and 1/2, so the output is n at F, n/2 at G and zero elsewhere.
 * (0: x, 1: y, 2: the n/2 twiddles; complex numbers as interleaved pairs of doubles) */
#include <math.h>
#include <stdio.h>

#include "kernels.h"

#define PI    3.14159265358979323846
#define BIN_F 1

static size_t bin_g(size_t n) { return n / 4 + 1; }

size_t pb_fft_shape(pb_instance *k, size_t bytes)
{
    size_t n = 4, stages = 2;
    while (n * 2 * 40 <= bytes)
        n *= 2, stages++;
    k->n = n * 40 <= bytes ? n : 0;
    k->iterations = (uint64_t)(n / 2) * stages;
    k->array_bytes[0] = k->array_bytes[1] = 16 * n;
    k->array_bytes[2] = 8 * n;
    k->output = 1;
    return 160;
}

void pb_fft_init(pb_instance *k)
{
    double *x = k->array[0], *y = k->array[1], *w = k->array[2];
    const size_t n = k->n;
    for (size_t t = 0; t < n; t++) {
        double f = 2 * PI * (double)(BIN_F * t % n) / (double)n;
        double g = 2 * PI * (double)(bin_g(n) * t % n) / (double)n;
        x[2 * t] = cos(f) + 0.5 * cos(g);
        x[2 * t + 1] = sin(f) + 0.5 * sin(g);
        y[2 * t] = y[2 * t + 1] = 0;
    }
    for (size_t j = 0; j < n / 2; j++) {
        double angle = 2 * PI * (double)j / (double)n;
        w[2 * j] = cos(angle), w[2 * j + 1] = -sin(angle);
    }
}

void pb_fft_pass(pb_instance *k)
{
    const double *restrict x = k->array[0], *restrict w = k->array[2];
    double *restrict y = k->array[1];
    const size_t n = k->n;
    for (size_t t = 0, r = 0; t < n; t++) {
        y[2 * r] = x[2 * t], y[2 * r + 1] = x[2 * t + 1];
        size_t bit = n >> 1; /* r <- r + 1 in bit-reversed arithmetic */
        while (r & bit)
            r ^= bit, bit >>= 1;
        r |= bit;
    }
    for (size_t length = 2; length <= n; length *= 2) {
        const size_t half = length / 2, step = n / length;
        for (size_t start = 0; start < n; start += length)
            for (size_t j = 0; j < half; j++) {
                const double wr = w[2 * j * step], wi = w[2 * j * step + 1];
                double *u = &y[2 * (start + j)], *v = &y[2 * (start + j + half)];
                const double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
                v[0] = u[0] - vr, v[1] = u[1] - vi;
                u[0] += vr, u[1] += vi;
            }
    }
}

int pb_fft_check(pb_instance *k, char *why, size_t size)
{
    const double *y = k->array[1];
    const size_t n = k->n;
    const double tolerance = 1e-9 * (double)n;
    for (size_t m = 0; m < n; m++) {
        double expected = m == BIN_F ? (double)n : m == bin_g(n) ? 0.5 * (double)n : 0.0;
        if (fabs(y[2 * m] - expected) > tolerance || fabs(y[2 * m + 1]) > tolerance) {
            snprintf(why, size,
                     "kernel %s failed its check: bin %zu is %.17g%+.17gi after %llu passes, "
                     "expected %.17g",
                     k->kernel->name, m, y[2 * m], y[2 * m + 1], (unsigned long long)k->passes,
                     expected);
            return -1;
        }
    }
    return 0;
}
