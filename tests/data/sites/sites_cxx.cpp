// The call-site tests' C++ program (tests/test_ipm_sites.py): MPI calls from a function template
// in a namespace, whose name must come back demangled. Lines that call MPI are marked "site: NAME".
#include <mpi.h>

namespace halo {
template <typename T> __attribute__((noinline)) void broadcast(T *values, int count, int times)
{
    for (int i = 0; i < times; i++)
        MPI_Bcast(values, count * (int)sizeof(T), MPI_BYTE, 0, MPI_COMM_WORLD); // site: cxx-bcast
}
} // namespace halo

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double values[3] = {1, 2, 3};
    halo::broadcast(values, 3, 4);
    MPI_Barrier(MPI_COMM_WORLD); // site: cxx-barrier
    MPI_Finalize();
    return 0;
}
