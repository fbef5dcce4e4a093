/* Fortran (mpif.h, `use mpi`, `use mpi_f08`) calls.
 *
 * MPICH 4.0's mpif.h and `use mpi` bindings (libmpichfort) call the C MPI_ functions, so the C
 * shims of calls.def already record those Fortran calls, but its `use mpi_f08` ones call PMPI_
 * or MPIR_ directly (the profiler would never start); Open MPI 4.1's (libmpi_mpifh, libmpi_usempif08) call PMPI_
 * directly and bypass them (MPI_INIT included: the profiler would never start). So, for Open MPI,
 * Fortran entry points convert their arguments and call the C shims, as MPICH's bindings do:
 * every event is still recorded by calls.def's shims, with its bytes, peer and communicator
 * columns. They are generated from calls.def by gen_fortran.py (fortran_generated.c), with the
 * exceptions fortran.def lists, under the four mpif.h names (mpi_send, mpi_send_, mpi_send__,
 * MPI_SEND) and the mpi_f08 one (mpi_send_f08_). Not wrapped, so not recorded from Fortran
 * under Open MPI (fortran.def says why, call by call): the calls that take Fortran callbacks
 * (MPI_Op_create, the keyval and errhandler creators, MPI_Grequest_start,
 * MPI_Register_datarep), the attribute get/set calls (a Fortran attribute is an integer value),
 * MPI_Comm_spawn and MPI_Comm_spawn_multiple (arrays of Fortran strings); MPI_T_* and the
 * c2f/f2c functions have no Fortran binding. For MPICH the same is generated for mpi_f08 only,
 * save its calls with a choice buffer (mpi_send_f08ts_): those time MPICH's own binding,
 * pa_ipm_f08_next, and record from its arguments (gen_fortran.py, ChoiceShim).
 *
 * Written here, because their Fortran shape is not the C one: MPI_INIT and MPI_INIT_THREAD (no
 * argc, argv) and MPI_PCONTROL (no region name): Fortran levels 1 and -1 enter and leave a region
 * named "fortran" (with both libraries: MPICH's binding would otherwise hand the C shim no name).
 * Below them, the conversions fortran.h declares. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortran.h"

#define PA_IPM_FORTRAN_REGION "fortran"

/* MPI_PCONTROL(LEVEL) has no IERROR argument. */
static void fortran_pcontrol(const MPI_Fint *level) { MPI_Pcontrol(*level, PA_IPM_FORTRAN_REGION); }
PA_IPM_FORTRAN_NAMES(void, fortran_pcontrol, mpi_pcontrol, MPI_PCONTROL, (const MPI_Fint *level))
PA_IPM_FORTRAN_F08(void, fortran_pcontrol, mpi_pcontrol, (const MPI_Fint *level))

/* IERROR is optional in mpi_f08. */
static void fortran_init(MPI_Fint *ierr)
{
    int code = MPI_Init(NULL, NULL);
    if (ierr != NULL)
        *ierr = code;
}
PA_IPM_FORTRAN_F08(void, fortran_init, mpi_init, (MPI_Fint * ierr))

static void fortran_init_thread(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int c_provided = 0;
    int code = MPI_Init_thread(NULL, NULL, *required, &c_provided);
    *provided = c_provided;
    if (ierr != NULL)
        *ierr = code;
}
PA_IPM_FORTRAN_F08(void, fortran_init_thread, mpi_init_thread,
                   (const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
#ifdef OPEN_MPI /* MPICH's mpif.h MPI_INIT calls the C MPI_Init itself */
PA_IPM_FORTRAN_NAMES(void, fortran_init, mpi_init, MPI_INIT, (MPI_Fint * ierr))
PA_IPM_FORTRAN_NAMES(void, fortran_init_thread, mpi_init_thread, MPI_INIT_THREAD,
                     (const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
#else
void *pa_ipm_f08_next(void **slot, const char *symbol)
{
    void *next = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (next == NULL) {
        next = dlsym(RTLD_NEXT, symbol);
        if (next == NULL) {
            fprintf(stderr, "perfatlas-ipm: MPICH's mpi_f08 binding %s is not loaded\n", symbol);
            abort();
        }
        __atomic_store_n(slot, next, __ATOMIC_RELEASE);
    }
    return next;
}
#endif

void *pa_ipm_fortran_array(void *stack, int n, size_t element)
{
    if (n <= PA_IPM_FORTRAN_STACK)
        return stack;
    return malloc((size_t)n * element);
}

void pa_ipm_fortran_array_free(void *array, const void *stack)
{
    if (array != stack)
        free(array);
}

char *pa_ipm_fortran_string_in(const char *fortran, size_t length)
{
    size_t start = 0;
    while (start < length && fortran[start] == ' ')
        start++;
    while (length > start && fortran[length - 1] == ' ')
        length--;
    char *c = malloc(length - start + 1);
    if (c != NULL) {
        memcpy(c, fortran + start, length - start);
        c[length - start] = '\0';
    }
    return c;
}

/* The largest number of characters a C call writes into an output string of its own accord
 * (MPI-3.1: MPI_Get_processor_name, MPI_Error_string, MPI_*_get_name, MPI_Info_get_nthkey,
 * MPI_File_get_view, MPI_Open_port, MPI_Lookup_name, MPI_Get_library_version). */
static size_t largest_mpi_string(void)
{
    const size_t bounds[] = {MPI_MAX_PROCESSOR_NAME, MPI_MAX_ERROR_STRING,
                             MPI_MAX_OBJECT_NAME,    MPI_MAX_INFO_KEY,
                             MPI_MAX_INFO_VAL,       MPI_MAX_PORT_NAME,
                             MPI_MAX_DATAREP_STRING, MPI_MAX_LIBRARY_VERSION_STRING};
    size_t largest = 0;
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        largest = bounds[i] > largest ? bounds[i] : largest;
    return largest;
}

char *pa_ipm_fortran_string_room(size_t length, int also)
{
    size_t room = largest_mpi_string();
    room = length > room ? length : room;
    room = also > 0 && (size_t)also > room ? (size_t)also : room;
    char *c = malloc(room + 1);
    if (c != NULL)
        c[0] = '\0';
    return c;
}

void pa_ipm_fortran_string_out(char *c, char *fortran, size_t length)
{
    size_t n = strlen(c);
    n = n < length ? n : length;
    memcpy(fortran, c, n);
    memset(fortran + n, ' ', length - n);
    free(c);
}

int pa_ipm_fortran_ranks(MPI_Comm comm)
{
    int inter = 0, ranks = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &ranks);
    return ranks;
}

/* MPI-3.1 7.6: a Cartesian topology has a source and a destination per dimension, a graph
 * topology the same neighbours both ways, a distributed graph its own in and out degrees. */
int pa_ipm_fortran_neighbors(MPI_Comm comm, int incoming)
{
    int topology = MPI_UNDEFINED, count = 0, rank = 0, in = 0, out = 0, weighted = 0;
    if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topology) != MPI_SUCCESS)
        return 0;
    if (topology == MPI_CART) {
        PMPI_Cartdim_get(comm, &count);
        return 2 * count;
    }
    if (topology == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &count);
        return count;
    }
    if (topology == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        return incoming ? in : out;
    }
    return 0;
}
