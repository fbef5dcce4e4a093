/* OpenMP teams started checked (docs/contract.md, Arguments; docs/safety/native.md).
 *
 * Where a thread of a team cannot be created (an address-space limit, ulimit -v; a process
 * limit, ulimit -u or a cgroup's pids.max), libgomp ends the process itself with "libgomp:
 * Thread creation failed: ..." and status 1: not the program's sentence, and a status that is
 * neither bad input (2) nor a failed check (3). A program whose team size is a parameter calls
 * pa_openmp_start(threads) before it allocates its data. */
#ifndef PA_THREADS_H
#define PA_THREADS_H

/* Sets the OpenMP team size to `threads` and starts the team now. First, threads - 1 POSIX
 * threads with the stack libgomp gives its own (OMP_STACKSIZE, else GOMP_STACKSIZE, else the
 * process's default) are created and held alive together; where one cannot be, the program
 * ends with one sentence naming the count, the stack and the system's reason, status 2. The
 * team's threads then wait in libgomp's pool for the regions that follow, so that what the
 * program allocates afterwards (checked by pa_alloc) cannot take the room they need. */
void pa_openmp_start(int threads);

#endif
