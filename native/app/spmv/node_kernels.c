/* What the node-level kernels share (fast.c, bcsr.c): how many threads a product is worth, which
 * consecutive rows (chunks, block rows) each thread multiplies, and the timing of a batch. */
#include <omp.h>

#include "spmv.h"
#include "timer.h"

/* At most one thread per this many nonzeros (stored elements): below it, waking a thread costs
 * more than its share of the product saves (a few microseconds; MKL does the same). */
enum {
    NNZ_PER_THREAD = 1 << 14
};

int pa_threads_for(long long stored, int threads)
{
    long long useful = stored / NNZ_PER_THREAD;
    return useful < 1 ? 1 : useful < threads ? (int)useful : threads;
}

void pa_split_by_weight(const int *prefix, int count, int parts, int *bounds)
{
    long long total = (long long)prefix[count] - prefix[0];
    bounds[0] = 0;
    for (int t = 1; t < parts; t++) {
        long long target = prefix[0] + total * t / parts;
        int lo = bounds[t - 1], hi = count; /* the first i with prefix[i] >= target */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (prefix[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        bounds[t] = lo;
    }
    bounds[parts] = count;
}

void pa_run_parts(void (*part)(const void *state, int first, int last), const void *state,
                  int parts, const int *bounds)
{
    if (parts == 1) {
        part(state, bounds[0], bounds[1]);
        return;
    }
#pragma omp parallel num_threads(parts)
    for (int t = omp_get_thread_num(); t < parts; t += omp_get_num_threads())
        part(state, bounds[t], bounds[t + 1]);
}

double pa_timed_products(void (*once)(const void *state), const void *state, long count)
{
    uint64_t start = pa_ticks();
    for (long i = 0; i < count; i++)
        once(state);
    return pa_seconds_since(start);
}
