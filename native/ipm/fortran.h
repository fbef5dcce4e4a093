/* The Fortran entry points (fortran.c by hand, fortran_generated.c from calls.def by
 * gen_fortran.py): names, sentinels and conversions they share. Open MPI: every binding; MPICH:
 * only `use mpi_f08` (its mpif.h and `use mpi` bindings call the C MPI_ functions, whose shims
 * already record them). */
#ifndef PA_IPM_FORTRAN_H
#define PA_IPM_FORTRAN_H

#include <stddef.h>

#include "ipm.h"

/* One Fortran entry point `fn` under the four names Fortran compilers use (gfortran: lower case
 * and one trailing underscore; others: none, two, upper case). */
#define PA_IPM_FORTRAN_NAMES(ret, fn, lower, upper, params)         \
    PA_IPM_EXPORT ret lower params __attribute__((alias(#fn)));     \
    PA_IPM_EXPORT ret lower##_ params __attribute__((alias(#fn)));  \
    PA_IPM_EXPORT ret lower##__ params __attribute__((alias(#fn))); \
    PA_IPM_EXPORT ret upper params __attribute__((alias(#fn)));
/* The same entry point under the name of `use mpi_f08` (Open MPI: lower_f08_). Its handles are
 * TYPE(MPI_Comm) etc., a derived type holding one INTEGER, passed by reference like an MPI_Fint;
 * TYPE(MPI_Status) has the C layout of MPI_Status; IERROR is optional (a null pointer). */
#define PA_IPM_FORTRAN_F08(ret, fn, lower, params) \
    PA_IPM_EXPORT ret lower##_f08_ params __attribute__((alias(#fn)));

#ifdef OPEN_MPI
/* Every Fortran INTEGER is read as a C int, every int array passed through as is. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not a C int");

/* Open MPI's Fortran sentinels: common blocks whose addresses stand for MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (libmpi exports
 * them). */
extern char mpi_fortran_bottom_, mpi_fortran_in_place_, mpi_fortran_status_ignore_,
    mpi_fortran_statuses_ignore_, mpi_fortran_unweighted_, mpi_fortran_weights_empty_;

/* A Fortran buffer as C sees it: MPI_BOTTOM and MPI_IN_PLACE translated. */
static inline void *pa_ipm_fortran_buffer(void *fortran)
{
    return fortran == &mpi_fortran_bottom_     ? MPI_BOTTOM
           : fortran == &mpi_fortran_in_place_ ? MPI_IN_PLACE
                                               : fortran;
}

/* A Fortran weights array as C sees it: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY translated. */
static inline int *pa_ipm_fortran_weights(MPI_Fint *fortran)
{
    return (void *)fortran == &mpi_fortran_unweighted_      ? MPI_UNWEIGHTED
           : (void *)fortran == &mpi_fortran_weights_empty_ ? MPI_WEIGHTS_EMPTY
                                                            : (int *)fortran;
}

#define PA_IPM_FORTRAN_STATUS_IGNORED(f)   ((void *)(f) == &mpi_fortran_status_ignore_)
#define PA_IPM_FORTRAN_STATUSES_IGNORED(f) ((void *)(f) == &mpi_fortran_statuses_ignore_)
#define PA_IPM_FORTRAN_STATUS_FINTS        (sizeof(MPI_Status) / sizeof(MPI_Fint)) /* MPI_STATUS_SIZE */
#else
/* MPICH's mpi_f08: a handle is the C one (an int), TYPE(MPI_Status) is MPI_F08_status, the C
 * layout (mpi.h), and its sentinels are the C objects mpi.h declares. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not a C int");
_Static_assert(sizeof(MPI_Comm) == sizeof(MPI_Fint) && sizeof(MPI_Datatype) == sizeof(MPI_Fint) &&
                   sizeof(MPI_Request) == sizeof(MPI_Fint),
               "MPICH's handles are not Fortran integers");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "TYPE(MPI_Status) is not C's");
/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are module variables of libmpichfort: weak, so that a C
 * program, without libmpichfort, still loads the library. */
extern int pa_ipm_f08_unweighted __asm__("__mpi_f08_link_constants_MOD_mpi_unweighted")
    __attribute__((weak));
extern int pa_ipm_f08_weights_empty __asm__("__mpi_f08_link_constants_MOD_mpi_weights_empty")
    __attribute__((weak));

/* A TYPE(C_PTR) argument (MPI_Alloc_mem's baseptr): a location, no sentinel. */
static inline void *pa_ipm_fortran_buffer(void *fortran) { return fortran; }

static inline int *pa_ipm_fortran_weights(MPI_Fint *fortran)
{
    return fortran == &pa_ipm_f08_unweighted      ? MPI_UNWEIGHTED
           : fortran == &pa_ipm_f08_weights_empty ? MPI_WEIGHTS_EMPTY
                                                  : (int *)fortran;
}

#define PA_IPM_FORTRAN_STATUS_IGNORED(f)   ((void *)(f) == (void *)&MPIR_F08_MPI_STATUS_IGNORE_OBJ)
#define PA_IPM_FORTRAN_STATUSES_IGNORED(f) ((void *)(f) == (void *)MPIR_F08_MPI_STATUSES_IGNORE_OBJ)
#define PA_IPM_FORTRAN_STATUS_FINTS        (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* The first element of a choice buffer, which mpi_f08 passes as an array descriptor (gfortran's
 * and TS 29113's both begin with the base address), MPI_IN_PLACE and MPI_BOTTOM translated. */
static inline const void *pa_ipm_f08_choice(const void *descriptor)
{
    const void *base = *(const void *const *)descriptor;
    return base == &MPIR_F08_MPI_IN_PLACE ? MPI_IN_PLACE
           : base == &MPIR_F08_MPI_BOTTOM ? MPI_BOTTOM
                                          : base;
}

/* The next definition of `symbol` (MPICH's own binding, after this library), looked up once
 * into *slot; a missing one ends the program with a message. */
void *pa_ipm_f08_next(void **slot, const char *symbol);
#endif

/* Arrays of handles and statuses up to this many elements are converted on the stack. */
#define PA_IPM_FORTRAN_STACK 16
/* A temporary of n elements: `stack` when they fit, else malloc (NULL when that fails). */
void *pa_ipm_fortran_array(void *stack, int n, size_t element);
void pa_ipm_fortran_array_free(void *array, const void *stack);

/* A blank-padded Fortran string of `length` characters as a C string (leading and trailing
 * blanks removed, as Open MPI's binding does), malloc'd; NULL when out of memory. */
char *pa_ipm_fortran_string_in(const char *fortran, size_t length);
/* Room for a C output string that a Fortran one of `length` characters receives: at least every
 * MPI_MAX_* bound and `also` characters, plus the terminating NUL; malloc'd, NULL when out of
 * memory. pa_ipm_fortran_string_out copies it back, blank-padded, and frees it. */
char *pa_ipm_fortran_string_room(size_t length, int also);
void pa_ipm_fortran_string_out(char *c, char *fortran, size_t length);

/* The ranks an alltoallw on comm has a datatype for (its remote group's for an
 * intercommunicator), and the in (`incoming` = 1) or out neighbours of comm's topology. */
int pa_ipm_fortran_ranks(MPI_Comm comm);
int pa_ipm_fortran_neighbors(MPI_Comm comm, int incoming);

#endif
