! pa-ipm-fortran-more: further Fortran (use mpi) calls whose arguments gen_fortran.py converts,
! for tests/test_ipm.py. Exactly 2 ranks. Outside any region: MPI_COMM_RANK, MPI_COMM_SIZE. Inside
! MPI_PCONTROL(1) ... MPI_PCONTROL(-1) (region "fortran"), each rank r (the other rank: o):
!  1. handle out and in-out: MPI_COMM_DUP of WORLD; MPI_SCAN of 1 integer (r + 1) on it (prefix
!     sums 1, 3); MPI_REDUCE_SCATTER_BLOCK of 2 integers per rank on it;
!  2. MPI_ALLTOALLW, a datatype per rank: r + 1 MPI_INTEGER to rank 0 and 2 MPI_2INTEGER to
!     rank 1 (rank 0 sends 20 bytes, rank 1 24), displacements in bytes;
!  3. neighbours: MPI_CART_CREATE (1 dimension of 2, not periodic: one neighbour is
!     MPI_PROC_NULL), MPI_NEIGHBOR_ALLGATHER of 1 integer, MPI_NEIGHBOR_ALLTOALL of 1 integer per
!     neighbour, MPI_NEIGHBOR_ALLTOALLW of 1 MPI_INTEGER to the rank before and 1 MPI_2INTEGER to
!     the rank after (12 bytes); MPI_DIST_GRAPH_CREATE_ADJACENT (o in, o out) with
!     MPI_UNWEIGHTED, MPI_DIST_GRAPH_NEIGHBORS_COUNT (1, 1, unweighted), MPI_DIST_GRAPH_NEIGHBORS
!     with MPI_UNWEIGHTED, MPI_NEIGHBOR_ALLGATHER of 2 integers; the same graph with weights (edge
!     a -> b: 10 a + b + 1), MPI_DIST_GRAPH_NEIGHBORS_COUNT (weighted), MPI_DIST_GRAPH_NEIGHBORS
!     (the weights back), MPI_NEIGHBOR_ALLTOALL of 3 integers; MPI_COMM_FREE of the three;
!  4. datatypes: MPI_GET_ADDRESS of 2 integers and of 1 double, MPI_TYPE_CREATE_STRUCT of them at
!     those absolute addresses (16 bytes), MPI_TYPE_COMMIT; rank 0 MPI_SEND from MPI_BOTTOM to
!     rank 1's MPI_RECV into MPI_BOTTOM; MPI_TYPE_GET_ENVELOPE (3, 2, 2, MPI_COMBINER_STRUCT),
!     MPI_TYPE_GET_CONTENTS (its blocks, addresses and types back), MPI_TYPE_FREE;
!  5. persistent requests: MPI_RECV_INIT and MPI_SEND_INIT of 2 integers with o; MPI_STARTALL,
!     MPI_WAITSOME until both completed (1-based indices); MPI_STARTALL again, MPI_TESTSOME until
!     both completed, once more (none active: MPI_UNDEFINED); MPI_REQUEST_FREE of both. How many
!     MPI_WAITSOME and MPI_TESTSOME calls that took depends on timing: each rank prints
!     "rank R waitsome W testsome T";
!  6. info strings: MPI_INFO_CREATE, MPI_INFO_SET of key 'pa_key' to '  hello world  ' (stored
!     without the blanks), MPI_INFO_GET ('hello world'; of a missing key: the value left as it
!     was), MPI_INFO_GET_VALUELEN (11), MPI_INFO_GET_NKEYS (1), MPI_INFO_GET_NTHKEY (key 0:
!     'pa_key');
!  7. one-sided: MPI_WIN_CREATE of 4 integers (with the info), MPI_INFO_FREE, MPI_WIN_FENCE,
!     MPI_PUT of 2 integers at displacement 1 of o's window, MPI_WIN_FENCE, MPI_WIN_FREE;
!  8. MPI_COMM_FREE of the duplicate.
! Every result is checked; a wrong one exits with status 1.
program fortran_more
  use, intrinsic :: iso_c_binding, only: c_loc
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi
  implicit none
  integer :: ierr, rank, size, other, i, k, dup, mine, prefix, sendblock(4), scattered(2)
  integer :: wsend(5), wrecv(8), scounts(0:1), sdispls(0:1), stypes(0:1)
  integer :: rcounts(0:1), rdispls(0:1), rtypes(0:1)
  integer :: cart, plain, weighted, indegree, outdegree, sources(1), destinations(1)
  integer :: in_weight(1), out_weight(1), got_in(1), got_out(1)
  integer :: one(1), two(2), three(3), got2(2), got3(3)
  logical :: is_weighted
  ! Written by MPI where the compiler cannot see it (from MPI_BOTTOM, by a persistent receive,
  ! into a window): VOLATILE, so that no stale copy is read (MPI-3.1 17.1.17).
  integer, volatile, target :: pair(2)
  double precision, volatile, target :: dv
  integer(kind=MPI_ADDRESS_KIND) :: sbytes(2), rbytes(2), addresses(2), got_addresses(2)
  integer :: blocks(2), types(2), struct, nints, naddresses, ntypes, combiner
  integer :: got_ints(3), got_types(2), status(MPI_STATUS_SIZE)
  integer :: requests(2), outcount, indices(2), statuses(MPI_STATUS_SIZE, 2), waits, tests
  integer :: persistent_out(2)
  integer, volatile :: persistent_in(2), window(4)
  logical :: done(2)
  integer :: info, valuelen, nkeys
  logical :: flag
  character(len=20) :: value
  character(len=MPI_MAX_INFO_KEY) :: key
  integer :: win, put(2)
  integer(kind=MPI_ADDRESS_KIND) :: window_bytes, displacement
  logical :: good

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) stop 1
  other = 1 - rank
  good = .true.
  call MPI_PCONTROL(1)

  ! 1. a duplicate communicator (a handle out), a scan and a reduce-scatter on it
  dup = MPI_COMM_NULL
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call check(ierr == MPI_SUCCESS .and. dup /= MPI_COMM_NULL, 'MPI_COMM_DUP')
  call check(dup /= MPI_COMM_WORLD, 'MPI_COMM_DUP')
  mine = rank + 1
  call MPI_SCAN(mine, prefix, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call check(prefix == merge(1, 3, rank == 0), 'MPI_SCAN')
  sendblock = [1, 2, 3, 4] + 10 * rank
  call MPI_REDUCE_SCATTER_BLOCK(sendblock, scattered, 2, MPI_INTEGER, MPI_SUM, dup, ierr)
  call check(all(scattered == [12, 14] + 4 * rank), 'MPI_REDUCE_SCATTER_BLOCK')

  ! 2. MPI_ALLTOALLW: r + 1 MPI_INTEGER (100 r + 1, ...) to rank 0, 2 MPI_2INTEGER
  ! (100 r + 11, ..., 100 r + 14) to rank 1; displacements in bytes
  wsend = -1
  wsend(1:rank + 1) = 100 * rank + [(i, i = 1, rank + 1)]
  wsend(rank + 2:rank + 5) = 100 * rank + [11, 12, 13, 14]
  scounts = [rank + 1, 2]
  sdispls = [0, 4 * (rank + 1)]
  stypes = [MPI_INTEGER, MPI_2INTEGER]
  if (rank == 0) then  ! s + 1 integers from rank s
    rcounts = [1, 2]
    rdispls = [0, 4]
    rtypes = [MPI_INTEGER, MPI_INTEGER]
  else  ! 2 pairs from each rank
    rcounts = [2, 2]
    rdispls = [0, 16]
    rtypes = [MPI_2INTEGER, MPI_2INTEGER]
  end if
  wrecv = -1
  call MPI_ALLTOALLW(wsend, scounts, sdispls, stypes, wrecv, rcounts, rdispls, rtypes, &
                     MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call check(all(wrecv == [1, 101, 102, -1, -1, -1, -1, -1]), 'MPI_ALLTOALLW')
  else
    call check(all(wrecv == [11, 12, 13, 14, 111, 112, 113, 114]), 'MPI_ALLTOALLW')
  end if

  ! 3. neighbours of a Cartesian line of 2 (rank 0: none before it; rank 1: none after it)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, [2], [.false.], .false., cart, ierr)
  one = 10 + rank
  got2 = -1
  call MPI_NEIGHBOR_ALLGATHER(one, 1, MPI_INTEGER, got2, 1, MPI_INTEGER, cart, ierr)
  call check(all(got2 == merge([-1, 11], [10, -1], rank == 0)), 'MPI_NEIGHBOR_ALLGATHER')
  two = 10 * rank + [1, 2]  ! block 1 to the rank before, block 2 to the rank after
  got2 = -1
  call MPI_NEIGHBOR_ALLTOALL(two, 1, MPI_INTEGER, got2, 1, MPI_INTEGER, cart, ierr)
  call check(all(got2 == merge([-1, 11], [2, -1], rank == 0)), 'MPI_NEIGHBOR_ALLTOALL')
  ! a datatype per neighbour: 1 MPI_INTEGER to the rank before, 1 MPI_2INTEGER to the rank after
  three = 10 * rank + [1, 2, 3]
  got3 = -1
  sbytes = [0, 4]
  rbytes = [0, 8]
  call MPI_NEIGHBOR_ALLTOALLW(three, [1, 1], sbytes, [MPI_INTEGER, MPI_2INTEGER], got3, [1, 1], &
                              rbytes, [MPI_2INTEGER, MPI_INTEGER], cart, ierr)
  call check(all(got3 == merge([-1, -1, 11], [2, 3, -1], rank == 0)), 'MPI_NEIGHBOR_ALLTOALLW')
  ! a distributed graph o -> r, r -> o without weights
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, [other], MPI_UNWEIGHTED, 1, [other], &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., plain, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_DIST_GRAPH_CREATE_ADJACENT')
  is_weighted = .true.
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(plain, indegree, outdegree, is_weighted, ierr)
  call check(indegree == 1 .and. outdegree == 1, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
  call check(.not. is_weighted, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
  sources = -1
  destinations = -1
  call MPI_DIST_GRAPH_NEIGHBORS(plain, 1, sources, MPI_UNWEIGHTED, 1, destinations, &
                                MPI_UNWEIGHTED, ierr)
  call check(sources(1) == other .and. destinations(1) == other, 'MPI_DIST_GRAPH_NEIGHBORS')
  two = 20 * rank + [1, 2]
  got2 = -1
  call MPI_NEIGHBOR_ALLGATHER(two, 2, MPI_INTEGER, got2, 2, MPI_INTEGER, plain, ierr)
  call check(all(got2 == 20 * other + [1, 2]), 'MPI_NEIGHBOR_ALLGATHER')
  ! the same graph, the edge a -> b weighing 10 a + b + 1
  in_weight = 10 * other + rank + 1
  out_weight = 10 * rank + other + 1
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, [other], in_weight, 1, [other], &
                                      out_weight, MPI_INFO_NULL, .false., weighted, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(weighted, indegree, outdegree, is_weighted, ierr)
  call check(indegree == 1 .and. outdegree == 1, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
  call check(is_weighted, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
  got_in = -1
  got_out = -1
  call MPI_DIST_GRAPH_NEIGHBORS(weighted, 1, sources, got_in, 1, destinations, got_out, ierr)
  call check(sources(1) == other .and. destinations(1) == other, 'MPI_DIST_GRAPH_NEIGHBORS')
  call check(got_in(1) == merge(11, 2, rank == 0), 'MPI_DIST_GRAPH_NEIGHBORS')
  call check(got_out(1) == merge(2, 11, rank == 0), 'MPI_DIST_GRAPH_NEIGHBORS')
  three = 30 * rank + [1, 2, 3]
  got3 = -1
  call MPI_NEIGHBOR_ALLTOALL(three, 3, MPI_INTEGER, got3, 3, MPI_INTEGER, weighted, ierr)
  call check(all(got3 == 30 * other + [1, 2, 3]), 'MPI_NEIGHBOR_ALLTOALL')
  call MPI_COMM_FREE(cart, ierr)
  call MPI_COMM_FREE(plain, ierr)
  call MPI_COMM_FREE(weighted, ierr)
  call check(cart == MPI_COMM_NULL .and. plain == MPI_COMM_NULL, 'MPI_COMM_FREE')
  call check(weighted == MPI_COMM_NULL, 'MPI_COMM_FREE')

  ! 4. a struct of absolute addresses, sent from and received into MPI_BOTTOM
  pair = 0
  dv = 0
  if (rank == 0) then
    pair = [41, 42]
    dv = 4.25d0
  end if
  call MPI_GET_ADDRESS(pair, addresses(1), ierr)
  call MPI_GET_ADDRESS(dv, addresses(2), ierr)
  call check(addresses(1) == transfer(c_loc(pair), addresses(1)), 'MPI_GET_ADDRESS')
  call check(addresses(2) == transfer(c_loc(dv), addresses(2)), 'MPI_GET_ADDRESS')
  blocks = [2, 1]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_TYPE_CREATE_STRUCT(2, blocks, addresses, types, struct, ierr)
  call MPI_TYPE_COMMIT(struct, ierr)
  call check(ierr == MPI_SUCCESS .and. struct /= MPI_DATATYPE_NULL, 'MPI_TYPE_COMMIT')
  if (rank == 0) then
    call MPI_SEND(MPI_BOTTOM, 1, struct, 1, 8, MPI_COMM_WORLD, ierr)
  else
    call MPI_RECV(MPI_BOTTOM, 1, struct, 0, 8, MPI_COMM_WORLD, status, ierr)
    call check(status(MPI_SOURCE) == 0 .and. status(MPI_TAG) == 8, 'MPI_RECV')
  end if
  call check(all(pair == [41, 42]) .and. nint(4 * dv) == 17, 'MPI_RECV')
  call MPI_TYPE_GET_ENVELOPE(struct, nints, naddresses, ntypes, combiner, ierr)
  call check(nints == 3 .and. naddresses == 2 .and. ntypes == 2, 'MPI_TYPE_GET_ENVELOPE')
  call check(combiner == MPI_COMBINER_STRUCT, 'MPI_TYPE_GET_ENVELOPE')
  got_ints = -1
  got_addresses = -1
  got_types = MPI_DATATYPE_NULL
  call MPI_TYPE_GET_CONTENTS(struct, 3, 2, 2, got_ints, got_addresses, got_types, ierr)
  call check(all(got_ints == [2, 2, 1]), 'MPI_TYPE_GET_CONTENTS')
  call check(all(got_addresses == addresses), 'MPI_TYPE_GET_CONTENTS')
  call check(all(got_types == types), 'MPI_TYPE_GET_CONTENTS')
  call MPI_TYPE_FREE(struct, ierr)
  call check(struct == MPI_DATATYPE_NULL, 'MPI_TYPE_FREE')

  ! 5. persistent requests, completed by MPI_WAITSOME and then MPI_TESTSOME (1-based indices)
  call MPI_RECV_INIT(persistent_in, 2, MPI_INTEGER, other, 7, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_SEND_INIT(persistent_out, 2, MPI_INTEGER, other, 7, MPI_COMM_WORLD, requests(2), ierr)
  persistent_out = 50 * rank + [1, 2]
  persistent_in = -1
  call MPI_STARTALL(2, requests, ierr)
  done = .false.
  waits = 0
  do while (.not. all(done) .and. waits < 2)  ! each call completes at least one
    call MPI_WAITSOME(2, requests, outcount, indices, statuses, ierr)
    waits = waits + 1
    call check(outcount >= 1 .and. outcount <= 2, 'MPI_WAITSOME')
    do k = 1, min(max(outcount, 0), 2)
      i = indices(k)
      call check(i == 1 .or. i == 2, 'MPI_WAITSOME')
      if (i /= 1 .and. i /= 2) exit
      call check(.not. done(i), 'MPI_WAITSOME')
      done(i) = .true.
      if (i == 1) call check(statuses(MPI_SOURCE, k) == other, 'MPI_WAITSOME')
      if (i == 1) call check(statuses(MPI_TAG, k) == 7, 'MPI_WAITSOME')
    end do
  end do
  call check(all(done) .and. all(persistent_in == 50 * other + [1, 2]), 'MPI_WAITSOME')
  call check(all(requests /= MPI_REQUEST_NULL), 'MPI_WAITSOME')  ! persistent: kept, inactive
  persistent_out = 60 * rank + [1, 2]
  call MPI_STARTALL(2, requests, ierr)
  done = .false.
  tests = 0
  do while (.not. all(done) .and. tests < 10000000)
    call MPI_TESTSOME(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    tests = tests + 1
    call check(outcount >= 0 .and. outcount <= 2, 'MPI_TESTSOME')
    do k = 1, min(max(outcount, 0), 2)
      i = indices(k)
      call check(i == 1 .or. i == 2, 'MPI_TESTSOME')
      if (i /= 1 .and. i /= 2) exit
      call check(.not. done(i), 'MPI_TESTSOME')
      done(i) = .true.
    end do
  end do
  call check(all(done) .and. all(persistent_in == 60 * other + [1, 2]), 'MPI_TESTSOME')
  call MPI_TESTSOME(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)  ! none active
  tests = tests + 1
  call check(outcount == MPI_UNDEFINED, 'MPI_TESTSOME')
  call MPI_REQUEST_FREE(requests(1), ierr)
  call MPI_REQUEST_FREE(requests(2), ierr)
  call check(all(requests == MPI_REQUEST_NULL), 'MPI_REQUEST_FREE')

  ! 6. info strings in and out
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'pa_key', '  hello world  ', ierr)
  value = 'x'
  flag = .false.
  call MPI_INFO_GET(info, 'pa_key  ', len(value), value, flag, ierr)
  call check(flag .and. value == 'hello world', 'MPI_INFO_GET of pa_key')
  value = 'unchanged'
  flag = .true.
  call MPI_INFO_GET(info, 'missing', len(value), value, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_INFO_GET of a missing key')
  call check(value == 'unchanged', 'MPI_INFO_GET of a missing key')
  call MPI_INFO_GET_VALUELEN(info, 'pa_key', valuelen, flag, ierr)
  call check(flag .and. valuelen == 11, 'MPI_INFO_GET_VALUELEN')
  call MPI_INFO_GET_NKEYS(info, nkeys, ierr)
  call check(nkeys == 1, 'MPI_INFO_GET_NKEYS')
  key = 'x'
  call MPI_INFO_GET_NTHKEY(info, 0, key, ierr)
  call check(key == 'pa_key', 'MPI_INFO_GET_NTHKEY')

  ! 7. one-sided: 2 integers put at displacement 1 (in integers) of the other rank's window
  window = -1
  window_bytes = 16
  call MPI_WIN_CREATE(window, window_bytes, 4, info, MPI_COMM_WORLD, win, ierr)
  call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'MPI_WIN_CREATE')
  call MPI_INFO_FREE(info, ierr)
  call check(info == MPI_INFO_NULL, 'MPI_INFO_FREE')
  call MPI_WIN_FENCE(0, win, ierr)
  put = 1000 * rank + [1, 2]
  displacement = 1
  call MPI_PUT(put, 2, MPI_INTEGER, other, displacement, 2, MPI_INTEGER, win, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  call check(all(window == [-1, 1000 * other + 1, 1000 * other + 2, -1]), 'MPI_WIN_FENCE')
  call MPI_WIN_FREE(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_WIN_FREE')

  ! 8. the duplicate freed (a handle in and out)
  call MPI_COMM_FREE(dup, ierr)
  call check(dup == MPI_COMM_NULL, 'MPI_COMM_FREE')

  call MPI_PCONTROL(-1)
  write (*, '(a, i0, a, i0, a, i0)') 'rank ', rank, ' waitsome ', waits, ' testsome ', tests
  call MPI_FINALIZE(ierr)
  if (.not. good) stop 1

contains

  ! A wrong result: which call's, on stderr; the program will exit with status 1.
  subroutine check(condition, call)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: call
    if (.not. condition) then
      write (error_unit, '(a, i0, 2a)') 'pa-ipm-fortran-more: rank ', rank, &
                                        ': wrong result of ', call
      good = .false.
    end if
  end subroutine
end program
