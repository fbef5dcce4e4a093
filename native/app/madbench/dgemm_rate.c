#include "dgemm_rate.h"
#include "alloc.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sky.h" /* pa_uniform */
#include "timer.h"

/* The worst error of column j of C = A B against a plain dot product. */
static double column_error(int n, const double *a, const double *b, const double *c, int j)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int k = 0; k < n; k++)
            sum += a[i + (size_t)k * n] * b[k + (size_t)j * n];
        worst = fmax(worst, fabs(c[i + (size_t)j * n] - sum));
    }
    return worst / n; /* entries of A and B lie in [-1, 1) */
}

int pa_dgemm_measure(pa_dgemm_rate *rate, int n, double min_seconds)
{
    size_t count = (size_t)n * (size_t)n;
    double *a = pa_alloc(count, sizeof(double), "the DGEMM matrix A"),
           *b = pa_alloc(count, sizeof(double), "the DGEMM matrix B");
    double *c = pa_alloc(count, sizeof(double), "the DGEMM matrix C");
    uint64_t state = 0x5eed;
    for (size_t k = 0; k < count; k++) {
        a[k] = 2.0 * pa_uniform(&state) - 1.0;
        b[k] = 2.0 * pa_uniform(&state) - 1.0;
    }
    *rate = (pa_dgemm_rate){.n = n};
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    uint64_t start = pa_ticks();
    do {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        rate->calls++;
        rate->seconds = pa_ticks_to_seconds(pa_ticks() - start);
    } while (rate->calls < 3 || rate->seconds < min_seconds);
    rate->flops_per_s = 2.0 * n * (double)n * n * rate->calls / rate->seconds;
    rate->worst_error = fmax(column_error(n, a, b, c, 0), column_error(n, a, b, c, n - 1));
    free(a), free(b), free(c);
    return 0;
}
