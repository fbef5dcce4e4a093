/* The PMPI shims, generated from calls.def: each times its PMPI_ call and hands the event to
 * pa_ipm_record(), the one function that records. MPI_Init*, MPI_Pcontrol and MPI_Finalize are the
 * profiler's lifecycle and are written out by hand. */
#include <stdarg.h>

#include "ipm.h"
#include "timer.h"

#define PA_IPM_CALL(ret, name, params, args, bytes, peer, comm)                                   \
    PA_IPM_EXPORT ret name params                                                                  \
    {                                                                                              \
        uint64_t start = pa_ticks();                                                               \
        ret status_code = P##name args;                                                            \
        uint64_t ticks = pa_ticks() - start;                                                       \
        pa_ipm_record(PA_IPM_ID_##name, bytes, peer, comm, ticks);                                 \
        return status_code;                                                                        \
    }
#include "calls.def"
#undef PA_IPM_CALL

PA_IPM_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int code = PMPI_Init(argc, argv);
    if (code == MPI_SUCCESS)
        pa_ipm_start();
    return code;
}

PA_IPM_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int code = PMPI_Init_thread(argc, argv, required, provided);
    if (code == MPI_SUCCESS)
        pa_ipm_start();
    return code;
}

/* MPI_Pcontrol(1, "name") enters region "name", MPI_Pcontrol(-1, "name") leaves it. */
PA_IPM_EXPORT int MPI_Pcontrol(const int level, ...)
{
    if (level == 1 || level == -1) {
        va_list rest;
        va_start(rest, level);
        const char *name = va_arg(rest, const char *);
        va_end(rest);
        pa_ipm_region(level, name);
    }
    return PMPI_Pcontrol(level);
}

PA_IPM_EXPORT int MPI_Finalize(void)
{
    pa_ipm_write();
    return PMPI_Finalize();
}
