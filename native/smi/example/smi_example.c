/* pa-smi-example: one complete libpa-smi program (docs/guide/smi.md).
 *
 *   mpicc smi_example.c -I DIR -L DIR -lpa-smi -Wl,-rpath,DIR -o smi_example
 *   mpirun -np 4 ./smi_example
 *
 * where DIR holds pa_smi.h and libpa-smi.so (perfatlas's bin folder). A region x of n doubles is
 * divided blocked; each process fills its share (the loop-splitting helper), then
 *   1. reads x through a replicated copy (read-only: released, nothing written back),
 *   2. counts x's values into 10 bins of a second region through a zero-started copy, combined
 *      with PA_SMI_SUM (only the bins a process touched travel),
 *   3. adds its rank to a counter under the mutex,
 *   4. shows how a bad call is reported: a release without a replicate. */
#include <stdio.h>

#include "pa_smi.h"

#define TRY(call)                                                    \
    do {                                                             \
        if ((call) != PA_SMI_OK) {                                   \
            fprintf(stderr, "pa-smi-example: %s\n", pa_smi_error()); \
            MPI_Abort(MPI_COMM_WORLD, 1);                            \
        }                                                            \
    } while (0)

enum {
    N = 1000,
    BINS = 10
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    pa_smi_region *x, *bins;
    TRY(pa_smi_create(MPI_COMM_WORLD, N, PA_SMI_DOUBLE, NULL, &x)); /* NULL: blocked */
    int64_t lo, hi, first;
    TRY(pa_smi_split(x, 0, N, &lo, &hi)); /* my share: the elements I own */
    TRY(pa_smi_range(x, rank, &first, &hi));
    double *mine = pa_smi_local(x);
    for (int64_t i = lo; i < hi; i++)
        mine[i - first] = (double)i;
    TRY(pa_smi_barrier(x)); /* every share written before anyone reads */

    /* 1. Read replication: a whole copy by block transfers, then only local reads. */
    TRY(pa_smi_replicate(x, 0, NULL, NULL, PA_SMI_FETCH));
    const double *copy = pa_smi_copy(x);
    double sum = 0.0, total;
    for (int64_t i = lo; i < hi; i++)
        sum += copy[(i * 7) % N]; /* scattered reads, most of them of other processes' shares */
    TRY(pa_smi_release(x));
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    /* 2. Combine: counts into a zero-started copy of the bins, merged by sum. */
    TRY(pa_smi_create(MPI_COMM_WORLD, BINS, PA_SMI_INT64, NULL, &bins));
    TRY(pa_smi_replicate(bins, 0, NULL, NULL, PA_SMI_ZERO));
    int64_t *count = pa_smi_copy(bins);
    for (int64_t i = lo; i < hi; i++) {
        int64_t bin = (int64_t)mine[i - first] % BINS;
        count[bin]++;
        TRY(pa_smi_touch(bins, bin));
    }
    TRY(pa_smi_combine(bins, PA_SMI_SUM, PA_SMI_INT64));
    TRY(pa_smi_barrier(bins));
    int64_t histogram[BINS];
    TRY(pa_smi_get_block(bins, 0, BINS, histogram));

    /* 3. The mutex around a read-modify-write of bin 0. */
    pa_smi_mutex *mutex;
    TRY(pa_smi_mutex_create(MPI_COMM_WORLD, &mutex));
    TRY(pa_smi_mutex_lock(mutex));
    TRY(pa_smi_fence(bins));
    int64_t value;
    TRY(pa_smi_get(bins, 0, &value));
    value += rank;
    TRY(pa_smi_put(bins, 0, &value));
    TRY(pa_smi_fence(bins));
    TRY(pa_smi_mutex_unlock(mutex));
    TRY(pa_smi_barrier(bins));
    int64_t bin0;
    TRY(pa_smi_get(bins, 0, &bin0));

    /* 4. A bad call: an error code and one sentence naming the call; nothing changed. */
    int status = pa_smi_release(bins);
    int ok = status == PA_SMI_ERR_STATE;
    if (rank == 0) {
        printf("pa-smi-example: sum of x read through the copy: %.0f (expected %d)\n", total,
               N * (N - 1) / 2);
        ok = ok && total == N * (N - 1) / 2;
        printf("pa-smi-example: bins:");
        for (int b = 0; b < BINS; b++) {
            printf(" %lld", (long long)histogram[b]);
            ok = ok && histogram[b] == N / BINS;
        }
        printf(" (expected %d each)\n", N / BINS);
        printf("pa-smi-example: bin 0 after every rank added its rank: %lld (expected %d)\n",
               (long long)bin0, N / BINS + np * (np - 1) / 2);
        ok = ok && bin0 == N / BINS + np * (np - 1) / 2;
        printf("pa-smi-example: a bad call returned %d: %s\n", status, pa_smi_error());
    }
    TRY(pa_smi_mutex_free(&mutex));
    TRY(pa_smi_free(&bins));
    TRY(pa_smi_free(&x));
    MPI_Finalize();
    return ok ? 0 : 1;
}
