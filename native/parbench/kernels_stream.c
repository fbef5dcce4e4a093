/* Streaming vector kernels (STREAM, McCalpin; BLAS-1) and scans over arrays of doubles.
 *
 * Arrays start as a = 1, b = 2, c = 0.5 (STREAM's values): every strided element's value after
 * any number of passes is known in closed form, and the elements a stride skips keep theirs. */
#include <stdio.h>

#include "kernels.h"

#define SCALAR 3.0
#define ALPHA  0.5

static const double initial[3] = {1.0, 2.0, 0.5};

/* `arrays` arrays of n doubles, n a multiple of PB_STRIDE_GRAIN; one iteration per stride. */
static size_t vector_shape(pb_instance *k, size_t bytes, int arrays, int output)
{
    size_t n = bytes / (8 * (size_t)arrays) / PB_STRIDE_GRAIN * PB_STRIDE_GRAIN;
    k->n = n;
    k->iterations = n / k->stride;
    for (int a = 0; a < arrays; a++)
        k->array_bytes[a] = n * 8;
    k->output = output;
    return 8 * (size_t)arrays * PB_STRIDE_GRAIN;
}

static void vector_init(pb_instance *k)
{
    for (int a = 0; a < PB_MAX_ARRAYS && k->array[a]; a++) {
        double *x = k->array[a];
        for (size_t i = 0; i < k->n; i++)
            x[i] = initial[a];
    }
}

/* Element i of array `a` must be `touched` where the stride visits it and its initial value
 * elsewhere. */
static int vector_check(pb_instance *k, int a, double touched, char *why, size_t size)
{
    const double *x = k->array[a];
    char what[32];
    snprintf(what, sizeof what, "element of array %c", 'a' + a);
    for (size_t i = 0; i < k->n; i++)
        if (pb_expect(k, what, i, x[i], i % k->stride ? initial[a] : touched, 1e-13, why, size))
            return -1;
    return 0;
}

/* The loop over visited elements: unit stride as a vector loop, else a plain strided one. */
#define STRIDED(BODY)                                                \
    do {                                                             \
        const size_t n = k->n, s = k->stride;                        \
        if (s == 1) {                                                \
            _Pragma("omp simd") for (size_t i = 0; i < n; i++) BODY; \
        } else {                                                     \
            for (size_t i = 0; i < n; i += s)                        \
                BODY;                                                \
        }                                                            \
    } while (0)
#define STRIDED_SUM(BODY)                                                               \
    do {                                                                                \
        const size_t n = k->n, s = k->stride;                                           \
        if (s == 1) {                                                                   \
            _Pragma("omp simd reduction(+ : sum)") for (size_t i = 0; i < n; i++) BODY; \
        } else {                                                                        \
            for (size_t i = 0; i < n; i += s)                                           \
                BODY;                                                                   \
        }                                                                               \
    } while (0)

#define ARRAYS                                                                              \
    double *restrict a = k->array[0], *restrict b = k->array[1], *restrict c = k->array[2]; \
    (void)a, (void)b, (void)c

size_t pb_copy_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 2, 1); }
void pb_copy_init(pb_instance *k) { vector_init(k); }
void pb_copy_pass(pb_instance *k)
{
    ARRAYS;
    STRIDED(b[i] = a[i]);
}
int pb_copy_check(pb_instance *k, char *why, size_t size)
{
    return vector_check(k, 1, 1.0, why, size);
}

size_t pb_scale_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 2, 1); }
void pb_scale_init(pb_instance *k) { vector_init(k); }
void pb_scale_pass(pb_instance *k)
{
    ARRAYS;
    STRIDED(b[i] = SCALAR * a[i]);
}
int pb_scale_check(pb_instance *k, char *why, size_t size)
{
    return vector_check(k, 1, SCALAR, why, size);
}

size_t pb_add_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 3, 2); }
void pb_add_init(pb_instance *k) { vector_init(k); }
void pb_add_pass(pb_instance *k)
{
    ARRAYS;
    STRIDED(c[i] = a[i] + b[i]);
}
int pb_add_check(pb_instance *k, char *why, size_t size)
{
    return vector_check(k, 2, 3.0, why, size);
}

size_t pb_triad_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 3, 0); }
void pb_triad_init(pb_instance *k) { vector_init(k); }
void pb_triad_pass(pb_instance *k)
{
    ARRAYS;
    STRIDED(a[i] = b[i] + SCALAR * c[i]);
}
int pb_triad_check(pb_instance *k, char *why, size_t size)
{
    return vector_check(k, 0, 2.0 + SCALAR * 0.5, why, size);
}

/* The scalar kernels: the result of the last pass against the count of visited elements. */
static int scalar_check(pb_instance *k, double per_element, char *why, size_t size)
{
    double visited = (double)(k->n / k->stride);
    return pb_expect(k, "the result of pass", (size_t)k->passes, k->result, per_element * visited,
                     1e-13, why, size);
}

size_t pb_dot_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 2, -1); }
void pb_dot_init(pb_instance *k) { vector_init(k); }
void pb_dot_pass(pb_instance *k)
{
    ARRAYS;
    double sum = 0;
    STRIDED_SUM(sum += a[i] * b[i]);
    k->result = sum;
}
int pb_dot_check(pb_instance *k, char *why, size_t size) { return scalar_check(k, 2.0, why, size); }

/* y = b grows by ALPHA * x = ALPHA * a every pass: 2 + ALPHA * passes (exact while it fits). */
size_t pb_daxpy_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 2, 1); }
void pb_daxpy_init(pb_instance *k) { vector_init(k); }
void pb_daxpy_pass(pb_instance *k)
{
    ARRAYS;
    STRIDED(b[i] += ALPHA * a[i]);
}
int pb_daxpy_check(pb_instance *k, char *why, size_t size)
{
    return vector_check(k, 1, 2.0 + ALPHA * (double)k->passes, why, size);
}

size_t pb_sum_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 1, -1); }
void pb_sum_init(pb_instance *k) { vector_init(k); }
void pb_sum_pass(pb_instance *k)
{
    ARRAYS;
    double sum = 0;
    STRIDED_SUM(sum += a[i]);
    k->result = sum;
}
int pb_sum_check(pb_instance *k, char *why, size_t size) { return scalar_check(k, 1.0, why, size); }

/* Kahan's compensated summation (Higham, "Accuracy and Stability of Numerical Algorithms", 4.3):
 * its error stays within 2 eps |sum|, so n copies of 0.1 sum to n * 0.1 to 1e-14. */
#define KAHAN_VALUE 0.1
size_t pb_reduction_shape(pb_instance *k, size_t bytes) { return vector_shape(k, bytes, 1, -1); }
void pb_reduction_init(pb_instance *k)
{
    double *a = k->array[0];
    for (size_t i = 0; i < k->n; i++)
        a[i] = KAHAN_VALUE;
}
void pb_reduction_pass(pb_instance *k)
{
    const double *a = k->array[0];
    double sum = 0, compensation = 0;
    for (size_t i = 0; i < k->n; i += k->stride) {
        double y = a[i] - compensation;
        double t = sum + y;
        compensation = (t - sum) - y;
        sum = t;
    }
    k->result = sum;
}
int pb_reduction_check(pb_instance *k, char *why, size_t size)
{
    return scalar_check(k, KAHAN_VALUE, why, size);
}

/* a[i] = i mod 7: every prefix is an integer, exact in a double. */
size_t pb_prefix_sum_shape(pb_instance *k, size_t bytes)
{
    size_t fewest = vector_shape(k, bytes, 2, 1);
    k->iterations = k->n;
    return fewest;
}
void pb_prefix_sum_init(pb_instance *k)
{
    double *a = k->array[0], *b = k->array[1];
    for (size_t i = 0; i < k->n; i++)
        a[i] = (double)(i % 7), b[i] = 0;
}
void pb_prefix_sum_pass(pb_instance *k)
{
    const double *restrict a = k->array[0];
    double *restrict b = k->array[1];
    double running = 0;
    for (size_t i = 0; i < k->n; i++) {
        running += a[i];
        b[i] = running;
    }
}
int pb_prefix_sum_check(pb_instance *k, char *why, size_t size)
{
    const double *b = k->array[1];
    double expected = 0;
    for (size_t i = 0; i < k->n; i++) {
        expected += (double)(i % 7);
        if (pb_expect(k, "prefix", i, b[i], expected, 0, why, size))
            return -1;
    }
    return 0;
}
