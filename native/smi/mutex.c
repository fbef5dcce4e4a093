/* The mutex: a ticket lock (Mellor-Crummey and Scott, ACM TOCS 9(1), 1991, section 2.2) on MPI-3
 * RMA atomics. Process 0 of the communicator holds two counters in a window, the next ticket
 * and the ticket now served; lock draws a ticket (MPI_Fetch_and_op MPI_SUM) and polls the served
 * counter (MPI_Fetch_and_op MPI_NO_OP) until it is its own, unlock advances it. First come,
 * first served: no process starves. */
#include <sched.h>
#include <stdlib.h>

#include "smi_internal.h"

struct pa_smi_mutex {
    MPI_Comm comm;
    MPI_Win window;
    int64_t *counters; /* on process 0: [next ticket, now served] */
    int held;
};

enum {
    NEXT = 0,
    SERVED = 1
};

int pa_smi_mutex_create(MPI_Comm comm, pa_smi_mutex **mutex)
{
    static const char call[] = "pa_smi_mutex_create";
    if (!mutex)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the mutex pointer is NULL");
    *mutex = NULL;
    pa_smi_mutex *m = calloc(1, sizeof *m);
    int status = m ? PA_SMI_OK : pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory");
    status = pa_smi_agree(comm, status, call);
    if (status) {
        free(m);
        return status;
    }
    MPI_Comm_dup(comm, &m->comm);
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(m->comm, &rank);
    MPI_Aint bytes = rank == 0 ? 2 * (MPI_Aint)sizeof(int64_t) : 0;
    int rc = MPI_Win_allocate(bytes, (int)sizeof(int64_t), MPI_INFO_NULL, m->comm, &m->counters,
                              &m->window);
    status = pa_smi_agree(m->comm, pa_smi_mpi(rc, call, "MPI_Win_allocate"), call);
    if (status) {
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&m->window);
        MPI_Comm_free(&m->comm);
        free(m);
        return status;
    }
    MPI_Win_set_errhandler(m->window, MPI_ERRORS_RETURN);
    if (rank == 0)
        m->counters[NEXT] = m->counters[SERVED] = 0;
    MPI_Win_lock_all(0, m->window);
    MPI_Win_sync(m->window);
    MPI_Barrier(m->comm);
    *mutex = m;
    return PA_SMI_OK;
}

/* One atomic on a counter at process 0, complete on return: its value before. */
static int atomic(pa_smi_mutex *m, int64_t add, MPI_Op op, int counter, int64_t *before)
{
    int rc = MPI_Fetch_and_op(&add, before, MPI_INT64_T, 0, counter, op, m->window);
    return rc == MPI_SUCCESS ? MPI_Win_flush(0, m->window) : rc;
}

int pa_smi_mutex_lock(pa_smi_mutex *mutex)
{
    static const char call[] = "pa_smi_mutex_lock";
    if (!mutex)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the mutex is NULL");
    if (mutex->held)
        return pa_smi_fail(PA_SMI_ERR_STATE, call, "this process holds the mutex already");
    int64_t ticket, served;
    int rc = atomic(mutex, 1, MPI_SUM, NEXT, &ticket);
    while (rc == MPI_SUCCESS) {
        rc = atomic(mutex, 0, MPI_NO_OP, SERVED, &served);
        if (rc != MPI_SUCCESS || served == ticket)
            break;
        sched_yield(); /* oversubscribed nodes: let the holder run */
    }
    if (rc != MPI_SUCCESS)
        return pa_smi_mpi(rc, call, "MPI_Fetch_and_op");
    mutex->held = 1;
    return PA_SMI_OK;
}

int pa_smi_mutex_unlock(pa_smi_mutex *mutex)
{
    static const char call[] = "pa_smi_mutex_unlock";
    if (!mutex)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the mutex is NULL");
    if (!mutex->held)
        return pa_smi_fail(PA_SMI_ERR_STATE, call, "this process does not hold the mutex");
    int64_t before;
    int rc = atomic(mutex, 1, MPI_SUM, SERVED, &before);
    if (rc != MPI_SUCCESS)
        return pa_smi_mpi(rc, call, "MPI_Fetch_and_op");
    mutex->held = 0;
    return PA_SMI_OK;
}

int pa_smi_mutex_free(pa_smi_mutex **mutex)
{
    static const char call[] = "pa_smi_mutex_free";
    if (!mutex || !*mutex)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the mutex is NULL");
    pa_smi_mutex *m = *mutex;
    int status = m->held ? pa_smi_fail(PA_SMI_ERR_BUSY, call,
                                       "the mutex is in use: this process holds it "
                                       "(pa_smi_mutex_unlock first)")
                         : PA_SMI_OK;
    status = pa_smi_agree(m->comm, status, call);
    if (status)
        return status;
    MPI_Win_unlock_all(m->window);
    MPI_Win_free(&m->window);
    MPI_Comm_free(&m->comm);
    free(m);
    *mutex = NULL;
    return PA_SMI_OK;
}
