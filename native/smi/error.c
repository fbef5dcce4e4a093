/* The one-sentence messages of libpa-smi: per thread, naming the call that failed. */
#include <stdarg.h>
#include <stdio.h>

#include "smi_internal.h"

static _Thread_local char message[768];

const char *pa_smi_error(void) { return message; }

int pa_smi_fail(int code, const char *call, const char *format, ...)
{
    int used = snprintf(message, sizeof message, "%s: ", call);
    va_list args;
    va_start(args, format);
    vsnprintf(message + used, sizeof message - (size_t)used, format, args);
    va_end(args);
    return code;
}

int pa_smi_mpi_failure(int rc, const char *call, const char *mpi_call)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return pa_smi_fail(PA_SMI_ERR_MPI, call, "%s failed: %s", mpi_call, text);
}

int pa_smi_agree(MPI_Comm comm, int status, const char *call)
{
    int failed = status != PA_SMI_OK, any = failed;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    if (failed)
        return status;
    if (any)
        return pa_smi_fail(PA_SMI_ERR_REMOTE, call, "the call failed on another process");
    return PA_SMI_OK;
}
