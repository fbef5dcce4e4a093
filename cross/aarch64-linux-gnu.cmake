# CMake toolchain file: perfatlas's native code cross-compiled for aarch64 Linux on an x86-64
# Debian host (docs/arm64.md, make test-arm64). The compilers are Debian's aarch64-linux-gnu-gcc
# and -gfortran (gcc-aarch64-linux-gnu, gfortran-aarch64-linux-gnu); every header and library
# comes from an arm64 Debian 12 tree, the sysroot, named by the environment variable
# PERFATLAS_SYSROOT (an environment variable, so that CMake's test projects see it too). The
# tree's absolute links must first be made relative (cross/relative_symlinks.py).
if(NOT IS_DIRECTORY "$ENV{PERFATLAS_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "PERFATLAS_SYSROOT must name an arm64 Debian tree (it has "
                      "usr/lib/aarch64-linux-gnu): '$ENV{PERFATLAS_SYSROOT}' does not")
endif()
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_Fortran_COMPILER aarch64-linux-gnu-gfortran)
set(CMAKE_SYSROOT "$ENV{PERFATLAS_SYSROOT}")
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries, headers and packages from the tree only; programs run at build time (Python, for
# native/ipm/gen_fortran.py) from this host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (hwloc, PAPI) reads the tree's .pc files and prefixes their paths with the tree.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CMAKE_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${CMAKE_SYSROOT}/usr/share/pkgconfig")

# The tree's Open MPI, whose mpicc and mpifort are arm64 programs that cannot run here: what they
# say (mpicc --showme, mpifort --showme: share/openmpi/*-wrapper-data.txt) given to FindMPI.
set(MPI_SKIP_COMPILER_WRAPPER TRUE)
set(MPI_ASSUME_NO_BUILTIN_MPI TRUE)
set(pa_openmpi "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/openmpi")
set(MPI_C_HEADER_DIR "${pa_openmpi}/include")
set(MPI_C_LIB_NAMES mpi)
set(MPI_Fortran_F77_HEADER_DIR "${pa_openmpi}/include")
set(MPI_Fortran_MODULE_DIR "${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/fortran/gfortran-mod-15/openmpi")
set(MPI_Fortran_LIB_NAMES mpi_usempif08 mpi_usempi_ignore_tkr mpi_mpifh mpi)
foreach(pa_lib IN LISTS MPI_Fortran_LIB_NAMES)
  set(MPI_${pa_lib}_LIBRARY "${pa_openmpi}/lib/lib${pa_lib}.so")
endforeach()
