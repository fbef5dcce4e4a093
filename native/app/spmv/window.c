/* Windows of doubles for passive-target one-sided access (the latency t_r), the libpa-smi
 * regions of the remote variants, and a timing shorthand. */
#include <stdio.h>

#include "comm.h"
#include "spmv.h"
#include "timer.h"

/* What to pass when Open MPI's default one-sided component cannot span these ranks. */
#define OSC_HINT "with Open MPI over TCP pass --mca osc pt2pt (or ucx) in --mpirun-args"

int pa_spmv_region(const pa_block *b, unsigned flags, pa_smi_region **region, const char **why)
{
    static char failure[1024];
    pa_smi_distribution blocked = {.layout = PA_SMI_BLOCKED, .flags = flags};
    if (pa_smi_create(MPI_COMM_WORLD, b->n, PA_SMI_DOUBLE, &blocked, region)) {
        snprintf(failure, sizeof failure,
                 "this MPI cannot create a libpa-smi region across these "
                 "ranks (%s); " OSC_HINT "%s",
                 pa_smi_error(), flags & PA_SMI_RMA_ONLY ? "" : ", osc sm for the node's part");
        *why = failure;
        *region = NULL;
        return -1;
    }
    int64_t lo, hi;
    pa_spmv_smi(pa_smi_range(*region, b->rank, &lo, &hi));
    if (lo != b->lo || hi != b->lo + b->rows) /* both floor(p n / np) */
        pa_comm_wrong("the region's block %lld .. %lld is not the rows' block %d .. %d",
                      (long long)lo, (long long)hi - 1, b->lo, b->lo + b->rows - 1);
    return 0;
}

int pa_spmv_runs(const pa_block *b, int with_block, int64_t *lo, int64_t *hi)
{
    int g = 0, n = 0, block_done = !with_block || b->rows == 0;
    while (g < b->nghosts || !block_done) {
        int64_t first, end;
        if (!block_done && (g == b->nghosts || b->ghosts[g] > b->lo)) {
            first = b->lo, end = b->lo + b->rows, block_done = 1;
        } else {
            first = b->ghosts[g], end = first + 1, g++;
        }
        if (n > 0 && hi[n - 1] == first)
            hi[n - 1] = end;
        else
            lo[n] = first, hi[n++] = end;
    }
    return n;
}

void pa_spmv_smi_failed(void) { pa_comm_wrong("%s", pa_smi_error()); }

int pa_open_window(MPI_Aint count, double **base, MPI_Win *window, const char **why)
{
    static char failure[MPI_MAX_ERROR_STRING + 200];
    /* Every segment a whole number of 64-byte lines: MPICH 4.0.2 (Debian 12) places the targets
     * of a rank 8 bytes off when the segment before it on the node is not a multiple of 16
     * bytes (a get of element k returned element k - 1), which the checks of this program
     * caught. */
    MPI_Aint bytes = (count * (MPI_Aint)sizeof(double) + 63) / 64 * 64;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc =
        MPI_Win_allocate(bytes, (int)sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, base, window);
    int ok = rc == MPI_SUCCESS, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (all_ok) {
        MPI_Win_lock_all(0, *window);
        return 0;
    }
    char text[MPI_MAX_ERROR_STRING] = "an error on another rank";
    int length = 0;
    if (!ok)
        MPI_Error_string(rc, text, &length);
    else
        MPI_Win_free(window);
    snprintf(
        failure, sizeof failure,
        "this MPI cannot create an RMA window across these ranks (MPI_Win_allocate: %s); " OSC_HINT,
        text);
    *why = failure;
    *window = MPI_WIN_NULL;
    return -1;
}

void pa_close_window(MPI_Win *window)
{
    if (*window == MPI_WIN_NULL)
        return;
    MPI_Win_unlock_all(*window);
    MPI_Win_free(window);
}

double pa_seconds_since(uint64_t start) { return pa_ticks_to_seconds(pa_ticks() - start); }
