/* libFuzzer target: the Matrix Market reader (native/app/spsolve/matrix_market.c) on arbitrary
 * bytes, under AddressSanitizer and UndefinedBehaviorSanitizer (`make fuzz`,
 * docs/safety/native.md). The input is read as a file through fmemopen; the memory budget is
 * 64 MB, so that a size line declaring more is refused, as it must be, before any allocation.
 * Every input must end in 0 or one sentence, never a fault, a leak or undefined behaviour; an
 * accepted matrix must be well formed (checked below). */
#define _GNU_SOURCE
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "matrix_market.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the solvers and the residual check rely on. */
static void check_matrix(const pa_sparse *a)
{
    assert(a->n >= 1 && a->colptr[0] == 0);
    for (int j = 0; j < a->n; j++) {
        assert(a->colptr[j] <= a->colptr[j + 1]);
        for (int p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            assert(a->rowind[p] >= 0 && a->rowind[p] < a->n);
            assert(p == a->colptr[j] || a->rowind[p - 1] < a->rowind[p]); /* sorted, no duplicate */
            assert(isfinite(a->values[p]));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer; an empty file is covered by the tests */
    FILE *file = fmemopen((void *)data, size, "r");
    if (!file)
        return 0;
    pa_mm_budget budget = {64e6, 4 * sizeof(double), size % 2}; /* both ways, by the input */
    pa_sparse a = {0};
    pa_mm_info info = {0};
    char error[512] = "";
    int status = pa_mm_read_stream(file, "fuzz.mtx", &budget, &a, &info, error, sizeof error);
    fclose(file);
    if (status == 0) {
        check_matrix(&a);
        pa_sparse_free(&a);
    } else {
        assert(error[0] != '\0' && strchr(error, '\n') == NULL); /* one sentence, one line */
    }
    return 0;
}
