/* Files named by the user or the environment (matrix=, file=, values=, HWLOC_XMLFILE,
 * PERFATLAS_CPUINFO) are read only where they are regular files (docs/safety/native.md): open(2)
 * of a FIFO without a writer blocks forever, a device may never end, a folder is no file. The
 * file is opened with O_NONBLOCK and fstat'ed before a byte is read. */
#ifndef PA_FILES_H
#define PA_FILES_H

#include <stddef.h>
#include <stdio.h>

/* `path` opened for reading where it is a regular file; else NULL and one sentence in `error`:
 * "cannot read <what> <path>: <reason>", or "<what> <path> is not a regular file (a FIFO);
 * <remedy>" (what: "the matrix file"; remedy: "give a Matrix Market file"). */
FILE *pa_open_regular(const char *path, const char *what, const char *remedy, char *error,
                      size_t size);

/* The same check for a file another library opens itself (hwloc's HWLOC_XMLFILE); on refusal,
 * the sentence and exit status 2. */
void pa_require_regular(const char *path, const char *what, const char *remedy);

#endif
