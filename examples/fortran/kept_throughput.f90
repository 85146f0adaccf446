! A rank that already holds data receives more in front of it, from Fortran
! (examples/c/kept_throughput.c's measure through the module): the ring
! redistribution of a buffer of hetbal_alloc (hetbal_ring_redistribute: the
! buffer grows and the kept items shift once) and of an item buffer
! (hetbal_ring_redistribute_buffer: the kept items never move), the same
! with an item buffer giving back what it sends as it leaves
! (hetbal_item_buffer_give_back_sent), against a plain MPI transfer of the
! same bytes into a freshly allocated array (by a rank 1 that holds nothing,
! and by one that holds its data, as in the redistributions); the five
! alternated run by run, each run in another order.
!
!   mpirun -np 2 kept_throughput [HELD_MIB] [MOVED_MIB] [RUNS]
!
! Rank 0 holds MOVED_MIB + 1 items of 1 MiB and sends MOVED_MIB of them to
! rank 1, which holds HELD_MIB (default 1024 and 1023, 5 runs); the items
! arrive in front of rank 1's (from its predecessor). Prints each way's median
! seconds (rank 0's clock, between barriers: the call's wall time on both
! ranks), every run's, the ratio to the plain transfer by a holding
! receiver, and the median of rank 1's own time (from its call to its return,
! without the barrier: what the receiver pays); then a copy of HELD_MIB into
! memory touched before. Each run checks the items (one byte of
! each) and that the item buffer's kept items stayed where they were. Build
! (after crates/hetbal-c/install.sh PREFIX, PKG_CONFIG_PATH=PREFIX/lib/pkgconfig):
!   mpif90 -O2 -o kept_throughput examples/fortran/kept_throughput.f90 \
!       $(pkg-config --cflags --libs hetbal-fortran)
program kept_throughput
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use hetbal
  implicit none
  integer(c_int64_t), parameter :: mib = 2_c_int64_t**20
  integer, parameter :: plain_empty = 1, plain_holding = 2, malloced = 3, handle = 4, giving_back = 5, ways = 5
  character(38), parameter :: names(ways) = [character(38) :: 'plain MPI, new buffer, rank 1 empty', &
       'plain MPI, new buffer, rank 1 holding', "ring, hetbal_alloc'ed buffer", 'ring, item buffer', &
       'ring, item buffer giving back']
  integer :: rank, ranks, w, way
  integer(c_int64_t) :: held, moved, runs, run, loads(2), targets(2), count, first, k
  real(c_double), allocatable :: times(:, :), own(:, :)
  real(c_double) :: t0, t1, seconds, copy, medians(ways), receiver(ways)
  type(hetbal_plan) :: plan
  integer(c_int8_t), allocatable, target :: data(:), holding(:), fresh(:), from(:), to(:)
  integer(c_int8_t), pointer :: items(:)
  type(c_ptr) :: buffer, last_kept
  type(hetbal_item_buffer) :: ibuffer
  integer(c_int64_t) :: touched

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  if (ranks /= 2) call fail('run with mpirun -np 2')
  held = arg(1, 1024_c_int64_t)
  moved = arg(2, 1023_c_int64_t)
  runs = arg(3, 5_c_int64_t)
  loads = [moved + 1, held]
  targets = [1_c_int64_t, held + moved]
  if (hetbal_ring_plan(loads, targets, [1d0, 1d0], plan) /= HETBAL_OK) call fail('plan')
  ! Rank 0's items are 0 .. moved, rank 1's moved + 1 .. moved + held; rank 1
  ! ends with items 1 .. moved + held.
  allocate(times(runs, ways), own(runs, ways))
  do run = 1, runs
     do w = 0, ways - 1
        way = int(modulo(w + run - 1, int(ways, c_int64_t))) + 1
        select case (way)
        case (plain_empty, plain_holding)
           if (rank == 0) then
              allocate(data(moved * mib))
              call fill(data, 0_c_int64_t, moved)
           else if (way == plain_holding) then
              allocate(holding(held * mib))
              call fill(holding, moved + 1, held)
           end if
           call MPI_Barrier(MPI_COMM_WORLD)
           t0 = MPI_Wtime()
           if (rank == 0) then
              do k = 0, moved - 1
                 call MPI_Send(data(k * mib + 1:(k + 1) * mib), int(mib), MPI_BYTE, 1, 0, MPI_COMM_WORLD)
              end do
           else
              allocate(fresh(moved * mib))
              do k = 0, moved - 1
                 call MPI_Recv(fresh(k * mib + 1:(k + 1) * mib), int(mib), MPI_BYTE, 0, 0, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE)
              end do
           end if
           t1 = MPI_Wtime()
           call MPI_Barrier(MPI_COMM_WORLD)
           seconds = MPI_Wtime() - t0
           if (allocated(data)) deallocate(data)
           if (allocated(holding)) deallocate(holding)
           if (allocated(fresh)) deallocate(fresh)
        case (malloced)
           count = loads(rank + 1)
           first = merge(0_c_int64_t, moved + 1, rank == 0)
           buffer = hetbal_alloc(int(count * mib, c_size_t))
           if (.not. c_associated(buffer)) call fail('out of memory')
           call c_f_pointer(buffer, items, [count * mib])
           call fill(items, first, count)
           call MPI_Barrier(MPI_COMM_WORLD)
           t0 = MPI_Wtime()
           if (hetbal_ring_redistribute(MPI_COMM_WORLD, plan, int(mib, c_size_t), buffer, count) /= HETBAL_OK) &
                call fail('hetbal_ring_redistribute')
           t1 = MPI_Wtime()
           call MPI_Barrier(MPI_COMM_WORLD)
           seconds = MPI_Wtime() - t0
           if (rank == 1) then
              call c_f_pointer(buffer, items, [count * mib])
              call check(items, count, held + moved)
           end if
           call hetbal_free(buffer)
        case default
           count = loads(rank + 1)
           first = merge(0_c_int64_t, moved + 1, rank == 0)
           if (hetbal_item_buffer_create(int(mib, c_size_t), ibuffer) /= HETBAL_OK) &
                call fail('hetbal_item_buffer_create')
           if (hetbal_item_buffer_resize(ibuffer, count) /= HETBAL_OK) call fail('hetbal_item_buffer_resize')
           if (hetbal_item_buffer_give_back_sent(ibuffer, way == giving_back) /= HETBAL_OK) &
                call fail('hetbal_item_buffer_give_back_sent')
           call c_f_pointer(hetbal_item_buffer_data(ibuffer), items, [count * mib])
           call fill(items, first, count)
           last_kept = c_loc(items((count - 1) * mib + 1))
           call MPI_Barrier(MPI_COMM_WORLD)
           t0 = MPI_Wtime()
           if (hetbal_ring_redistribute_buffer(MPI_COMM_WORLD, plan, int(mib, c_size_t), ibuffer) /= HETBAL_OK) &
                call fail('hetbal_ring_redistribute_buffer')
           t1 = MPI_Wtime()
           call MPI_Barrier(MPI_COMM_WORLD)
           seconds = MPI_Wtime() - t0
           count = hetbal_item_buffer_count(ibuffer)
           if (rank == 1) then
              call c_f_pointer(hetbal_item_buffer_data(ibuffer), items, [count * mib])
              call check(items, count, held + moved)
              if (.not. c_associated(c_loc(items((count - 1) * mib + 1)), last_kept)) &
                   call fail("the item buffer's last kept item moved")
           end if
           call hetbal_item_buffer_free(ibuffer)
        end select
        times(run, way) = seconds
        own(run, way) = t1 - t0
     end do
  end do
  ! The machine's bandwidth: a copy of the held bytes into memory touched
  ! before (read back page by page, so that the copy is kept).
  copy = 0
  if (rank == 0) then
     allocate(from(held * mib), to(held * mib))
     from = 1
     do k = 1, held * mib, 4096
        to(k) = 2
     end do
     t0 = MPI_Wtime()
     to = from
     copy = MPI_Wtime() - t0
     touched = 0
     do k = 1, held * mib, 4096
        touched = touched + to(k)
     end do
     if (touched /= (held * mib + 4095) / 4096) call fail('copy')
     deallocate(from, to)
  end if
  ! Rank 1's own times, to rank 0.
  if (rank == 1) then
     call MPI_Send(own, int(runs) * ways, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD)
  else
     call MPI_Recv(own, int(runs) * ways, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end if
  if (rank == 0) then
     print '(a,i0,a,i0,a,i0,a,i0,6a)', 'rank 1 holds ', held, ' MiB and receives ', moved, &
          ' MiB in front, ', runs, ' runs each (median seconds); copy of ', held, ' MiB: ', fixed(copy, 3), &
          ' s (', fixed(1d-9 * real(held * mib, c_double) / max(copy, 1d-9), 1), ' GB/s)'
     do way = 1, ways
        medians(way) = median(times(:, way))
        receiver(way) = median(own(:, way))
     end do
     do way = 1, ways
        write (*, '(a38,1x,a,a,i4,a,a,a)', advance='no') names(way), fixed(medians(way), 3), ' s  ', &
             nint(100 * medians(plain_holding) / max(medians(way), 1d-9)), "% of plain holding, rank 1's own ", &
             fixed(receiver(way), 3), ' s   ['
        do run = 1, runs
           if (run > 1) write (*, '(a)', advance='no') ' '
           write (*, '(a)', advance='no') fixed(times(run, way), 3)
        end do
        write (*, '(a)') ']'
     end do
  end if
  call hetbal_plan_free(plan)
  call MPI_Finalize()

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    write (error_unit, '(a,i0,4a)') 'kept_throughput, rank ', rank, ': ', what, ' (', hetbal_last_error()//')'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end subroutine fail

  !> Command-line argument k as a positive whole number (up to 2^20), or
  !> fallback when absent.
  integer(c_int64_t) function arg(k, fallback)
    integer, intent(in) :: k
    integer(c_int64_t), intent(in) :: fallback
    character(32) :: text
    integer :: length, io
    arg = fallback
    if (command_argument_count() < k) return
    call get_command_argument(k, text, length)
    read (text(1:max(length, 1)), *, iostat=io) arg
    if (io /= 0 .or. length > 20 .or. verify(text(1:max(length, 1)), '0123456789') /= 0 .or. arg <= 0 &
         .or. arg > 2**20) call fail('HELD_MIB, MOVED_MIB and RUNS are positive whole numbers')
  end function arg

  !> Items first .. first + count - 1 of 1 MiB in at, each byte its index mod 127.
  subroutine fill(at, first, count)
    integer(c_int8_t), intent(inout) :: at(:)
    integer(c_int64_t), intent(in) :: first, count
    integer(c_int64_t) :: k
    do k = 0, count - 1
       at(k * mib + 1:(k + 1) * mib) = int(modulo(first + k, 127_c_int64_t), c_int8_t)
    end do
  end subroutine fill

  !> Rank 1's items after the move: expected items from item 1 on (rank 0
  !> keeps item 0), one byte of each checked.
  subroutine check(at, count, expected)
    integer(c_int8_t), intent(in) :: at(:)
    integer(c_int64_t), intent(in) :: count, expected
    integer(c_int64_t) :: k
    if (count /= expected) call fail('wrong count after the move')
    do k = 0, count - 1
       if (at(k * mib + modulo(k * 4099, mib) + 1) /= int(modulo(k + 1, 127_c_int64_t), c_int8_t)) &
            call fail('an item is wrong after the move')
    end do
  end subroutine check

  !> x with digits decimals, without blanks (0.004, not .004).
  function fixed(x, digits) result(text)
    real(c_double), intent(in) :: x
    integer, intent(in) :: digits
    character(:), allocatable :: text
    character(32) :: buffer
    character(16) :: form
    write (form, '(a,i0,a)') '(f32.', digits, ')'
    write (buffer, form) x
    text = trim(adjustl(buffer))
  end function fixed

  !> The median of values (the upper one of the middle two when their number
  !> is even).
  real(c_double) function median(values)
    real(c_double), intent(in) :: values(:)
    real(c_double) :: sorted(size(values)), v
    integer :: i, j
    sorted = values
    do i = 2, size(sorted)
       v = sorted(i)
       j = i - 1
       do while (j >= 1)
          if (sorted(j) <= v) exit
          sorted(j + 1) = sorted(j)
          j = j - 1
       end do
       sorted(j + 1) = v
    end do
    median = sorted(size(sorted) / 2 + 1)
  end function median

end program kept_throughput
