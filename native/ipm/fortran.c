/* Fortran (mpif.h, `use mpi`) calls.
 *
 * MPICH 4.0's bindings (libmpichfort) call the C MPI_ functions, so the C shims of calls.def
 * already record Fortran calls; Open MPI 4.1's (libmpi_mpifh) call PMPI_ directly and bypass
 * them (MPI_INIT included: the profiler would never start). So, for Open MPI, the Fortran entry
 * points below convert their arguments and call the C shims, as MPICH's bindings do: every event
 * is still recorded by calls.def's shims, with its bytes, peer and communicator columns. Generating
 * them from calls.def is not possible with the preprocessor alone (a Fortran shim converts each
 * parameter by its type), so they are written here for the calls most programs spend their MPI
 * time in: MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE, MPI_PCONTROL; MPI_SEND, RECV, ISEND, IRECV,
 * SENDRECV; MPI_WAIT, WAITALL, TEST; MPI_BARRIER, BCAST, REDUCE, ALLREDUCE. Other Fortran calls
 * are not recorded under Open MPI. The mpi_f08 module's entry points are not wrapped.
 *
 * MPI_PCONTROL(level) from Fortran passes no region name: levels 1 and -1 enter and leave a region
 * named "fortran" (with both libraries: MPICH's binding would otherwise hand the C shim no name). */
#include <stdlib.h>

#include "ipm.h"

#define PA_IPM_FORTRAN_REGION "fortran"

/* One Fortran entry point under the four names compilers use (gfortran: lower case and one
 * trailing underscore). */
#define PA_IPM_FORTRAN(lower, upper, params, ...)                                                  \
    static void pa_ipm_fortran_##lower params { __VA_ARGS__ }                                      \
    PA_IPM_EXPORT void lower params __attribute__((alias("pa_ipm_fortran_" #lower)));              \
    PA_IPM_EXPORT void lower##_ params __attribute__((alias("pa_ipm_fortran_" #lower)));           \
    PA_IPM_EXPORT void lower##__ params __attribute__((alias("pa_ipm_fortran_" #lower)));          \
    PA_IPM_EXPORT void upper params __attribute__((alias("pa_ipm_fortran_" #lower)));

/* MPI_PCONTROL(LEVEL) has no IERROR argument. */
PA_IPM_FORTRAN(mpi_pcontrol, MPI_PCONTROL, (const MPI_Fint *level),
               MPI_Pcontrol(*level, PA_IPM_FORTRAN_REGION);)

#ifdef OPEN_MPI
/* Open MPI's Fortran sentinels: common blocks whose addresses stand for MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE (libmpi exports them). */
extern char mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_status_ignore_,
    mpi_fortran_statuses_ignore_;

static void *buffer(void *fortran)
{
    return fortran == &mpi_fortran_bottom_     ? MPI_BOTTOM
           : fortran == &mpi_fortran_in_place_ ? MPI_IN_PLACE
                                               : fortran;
}

#define STATUS_FINTS (sizeof(MPI_Status) / sizeof(MPI_Fint)) /* Open MPI's MPI_STATUS_SIZE */
#define STATUS_IGNORED(status) ((void *)(status) == &mpi_fortran_status_ignore_)
#define COMM(handle) PMPI_Comm_f2c(*(handle))
#define TYPE(handle) PMPI_Type_f2c(*(handle))

/* A C status back into a Fortran one, unless the caller ignores it. */
static void status_out(const MPI_Status *status, MPI_Fint *fortran)
{
    if (!STATUS_IGNORED(fortran))
        PMPI_Status_c2f(status, fortran);
}

PA_IPM_FORTRAN(mpi_init, MPI_INIT, (MPI_Fint *ierr), *ierr = MPI_Init(NULL, NULL);)
PA_IPM_FORTRAN(mpi_init_thread, MPI_INIT_THREAD,
               (const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr),
               int c_provided = 0;
               *ierr = MPI_Init_thread(NULL, NULL, *required, &c_provided);
               *provided = c_provided;)
PA_IPM_FORTRAN(mpi_finalize, MPI_FINALIZE, (MPI_Fint *ierr), *ierr = MPI_Finalize();)

PA_IPM_FORTRAN(mpi_send, MPI_SEND,
               (void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *ierr),
               *ierr = MPI_Send(buffer(buf), *count, TYPE(datatype), *dest, *tag, COMM(comm));)
PA_IPM_FORTRAN(mpi_recv, MPI_RECV,
               (void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
               MPI_Status c_status;
               *ierr = MPI_Recv(buffer(buf), *count, TYPE(datatype), *source, *tag, COMM(comm),
                                &c_status);
               status_out(&c_status, status);)
PA_IPM_FORTRAN(mpi_isend, MPI_ISEND,
               (void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
               MPI_Request c_request;
               *ierr = MPI_Isend(buffer(buf), *count, TYPE(datatype), *dest, *tag, COMM(comm),
                                 &c_request);
               *request = PMPI_Request_c2f(c_request);)
PA_IPM_FORTRAN(mpi_irecv, MPI_IRECV,
               (void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr),
               MPI_Request c_request;
               *ierr = MPI_Irecv(buffer(buf), *count, TYPE(datatype), *source, *tag, COMM(comm),
                                 &c_request);
               *request = PMPI_Request_c2f(c_request);)
PA_IPM_FORTRAN(mpi_sendrecv, MPI_SENDRECV,
               (void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                const MPI_Fint *dest, const MPI_Fint *sendtag, void *recvbuf,
                const MPI_Fint *recvcount, const MPI_Fint *recvtype, const MPI_Fint *source,
                const MPI_Fint *recvtag, const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
               MPI_Status c_status;
               *ierr = MPI_Sendrecv(buffer(sendbuf), *sendcount, TYPE(sendtype), *dest, *sendtag,
                                    buffer(recvbuf), *recvcount, TYPE(recvtype), *source,
                                    *recvtag, COMM(comm), &c_status);
               status_out(&c_status, status);)

PA_IPM_FORTRAN(mpi_wait, MPI_WAIT, (MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr),
               MPI_Request c_request = PMPI_Request_f2c(*request);
               MPI_Status c_status;
               *ierr = MPI_Wait(&c_request, &c_status);
               *request = PMPI_Request_c2f(c_request);
               status_out(&c_status, status);)
PA_IPM_FORTRAN(mpi_test, MPI_TEST,
               (MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr),
               MPI_Request c_request = PMPI_Request_f2c(*request);
               MPI_Status c_status;
               int c_flag = 0;
               *ierr = MPI_Test(&c_request, &c_flag, &c_status);
               *request = PMPI_Request_c2f(c_request);
               *flag = c_flag;
               if (c_flag) status_out(&c_status, status);)
PA_IPM_FORTRAN(mpi_waitall, MPI_WAITALL,
               (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr),
               int n = *count > 0 ? *count : 0;
               MPI_Request *c_requests = malloc((size_t)(n + 1) * sizeof *c_requests);
               MPI_Status *c_statuses = malloc((size_t)(n + 1) * sizeof *c_statuses);
               if (c_requests == NULL || c_statuses == NULL) {
                   free(c_requests), free(c_statuses);
                   *ierr = MPI_ERR_NO_MEM;
                   return;
               }
               for (int i = 0; i < n; i++) c_requests[i] = PMPI_Request_f2c(requests[i]);
               *ierr = MPI_Waitall(n, c_requests, c_statuses);
               int ignored = (void *)statuses == &mpi_fortran_statuses_ignore_;
               for (int i = 0; i < n; i++) {
                   requests[i] = PMPI_Request_c2f(c_requests[i]);
                   if (!ignored)
                       PMPI_Status_c2f(&c_statuses[i], statuses + i * STATUS_FINTS);
               }
               free(c_requests), free(c_statuses);)

PA_IPM_FORTRAN(mpi_barrier, MPI_BARRIER, (const MPI_Fint *comm, MPI_Fint *ierr),
               *ierr = MPI_Barrier(COMM(comm));)
PA_IPM_FORTRAN(mpi_bcast, MPI_BCAST,
               (void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *root,
                const MPI_Fint *comm, MPI_Fint *ierr),
               *ierr = MPI_Bcast(buffer(buf), *count, TYPE(datatype), *root, COMM(comm));)
PA_IPM_FORTRAN(mpi_reduce, MPI_REDUCE,
               (void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                const MPI_Fint *op, const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierr),
               *ierr = MPI_Reduce(buffer(sendbuf), buffer(recvbuf), *count, TYPE(datatype),
                                  PMPI_Op_f2c(*op), *root, COMM(comm));)
PA_IPM_FORTRAN(mpi_allreduce, MPI_ALLREDUCE,
               (void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,
                const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierr),
               *ierr = MPI_Allreduce(buffer(sendbuf), buffer(recvbuf), *count, TYPE(datatype),
                                     PMPI_Op_f2c(*op), COMM(comm));)
#endif
