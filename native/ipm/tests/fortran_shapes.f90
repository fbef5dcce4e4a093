! pa-ipm-fortran-shapes: Fortran (use mpi) calls of every parameter shape gen_fortran.py converts,
! for tests/test_ipm.py. Exactly 2 ranks; argument 1: a folder for the MPI-IO file. Outside any
! region: MPI_COMM_RANK, MPI_COMM_SIZE. Inside MPI_PCONTROL(1) ... MPI_PCONTROL(-1) (region
! "fortran"), each rank r (the other rank: o):
!  1. strings: MPI_COMM_DUP of WORLD, MPI_COMM_SET_NAME to 'pa shapes' padded with blanks,
!     MPI_COMM_GET_NAME back (the same, blank-padded), MPI_GET_PROCESSOR_NAME, MPI_COMM_FREE;
!  2. handle arrays: MPI_IRECV of 4 and of 2 integers and MPI_ISEND of 4 integers to o, MPI_SEND
!     of 2 integers to o, MPI_WAITALL of the 3 requests with statuses, MPI_GET_COUNT of the second
!     receive's status (2, from o);
!  3. 1-based indices: MPI_IRECV and MPI_ISEND of 1 integer, MPI_WAITANY twice (1 and 2);
!  4. MPI_ALLTOALLV: r sends r + d + 1 integers to rank d (rank 0: 3 in all, rank 1: 5);
!  5. MPI_COMM_SPLIT with keys reversed, MPI_COMM_RANK in it (1 - r), MPI_BCAST of 2 integers
!     from its rank 0 (world rank 1), MPI_COMM_FREE;
!  6. MPI_ALLREDUCE of 1 integer with MPI_IN_PLACE;
!  7. MPI-IO: MPI_FILE_OPEN (create, write only), MPI_FILE_SEEK to 16 r bytes, MPI_FILE_WRITE of 4
!     integers, MPI_FILE_CLOSE; MPI_FILE_OPEN read only, MPI_FILE_READ_AT of o's 4 integers,
!     MPI_GET_COUNT (4), MPI_FILE_CLOSE;
!  8. MPI_WTIME twice.
! Every result is checked; a wrong one exits with status 1.
program fortran_shapes
  use mpi
  implicit none
  integer :: ierr, rank, size, other, i, count, index, split_rank, fh
  integer :: dup, split, name_length, requests(3), pair(2), status(MPI_STATUS_SIZE)
  integer :: statuses(MPI_STATUS_SIZE, 3), four_in(4), four_out(4), two_in(2), two_out(2)
  integer :: one_in(1), one_out(1), total, from_file(4), sent(8), received(8)
  integer :: sendcounts(0:1), sdispls(0:1), recvcounts(0:1), rdispls(0:1)
  integer(kind=MPI_OFFSET_KIND) :: offset
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=4096) :: folder
  double precision :: started, ended
  logical :: good

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) stop 1
  other = 1 - rank
  call get_command_argument(1, folder)
  good = .true.
  call MPI_PCONTROL(1)
  started = MPI_WTIME()

  ! 1. strings
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_SET_NAME(dup, 'pa shapes   ', ierr)
  name = 'x'
  call MPI_COMM_GET_NAME(dup, name, name_length, ierr)
  good = good .and. name == 'pa shapes' .and. name_length == 9 .and. ierr == MPI_SUCCESS
  call MPI_GET_PROCESSOR_NAME(host, name_length, ierr)
  good = good .and. name_length > 0 .and. len_trim(host) == name_length
  call MPI_COMM_FREE(dup, ierr)
  good = good .and. dup == MPI_COMM_NULL

  ! 2. an array of 3 requests, statuses read back
  four_out = [1, 2, 3, 4] + 10 * rank
  two_out = [5, 6] + 10 * rank
  call MPI_IRECV(four_in, 4, MPI_INTEGER, other, 1, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_IRECV(two_in, 2, MPI_INTEGER, other, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_ISEND(four_out, 4, MPI_INTEGER, other, 1, MPI_COMM_WORLD, requests(3), ierr)
  call MPI_SEND(two_out, 2, MPI_INTEGER, other, 2, MPI_COMM_WORLD, ierr)
  call MPI_WAITALL(3, requests, statuses, ierr)
  good = good .and. all(requests == MPI_REQUEST_NULL)
  good = good .and. all(four_in == [1, 2, 3, 4] + 10 * other) .and. all(two_in == [5, 6] + 10 * other)
  call MPI_GET_COUNT(statuses(:, 2), MPI_INTEGER, count, ierr)
  good = good .and. count == 2 .and. statuses(MPI_SOURCE, 2) == other .and. statuses(MPI_TAG, 2) == 2

  ! 3. MPI_WAITANY's index is 1-based
  one_out = 100 + rank
  call MPI_IRECV(one_in, 1, MPI_INTEGER, other, 3, MPI_COMM_WORLD, pair(1), ierr)
  call MPI_ISEND(one_out, 1, MPI_INTEGER, other, 3, MPI_COMM_WORLD, pair(2), ierr)
  total = 0
  do i = 1, 2
    call MPI_WAITANY(2, pair, index, status, ierr)
    total = total + index
    good = good .and. (index == 1 .or. index == 2) .and. pair(index) == MPI_REQUEST_NULL
  end do
  good = good .and. total == 3 .and. one_in(1) == 100 + other

  ! 4. MPI_ALLTOALLV: rank r sends r + d + 1 integers (value 10 r + d) to rank d
  do i = 0, 1
    sendcounts(i) = rank + i + 1
    recvcounts(i) = i + rank + 1
  end do
  sdispls = [0, sendcounts(0)]
  rdispls = [0, recvcounts(0)]
  sent = -1
  received = -1
  do i = 0, 1
    sent(sdispls(i) + 1:sdispls(i) + sendcounts(i)) = 10 * rank + i
  end do
  call MPI_ALLTOALLV(sent, sendcounts, sdispls, MPI_INTEGER, received, recvcounts, rdispls, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 0, 1
    good = good .and. all(received(rdispls(i) + 1:rdispls(i) + recvcounts(i)) == 10 * i + rank)
  end do

  ! 5. a split communicator, ranks reversed
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, 0, -rank, split, ierr)
  call MPI_COMM_RANK(split, split_rank, ierr)
  good = good .and. split_rank == other
  two_in = 7 * split_rank
  call MPI_BCAST(two_in, 2, MPI_INTEGER, 0, split, ierr)
  good = good .and. all(two_in == 0)
  call MPI_COMM_FREE(split, ierr)

  ! 6. MPI_IN_PLACE
  total = rank + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  good = good .and. total == 3

  ! 7. MPI-IO, offsets of kind MPI_OFFSET_KIND
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(folder) // '/shapes.dat', &
                     MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  good = good .and. ierr == MPI_SUCCESS
  offset = 16 * rank
  call MPI_FILE_SEEK(fh, offset, MPI_SEEK_SET, ierr)
  call MPI_FILE_WRITE(fh, four_out, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_FILE_CLOSE(fh, ierr)
  good = good .and. fh == MPI_FILE_NULL
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(folder) // '/shapes.dat', MPI_MODE_RDONLY, &
                     MPI_INFO_NULL, fh, ierr)
  offset = 16 * other
  call MPI_FILE_READ_AT(fh, offset, from_file, 4, MPI_INTEGER, status, ierr)
  call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
  good = good .and. count == 4 .and. all(from_file == [1, 2, 3, 4] + 10 * other)
  call MPI_FILE_CLOSE(fh, ierr)

  ended = MPI_WTIME()
  good = good .and. ended >= started
  call MPI_PCONTROL(-1)
  call MPI_FINALIZE(ierr)
  if (.not. good) stop 1
end program
