/* perfatlas_ipm.h: name the regions of an MPI program for perfatlas-ipm.
 *
 *   perfatlas_ipm_begin("solve");  ...  perfatlas_ipm_end("solve");
 *
 * is MPI_Pcontrol(1, "solve") ... MPI_Pcontrol(-1, "solve"): regions nest, and a program built
 * with these runs unchanged (and unprofiled) without the library, where MPI_Pcontrol does nothing. */
#ifndef PERFATLAS_IPM_H
#define PERFATLAS_IPM_H

#include <mpi.h>

static inline void perfatlas_ipm_begin(const char *region) { MPI_Pcontrol(1, region); }
static inline void perfatlas_ipm_end(const char *region) { MPI_Pcontrol(-1, region); }

#endif
