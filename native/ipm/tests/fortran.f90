! pa-ipm-fortran: Fortran (use mpi) calls under the profiler, for tests/test_ipm_calls.py.
! Exactly 2 ranks. Inside MPI_PCONTROL(1) ... MPI_PCONTROL(-1) (region "fortran"): rank 0 sends
! 4 integers to rank 1 (MPI_SEND, MPI_RECV); both exchange 2 doubles with MPI_IRECV + MPI_ISEND +
! MPI_WAITALL; MPI_ALLREDUCE of 1 double; MPI_BARRIER. A wrong value exits with status 1.
program fortran_calls
  use mpi
  implicit none
  integer :: ierr, rank, other, ints(4), requests(2)
  double precision :: mine(2), theirs(2), one, total
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  other = 1 - rank
  call MPI_PCONTROL(1)
  ints = 0
  if (rank == 0) then
    ints = [1, 2, 3, 4]
    call MPI_SEND(ints, 4, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
  else
    call MPI_RECV(ints, 4, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if
  mine = rank
  call MPI_IRECV(theirs, 2, MPI_DOUBLE_PRECISION, other, 2, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(mine, 2, MPI_DOUBLE_PRECISION, other, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_WAITALL(2, requests, MPI_STATUSES_IGNORE, ierr)
  one = 1
  call MPI_ALLREDUCE(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(-1)
  call MPI_FINALIZE(ierr)
  if ((rank == 1 .and. ints(4) /= 4) .or. nint(theirs(2)) /= other .or. nint(total) /= 2) stop 1
end program
