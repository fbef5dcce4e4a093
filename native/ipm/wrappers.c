/* The PMPI shims, generated from calls.def: each times its PMPI_ call and hands the event, with
 * its caller, to pa_ipm_record() (or, for a nonblocking receive, to pa_ipm_post()). The shape of a shim follows
 * its kind; CUSTOM calls are written by hand in requests.c. */
#include "ipm.h"
#include "timer.h"

/* MPI-3.1 keeps deprecated calls (MPI_Attr_get, MPI_Keyval_create, ...): they are wrapped too. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Times `call` into `ticks`, marking this thread as inside MPI meanwhile. */
#define PA_IPM_TIMED(ret, code, call, ticks)         \
    pa_ipm_self.in_mpi++;                            \
    uint64_t pa_start = pa_ticks_unfenced();         \
    ret code = call;                                 \
    uint64_t ticks = pa_ticks_unfenced() - pa_start; \
    pa_ipm_self.in_mpi--

#define PA_IPM_SHIM_PLAIN(ret, name, params, args, bytes, peer, comm)               \
    PA_IPM_EXPORT ret name params                                                   \
    {                                                                               \
        PA_IPM_TIMED(ret, code, P##name args, ticks);                               \
        pa_ipm_record(PA_IPM_ID_##name, bytes, peer, comm, ticks, PA_IPM_CALLER()); \
        return code;                                                                \
    }

/* The caller's status may be MPI_STATUS_IGNORE: an inner `status` shadows the parameter, so that
 * the table's argument list and PA_IPM_RECEIVED / PA_IPM_SOURCE read a real one. */
#define PA_IPM_SHIM_STATUS(ret, name, params, args, bytes, peer, comm)                      \
    PA_IPM_EXPORT ret name params                                                           \
    {                                                                                       \
        MPI_Status *const pa_caller_status = status, pa_own_status;                         \
        {                                                                                   \
            MPI_Status *status =                                                            \
                pa_caller_status == MPI_STATUS_IGNORE ? &pa_own_status : pa_caller_status;  \
            PA_IPM_TIMED(ret, code, P##name args, ticks);                                   \
            if (code == MPI_SUCCESS)                                                        \
                pa_ipm_record(PA_IPM_ID_##name, bytes, peer, comm, ticks, PA_IPM_CALLER()); \
            return code;                                                                    \
        }                                                                                   \
    }

#define PA_IPM_SHIM_REQUEST(ret, name, params, args, bytes, peer, comm)                         \
    PA_IPM_EXPORT ret name params                                                               \
    {                                                                                           \
        PA_IPM_TIMED(ret, code, P##name args, ticks);                                           \
        if (code == MPI_SUCCESS)                                                                \
            pa_ipm_post(*request, PA_IPM_ID_##name, bytes, peer, comm, ticks, PA_IPM_CALLER()); \
        return code;                                                                            \
    }

#define PA_IPM_SHIM_SEND        PA_IPM_SHIM_PLAIN
#define PA_IPM_SHIM_COLL        PA_IPM_SHIM_PLAIN
#define PA_IPM_SHIM_PUT         PA_IPM_SHIM_PLAIN
#define PA_IPM_SHIM_IO          PA_IPM_SHIM_PLAIN
#define PA_IPM_SHIM_OTHER       PA_IPM_SHIM_PLAIN
#define PA_IPM_SHIM_RECV        PA_IPM_SHIM_STATUS
#define PA_IPM_SHIM_IO_READ     PA_IPM_SHIM_STATUS
#define PA_IPM_SHIM_IRECV       PA_IPM_SHIM_REQUEST
#define PA_IPM_SHIM_CUSTOM(...) /* requests.c */

#define PA_IPM_CALL(kind, ret, name, params, args, bytes, peer, comm) \
    PA_IPM_SHIM_##kind(ret, name, params, args, bytes, peer, comm)
#include "calls.def"
#undef PA_IPM_CALL
