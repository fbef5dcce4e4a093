# The optional parts of a build and whether each was built (docs/install.md). Every place that
# finds an optional library records the outcome once with perfatlas_part(); the build writes them
# all to build-parts.json beside the executables, which `perfatlas doctor` lists and from which a
# benchmark whose part is missing is stored as "not built here: <why>" (perfatlas/launch/build_parts.py).
#
#   perfatlas_part(NAME BUILT WHY_OR_DETAIL...)
#     NAME: the part as users know it (MPI, CHOLMOD, MUMPS, ScaLAPACK, PAPI, MPI Fortran);
#     BUILT: a CMake truth value; WHY_OR_DETAIL: what was found (built) or the sentence saying why
#     not and what to install (not built), in one string or several that are joined.
function(perfatlas_part name built text)
  string(CONCAT text "${text}" ${ARGN})  # a long sentence may come in several strings
  string(REPLACE "\\" "\\\\" text "${text}")  # JSON string escapes
  string(REPLACE "\"" "\\\"" text "${text}")
  if(built)
    set(entry "{\"built\": true, \"detail\": \"${text}\"}")
  else()
    set(entry "{\"built\": false, \"why\": \"${text}\"}")
  endif()
  set_property(GLOBAL APPEND PROPERTY PERFATLAS_PART_NAMES "${name}")
  set_property(GLOBAL PROPERTY "PERFATLAS_PART_${name}" "${entry}")
  if(built)
    message(STATUS "perfatlas: built with ${name}: ${text}")
  else()
    message(STATUS "perfatlas: not built: ${name}: ${text}")
  endif()
endfunction()

# bin/build-parts.json (schema perfatlas.build/1), installed beside the executables: the parts,
# and the family of the build's MPI (mpi_family: the profiler beside the executables is for it).
function(perfatlas_write_parts)
  get_property(names GLOBAL PROPERTY PERFATLAS_PART_NAMES)
  set(json "{\"schema\": \"perfatlas.build/1\", \"parts\": {}}")
  get_property(family GLOBAL PROPERTY PERFATLAS_MPI_FAMILY) # openmpi, mpich, other (none: no MPI)
  if(family)
    string(JSON json SET "${json}" mpi_family "\"${family}\"")
  endif()
  foreach(name IN LISTS names)
    get_property(entry GLOBAL PROPERTY "PERFATLAS_PART_${name}")
    string(JSON json SET "${json}" parts "${name}" "${entry}")
  endforeach()
  file(WRITE "${CMAKE_BINARY_DIR}/bin/build-parts.json" "${json}\n")
  install(FILES "${CMAKE_BINARY_DIR}/bin/build-parts.json"
          DESTINATION ${PERFATLAS_BIN_DESTINATION})
endfunction()
