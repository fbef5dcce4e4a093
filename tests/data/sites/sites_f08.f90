! The call-site tests' Fortran program with `use mpi_f08` (tests/test_ipm_sites.py), on 2 ranks:
! a call with a choice buffer (MPICH binds it through its descriptor glue) and calls without.
! Lines that call MPI are marked "site: NAME".
program sites_f08
  use mpi_f08
  implicit none
  integer :: rank, i
  double precision :: one, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank) ! site: f-rank
  one = 1
  do i = 1, 3
    call MPI_Allreduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD) ! site: f-sum
  end do
  call MPI_Barrier(MPI_COMM_WORLD) ! site: f-barrier
  call MPI_Finalize()
end program sites_f08
