/* The size of a datatype, which every shim that moves data asks for: PMPI_Type_size is a call into
 * the MPI library per event, so each thread keeps a small direct-mapped cache of the sizes of the
 * predefined datatypes it met (MPI_COMBINER_NAMED). Only those are cached: their handles live as
 * long as the library, while a freed derived datatype's handle may come back naming another
 * type. A derived datatype is remembered as such (its handle can only ever name derived types),
 * and its size is asked every time. */
#include "ipm.h"

#define PA_IPM_TYPE_SLOT_BITS 4

typedef struct {
    uint64_t handle; /* the datatype's bits; 0 = empty */
    uint64_t size;   /* bytes; 0 for a derived datatype (ask PMPI_Type_size) */
} type_slot_t;

static PA_IPM_THREAD_LOCAL type_slot_t sizes[1 << PA_IPM_TYPE_SLOT_BITS];

static uint64_t asked(MPI_Datatype datatype)
{
    int size = 0;
    return PMPI_Type_size(datatype, &size) == MPI_SUCCESS && size > 0 ? (uint64_t)size : 0;
}

uint64_t pa_ipm_type_size(MPI_Datatype datatype)
{
    uint64_t bits = PA_IPM_HANDLE_BITS(datatype);
    type_slot_t *slot = &sizes[pa_ipm_fibonacci_slot(bits, PA_IPM_TYPE_SLOT_BITS)];
    if (slot->handle == bits && bits != 0)
        return slot->size ? slot->size : asked(datatype);
    if (datatype == MPI_DATATYPE_NULL)
        return 0;
    int integers, addresses, types, combiner;
    if (PMPI_Type_get_envelope(datatype, &integers, &addresses, &types, &combiner) != MPI_SUCCESS)
        return 0;
    uint64_t size = asked(datatype);
    if (size > 0 || combiner != MPI_COMBINER_NAMED)
        *slot = (type_slot_t){bits, combiner == MPI_COMBINER_NAMED ? size : 0};
    return size;
}
