! A 1-D Jacobi relaxation on a periodic domain, its cells spread over the MPI
! ranks, which compute at different speeds (rank r repeats its sweep r + 1
! times). hetbal's balancer, fed each rank's compute time, moves cells from slow
! ranks to fast ones when it pays. At the end every cell is compared with a
! single-rank run: the results are the same to the bit.
!
! Build and run (after crates/hetbal-c/install.sh PREFIX):
!   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
!   mpif90 -O2 -o jacobi examples/fortran/jacobi.f90 $(pkg-config --cflags --libs hetbal-fortran)
!   mpirun -np 4 ./jacobi
program jacobi
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use hetbal
  implicit none
  integer(c_int64_t), parameter :: total = 100000, iterations = 100
  integer :: rank, ranks, succ, pred, r, repeat, moves
  integer(c_int64_t) :: count, first, it, k, differ
  integer(c_int64_t), allocatable :: counts(:), firsts(:)
  type(c_ptr) :: items
  real(c_double), pointer :: cells(:)
  real(c_double), allocatable :: copy(:), all(:), alone(:), part(:)
  real(c_double) :: left, right, t0, compute, started, elapsed
  type(hetbal_balancer) :: balancer
  type(hetbal_decision) :: d
  integer(c_int) :: status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  succ = modulo(rank + 1, ranks)
  pred = modulo(rank - 1, ranks)

  ! An even split, in a buffer the balancer may grow (hetbal_alloc).
  count = total / ranks
  if (rank < modulo(total, int(ranks, c_int64_t))) count = count + 1
  first = 0
  do r = 0, rank - 1
     first = first + total / ranks
     if (r < modulo(total, int(ranks, c_int64_t))) first = first + 1
  end do
  items = hetbal_alloc(int(count * 8, c_size_t))
  call c_f_pointer(items, cells, [count])
  do k = 1, count
     cells(k) = initial(first + k - 1)
  end do

  ! ANCHOR: create
  ! Links measured by the balancer itself; mpi_f08's communicator.
  status = hetbal_balancer_create(MPI_COMM_WORLD, 8_c_size_t, balancer)
  if (status /= HETBAL_OK) call fail("hetbal_balancer_create")
  ! ANCHOR_END: create

  moves = 0
  differ = 0
  started = MPI_Wtime()
  ! ANCHOR: loop
  do it = 0, iterations - 1
     ! Halo exchange (not timed).
     call MPI_Sendrecv(cells(count), 1, MPI_DOUBLE_PRECISION, succ, 0, left, 1, &
          MPI_DOUBLE_PRECISION, pred, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     call MPI_Sendrecv(cells(1), 1, MPI_DOUBLE_PRECISION, pred, 1, right, 1, &
          MPI_DOUBLE_PRECISION, succ, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     ! The compute phase, timed: this rank is rank + 1 times slower.
     t0 = MPI_Wtime()
     do repeat = 0, rank
        if (repeat < rank) then
           copy = cells
           call sweep(copy, left, right)
        else
           call sweep(cells, left, right)
        end if
     end do
     compute = MPI_Wtime() - t0
     status = hetbal_balancer_step(balancer, compute, iterations - it - 1, items, count, d)
     if (status /= HETBAL_OK) call fail("hetbal_balancer_step")
     call c_f_pointer(items, cells, [count])
     first = d%first
     moves = moves + d%redistribute
  end do
  ! ANCHOR_END: loop
  elapsed = MPI_Wtime() - started
  call hetbal_balancer_free(balancer)

  ! Check against a single-rank run.
  allocate(counts(0:ranks - 1), firsts(0:ranks - 1))
  call MPI_Gather(count, 1, MPI_INTEGER8, counts, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  call MPI_Gather(first, 1, MPI_INTEGER8, firsts, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  if (rank == 0) then
     allocate(all(0:total - 1), alone(0:total - 1))
     do k = 1, count
        all(modulo(first + k - 1, total)) = cells(k)
     end do
     do r = 1, ranks - 1
        allocate(part(counts(r)))
        call MPI_Recv(part, int(counts(r)), MPI_DOUBLE_PRECISION, r, 2, MPI_COMM_WORLD, &
             MPI_STATUS_IGNORE)
        do k = 1, counts(r)
           all(modulo(firsts(r) + k - 1, total)) = part(k)
        end do
        deallocate(part)
     end do
     do k = 0, total - 1
        alone(k) = initial(k)
     end do
     do it = 1, iterations
        left = alone(total - 1)
        right = alone(0)
        call sweep(alone, left, right)
     end do
     differ = count_differ()
     print '(a,i0,a,i0,a,i0,a,f0.3,a,i0,a)', 'jacobi (Fortran): ', total, ' cells, ', iterations, &
          ' iterations on ', ranks, ' ranks in ', elapsed, ' s, ', moves, ' redistribution(s)'
     if (differ == 0) then
        print '(a)', 'jacobi (Fortran): same results as one rank'
     else
        print '(a,i0,a)', 'jacobi (Fortran): WRONG, ', differ, ' cells differ from the single-rank run'
     end if
  else
     call MPI_Send(cells, int(count), MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD)
  end if
  call hetbal_free(items)
  call MPI_Finalize()
  if (rank == 0 .and. differ /= 0) error stop 1

contains

  pure real(c_double) function initial(position)
    integer(c_int64_t), intent(in) :: position
    initial = real(modulo(position * 7919_c_int64_t, 1000_c_int64_t), c_double)
  end function initial

  ! One sweep in place: u(i) = (u(i-1) + u(i+1)) / 2, halos left and right.
  subroutine sweep(u, left, right)
    real(c_double), intent(inout) :: u(:)
    real(c_double), intent(in) :: left, right
    real(c_double) :: previous, next, value
    integer(c_int64_t) :: i, n
    n = size(u, kind=c_int64_t)
    previous = left
    do i = 1, n
       if (i < n) then
          next = u(i + 1)
       else
          next = right
       end if
       value = (previous + next) * 0.5_c_double
       previous = u(i)
       u(i) = value
    end do
  end subroutine sweep

  integer(c_int64_t) function count_differ()
    integer(c_int64_t) :: j
    count_differ = 0
    do j = 0, total - 1
       if (alone(j) /= all(j)) count_differ = count_differ + 1
    end do
  end function count_differ

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(4a)', 'jacobi: ', what, ' failed: ', hetbal_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail

end program jacobi
