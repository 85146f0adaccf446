! A 1-D Jacobi relaxation on a periodic domain, its cells spread over the MPI
! ranks, which compute at different speeds (rank r repeats its sweep r + 1
! times). hetbal's balancer, fed each rank's compute time, moves cells from slow
! ranks to fast ones when it pays. At the end every cell is compared with a
! single-rank run: the results are the same to the bit.
!
! Options (anywhere on the command line), as examples/c/jacobi.c's:
!   --cliff CAPACITY  rank 0 gets a memory cliff: its time per cell is that of
!                     one sweep up to CAPACITY cells and ten times that (it
!                     repeats its sweep 10 times) whenever it holds more.
!   --model NAME      the balancer's model of the compute times: constant (the
!                     default), functional (a time function of the load per
!                     rank, learned) or monotone-cubic.
!   --policy NAME     the balancer's policy: adaptive (the default) or
!                     profitability.
!   --emulate S       report to the balancer S seconds per cell per sweep (rank
!                     r's sweeps times its cells times S) instead of the
!                     measured compute time; the sweeps still run.
!   --every K         decide every K iterations (the default: 1), with the mean
!                     compute time of the K iterations since the last decision
!                     and the decisions left as the remaining iterations.
! At the end rank 0 prints the moves, the last iteration after which the cells
! moved, and the mean wall time of the last 10 iterations.
!
! Build and run (after crates/hetbal-c/install.sh PREFIX):
!   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
!   mpif90 -O2 -o jacobi examples/fortran/jacobi.f90 $(pkg-config --cflags --libs hetbal-fortran)
!   mpirun -np 4 ./jacobi [cells] [iterations] [--cliff CAPACITY] [--model NAME]
!                    [--policy NAME] [--emulate S] [--every K]
program jacobi
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use hetbal
  implicit none
  ! The options and their defaults.
  integer(c_int64_t) :: total = 100000, iterations = 100, capacity = huge(0_c_int64_t), every = 1
  real(c_double) :: emulate = 0 ! seconds per cell per sweep reported (0: measured)
  integer(c_int) :: model = HETBAL_MODEL_CONSTANT, policy = HETBAL_POLICY_ADAPTIVE
  integer :: rank, ranks, succ, pred, r, repeat, moves, extra
  integer(c_int64_t) :: count, first, it, k, differ, last_move, tail
  integer(c_int64_t), allocatable :: counts(:), firsts(:)
  type(c_ptr) :: items
  real(c_double), pointer :: cells(:)
  real(c_double), allocatable :: copy(:), all(:), alone(:), part(:), walls(:)
  real(c_double) :: left, right, begun, t0, group, started, elapsed, last, weights, rank0
  type(hetbal_balancer) :: balancer
  type(hetbal_decision) :: d
  integer(c_int) :: status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  if (.not. parsed()) then
     if (rank == 0) write (error_unit, '(a)') 'usage: jacobi [cells] [iterations] [--cliff CAPACITY] ' // &
          '[--model constant|functional|monotone-cubic] [--policy adaptive|profitability] ' // &
          '[--emulate S] [--every K] (cells at least the ranks, counts positive)'
     call MPI_Finalize()
     stop 2, quiet=.true.
  end if
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
  status = hetbal_balancer_set_model(balancer, model)
  if (status /= HETBAL_OK) call fail("hetbal_balancer_set_model")
  status = hetbal_balancer_set_policy(balancer, policy)
  if (status /= HETBAL_OK) call fail("hetbal_balancer_set_policy")
  ! ANCHOR_END: create

  moves = 0
  last_move = 0
  differ = 0
  group = 0
  allocate(walls(iterations))
  ! A warm-up, not timed (as jacobi.c's): the first sweeps after start-up run
  ! slower, and a time function learned from them would see a cliff.
  do repeat = 0, rank
     copy = cells
     call sweep(copy, 0.0_c_double, 0.0_c_double)
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  started = MPI_Wtime()
  ! ANCHOR: loop
  do it = 0, iterations - 1
     begun = MPI_Wtime()
     ! Halo exchange (not timed).
     call MPI_Sendrecv(cells(count), 1, MPI_DOUBLE_PRECISION, succ, 0, left, 1, &
          MPI_DOUBLE_PRECISION, pred, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     call MPI_Sendrecv(cells(1), 1, MPI_DOUBLE_PRECISION, pred, 1, right, 1, &
          MPI_DOUBLE_PRECISION, succ, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     ! The compute phase, timed: this rank is rank + 1 times slower (with
     ! --cliff, rank 0 ten times slower beyond its capacity).
     t0 = MPI_Wtime()
     extra = rank
     if (rank == 0 .and. count > capacity) extra = 9
     do repeat = 0, extra
        if (repeat < extra) then
           copy = cells
           call sweep(copy, left, right)
        else
           call sweep(cells, left, right)
        end if
     end do
     if (emulate > 0) then
        group = group + emulate * (extra + 1) * real(count, c_double)
     else
        group = group + (MPI_Wtime() - t0)
     end if
     ! A decision after every `every`-th iteration (all of them by default)
     ! but the last, on the mean compute time since the last one, with the
     ! decisions left as the remaining iterations.
     if (modulo(it + 1, every) == 0 .and. it + 1 < iterations) then
        status = hetbal_balancer_step(balancer, group / every, (iterations - it - 1) / every, &
             items, count, d)
        if (status /= HETBAL_OK) call fail("hetbal_balancer_step")
        call c_f_pointer(items, cells, [count])
        first = d%first
        group = 0
        moves = moves + d%redistribute
        if (d%redistribute /= 0) last_move = it + 1
     end if
     walls(it + 1) = MPI_Wtime() - begun
  end do
  ! ANCHOR_END: loop
  elapsed = MPI_Wtime() - started
  call hetbal_balancer_free(balancer)
  tail = min(iterations, 10_c_int64_t)
  last = sum(walls(iterations - tail + 1:)) / tail

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
     print '(a,i0,a,i0,a,i0,3a,i0,a)', 'jacobi (Fortran): ', total, ' cells, ', iterations, &
          ' iterations on ', ranks, ' ranks in ', decimals(elapsed), ' s, ', moves, ' redistribution(s)'
     print '(a,*(1x,i0))', 'jacobi (Fortran): cells per rank at the end:', counts
     ! The optimum of the emulated costs: shares as 1 / (r + 1), rank 0's at
     ! most its capacity.
     weights = sum([(1.0_c_double / (r + 1), r = 0, ranks - 1)])
     rank0 = min(real(total, c_double) / weights, real(capacity, c_double))
     print '(a,*(1x,i0))', 'jacobi (Fortran): cells per rank at the optimum of the emulated costs:', &
          nint(rank0, c_int64_t), &
          [(nint((real(total, c_double) - rank0) / (r + 1) / (weights - 1), c_int64_t), r = 1, ranks - 1)]
     print '(a,i0,a,i0,a,i0,3a)', 'jacobi (Fortran): ', moves, ' moves, the last after iteration ', &
          last_move, '; the last ', tail, ' iterations took ', decimals(last * 1e3), ' ms each on average'
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

  ! Reads the command line into the options; false when it is wrong.
  logical function parsed()
    character(len=:), allocatable :: arg, value
    integer :: a, n, positional, ios
    parsed = .false.
    n = command_argument_count()
    a = 1
    positional = 0
    do while (a <= n)
       arg = argument(a)
       a = a + 1
       if (arg == '--cliff' .or. arg == '--model' .or. arg == '--policy' .or. arg == '--emulate' &
            .or. arg == '--every') then
          if (a > n) return
          value = argument(a)
          a = a + 1
          select case (arg)
          case ('--cliff')
             if (.not. whole(value, capacity)) return
          case ('--model')
             select case (value)
             case ('constant')
                model = HETBAL_MODEL_CONSTANT
             case ('functional')
                model = HETBAL_MODEL_FUNCTIONAL
             case ('monotone-cubic')
                model = HETBAL_MODEL_MONOTONE_CUBIC
             case default
                return
             end select
          case ('--policy')
             select case (value)
             case ('adaptive')
                policy = HETBAL_POLICY_ADAPTIVE
             case ('profitability')
                policy = HETBAL_POLICY_PROFITABILITY
             case default
                return
             end select
          case ('--emulate')
             read (value, *, iostat=ios) emulate
             if (ios /= 0 .or. .not. emulate > 0) return
          case ('--every')
             if (.not. whole(value, every)) return
             if (every < 1) return
          end select
       else if (positional == 0) then
          if (.not. whole(arg, total)) return
          positional = 1
       else if (positional == 1) then
          if (.not. whole(arg, iterations)) return
          if (iterations < 1) return
          positional = 2
       else
          return
       end if
    end do
    parsed = total >= ranks
  end function parsed

  ! Command-line argument a.
  function argument(a) result(value)
    integer, intent(in) :: a
    character(len=:), allocatable :: value
    integer :: length
    call get_command_argument(a, length=length)
    allocate(character(len=length) :: value)
    if (length > 0) call get_command_argument(a, value)
  end function argument

  ! Reads the digits of `text` into `number`; false for anything else.
  logical function whole(text, number)
    character(*), intent(in) :: text
    integer(c_int64_t), intent(inout) :: number
    integer :: ios
    whole = .false.
    if (len(text) == 0 .or. len(text) > 18 .or. verify(text, '0123456789') /= 0) return
    read (text, *, iostat=ios) number
    whole = ios == 0
  end function whole

  ! x with 3 decimals (a leading zero below 1, which f0.3 leaves out).
  function decimals(x) result(text)
    real(c_double), intent(in) :: x
    character(len=:), allocatable :: text
    character(len=32) :: buffer
    write (buffer, '(f32.3)') x
    text = trim(adjustl(buffer))
  end function decimals

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
