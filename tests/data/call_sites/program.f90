! The Fortran test program: a call site in a module procedure (built with -fno-inline).
module solver
  use iso_c_binding, only: c_int, c_char, c_null_char
  implicit none
  interface
    integer(c_int) function probe(tag) bind(C, name="probe")
      import :: c_int, c_char
      character(kind=c_char), dimension(*), intent(in) :: tag
    end function probe
    subroutine probe_report() bind(C, name="probe_report")
    end subroutine probe_report
  end interface
  integer, volatile :: sink = 0
contains
  subroutine step()
    sink = sink + probe("fortran_module" // c_null_char) ! site:fortran_module
  end subroutine step
end module solver

program main
  use solver
  call step()
  call probe_report()
end program main
