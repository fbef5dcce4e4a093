/* The profiler's lifecycle, written by hand: MPI_Init* starts it, MPI_Pcontrol opens and closes
 * regions, MPI_Finalize writes the profile. A program that calls MPI_Abort, or exits without
 * MPI_Finalize (atexit), still leaves each rank's own document, flagged partial. Only the process
 * that called MPI_Init writes: a child it forked inherits the atexit handler and the table, and
 * must not rewrite its parent's files when it exits. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>

#include "names.h"
#include "table.h"

static void stop(void)
{
    pa_ipm_close_regions();
    pa_ipm_flush_polls();
    pa_ipm_flush_posted();
    pa_ipm_active = 0;
    pa_ipm_merge_tables(); /* every thread's events into pa_ipm.table, which the files show */
}

static void exit_without_finalize(void)
{
    if (!pa_ipm_active || !pa_ipm_in_rank_process())
        return;
    stop();
    pa_ipm_write_rank("exit without MPI_Finalize");
}

/* SIGTERM (a batch system's time limit; perfatlas profile stopped and passing it on): the
 * rank's own document, flagged partial, then the default action. Only where the program left
 * SIGTERM at its default. Writing from a handler is not async-signal-safe (stdio, the table's
 * lock): a rank caught inside them hangs until the launcher kills it, and loses what it would
 * have lost without the handler; every other rank keeps its profile. */
static void terminated(int number)
{
    if (pa_ipm_active && pa_ipm_in_rank_process()) {
        stop();
        pa_ipm_write_rank("terminated by SIGTERM");
    }
    signal(number, SIG_DFL);
    raise(number);
}

static int started(int code)
{
    if (code == MPI_SUCCESS) {
        pa_ipm_start();
        atexit(exit_without_finalize);
        struct sigaction current;
        if (sigaction(SIGTERM, NULL, &current) == 0 && current.sa_handler == SIG_DFL &&
            !(current.sa_flags & SA_SIGINFO))
            signal(SIGTERM, terminated);
    }
    return code;
}

PA_IPM_EXPORT int MPI_Init(int *argc, char ***argv)
{
    pa_ipm_self.in_mpi++; /* files MPI opens while starting are its own */
    int code = PMPI_Init(argc, argv);
    pa_ipm_self.in_mpi--;
    return started(code);
}

PA_IPM_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    pa_ipm_self.in_mpi++;
    int code = PMPI_Init_thread(argc, argv, required, provided);
    pa_ipm_self.in_mpi--;
    return started(code);
}

/* MPI_Pcontrol(1, "name") enters region "name", MPI_Pcontrol(-1, "name") leaves it (IPM's use).
 * Without a name the call is the standard's level alone (0 off, 1 on, 2 flush; MPI 4.1 sec.
 * 15.2.4), which many codes call: it changes no region. A variadic callee cannot know whether a
 * name was passed, and va_arg then reads whatever the argument register holds, so a name is taken
 * only where one is proven: pa_ipm_passed_name reads it without faulting. */
PA_IPM_EXPORT int MPI_Pcontrol(const int level, ...)
{
    if (level == 1 || level == -1) {
        va_list rest;
        va_start(rest, level);
        const void *candidate = va_arg(rest, const void *);
        va_end(rest);
        char name[PA_IPM_PASSED_NAME];
        if (pa_ipm_passed_name(candidate, name))
            pa_ipm_region(level, name);
    }
    return PMPI_Pcontrol(level);
}

PA_IPM_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (pa_ipm_active && pa_ipm_in_rank_process()) {
        stop();
        pa_ipm_write_rank("MPI_Abort");
    }
    return PMPI_Abort(comm, errorcode);
}

PA_IPM_EXPORT int MPI_Finalize(void)
{
    if (pa_ipm_active) {
        stop();
        pa_ipm_write_rank(NULL);
        pa_ipm_write_profile();
    }
    return PMPI_Finalize();
}
