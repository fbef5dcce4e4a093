! The call-site tests' Fortran program with `use mpi` (tests/test_ipm_sites.py), on 2 ranks.
! Lines that call MPI are marked "site: NAME".
program sites_mpi
  use mpi
  implicit none
  integer :: ierr, rank, i
  double precision :: one, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr) ! site: f-rank
  one = 1
  do i = 1, 3
    call MPI_Allreduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr) ! site: f-sum
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr) ! site: f-barrier
  call MPI_Finalize(ierr)
end program sites_mpi
