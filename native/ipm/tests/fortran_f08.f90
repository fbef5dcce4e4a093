! pa-ipm-fortran-f08: `use mpi_f08` calls (handles as derived types, IERROR omitted or given), for
! tests/test_ipm.py. Exactly 2 ranks. Outside any region: MPI_COMM_RANK. Inside MPI_PCONTROL(1)
! ... MPI_PCONTROL(-1) (region "fortran"), each rank r (the other rank: o): MPI_SEND of 3
! doubles from rank 0 to MPI_RECV on rank 1 into a TYPE(MPI_Status), then MPI_GET_COUNT (3);
! MPI_IRECV and MPI_ISEND of 2 integers with o, MPI_WAITALL with MPI_STATUSES_IGNORE; MPI_COMM_SPLIT
! (keys reversed), MPI_COMM_SET_NAME and MPI_COMM_GET_NAME on it, MPI_ALLREDUCE of 1 integer on
! it, MPI_COMM_FREE. Every result is checked; a wrong one exits with status 1.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, other, count, length, ints_in(2), ints_out(2), total
  double precision :: values(3)
  type(MPI_Status) :: status
  type(MPI_Request) :: requests(2)
  type(MPI_Comm) :: split
  character(len=MPI_MAX_OBJECT_NAME) :: name
  logical :: good

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  other = 1 - rank
  good = .true.
  call MPI_Pcontrol(1)
  values = 0
  if (rank == 0) then
    values = [1.5d0, 2.5d0, 3.5d0]
    call MPI_Send(values, 3, MPI_DOUBLE_PRECISION, 1, 4, MPI_COMM_WORLD, ierr)
    good = good .and. ierr == MPI_SUCCESS
  else
    call MPI_Recv(values, 3, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count)
    good = good .and. count == 3 .and. status%MPI_SOURCE == 0 .and. nint(2 * values(3)) == 7
  end if
  ints_out = [rank, 10 + rank]
  call MPI_Irecv(ints_in, 2, MPI_INTEGER, other, 5, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(ints_out, 2, MPI_INTEGER, other, 5, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  good = good .and. all(ints_in == [other, 10 + other])
  good = good .and. requests(1) == MPI_REQUEST_NULL .and. requests(2) == MPI_REQUEST_NULL
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, split)
  call MPI_Comm_set_name(split, 'pa f08')
  call MPI_Comm_get_name(split, name, length)
  good = good .and. name == 'pa f08' .and. length == 6
  total = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, split, ierr)
  good = good .and. total == 3 .and. ierr == MPI_SUCCESS
  call MPI_Comm_free(split)
  good = good .and. split == MPI_COMM_NULL
  call MPI_Pcontrol(-1)
  call MPI_Finalize()
  if (.not. good) stop 1
end program
