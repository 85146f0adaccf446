! `use hetbal` from Fortran with the old integer communicator handle (`use
! mpi`): a ring plan at the makespan the Rust tests expect, balanced targets,
! a plan with start-ups, a path plan (and its backward move refused), a redistribution of real(8) items (with start-ups:
! one message per planned transfer) checked item by item, bad input refused.
! Run: mpirun -np 4 plan
program plan_test
  use, intrinsic :: iso_c_binding
  use mpi
  use hetbal
  implicit none
  integer :: rank, ierr, failures, total
  type(hetbal_plan) :: plan
  integer(c_int64_t) :: targets(3), count, k, first
  integer(c_int64_t), parameter :: loads(4) = [9, 1, 1, 1], goal(4) = [1, 1, 3, 7]
  real(c_double) :: time
  type(c_ptr) :: items
  real(c_double), pointer :: values(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  failures = 0

  call check(hetbal_balance(700_c_int64_t, [1d0, 2d0, 4d0], targets, time) == HETBAL_OK, "balance")
  call check(all(targets == [400, 200, 100]) .and. time == 400d0, "balanced targets")
  call check(hetbal_balance(700_c_int64_t, [1d0, -2d0, 4d0], targets) == HETBAL_ERROR_INPUT, "negative time")
  call check(index(hetbal_last_error(), "seconds_per_item[1]") > 0, "negative time: message")

  call check(hetbal_ring_plan(loads, goal, [2d0, 1d0, 1.5d0, 1d0], plan) == HETBAL_OK, "ring plan")
  call check(hetbal_plan_makespan(plan) == 16d0, "makespan 16 (batching_counts_on_a_forwarding_ring)")
  call check(hetbal_plan_optimal(plan) == 1, "proven optimal")
  call check(hetbal_plan_transfer_count(plan) > 0, "transfers")
  call hetbal_plan_free(plan)
  ! With start-ups (l + m c per message): P0 gives 2 items to P2 through P1,
  ! per item 1, per message 2: 6, optimal.
  call check(hetbal_ring_plan([3_c_int64_t, 1_c_int64_t, 1_c_int64_t], [1_c_int64_t, 1_c_int64_t, 3_c_int64_t], &
       [1d0, 1d0, 1d0], plan, l_succ=[2d0, 2d0, 2d0]) == HETBAL_OK, "ring plan with start-ups")
  call check(hetbal_plan_makespan(plan) == 6d0 .and. hetbal_plan_lower_bound(plan) == 6d0, "start-ups: makespan 6")
  call hetbal_plan_free(plan)
  ! A path: P0's 2 items reach P2 through P1 (which holds none), pipelined: 3,
  ! where the ring sends them over the link from P0 to P2: 2.
  call check(hetbal_ring_plan([2_c_int64_t, 0_c_int64_t, 0_c_int64_t], [0_c_int64_t, 0_c_int64_t, 2_c_int64_t], &
       [1d0, 1d0, 1d0], plan, c_pred=[1d0, 1d0, 1d0]) == HETBAL_OK, "ring plan with empty processors")
  call check(hetbal_plan_makespan(plan) == 2d0, "empty processors: makespan 2")
  call hetbal_plan_free(plan)
  call check(hetbal_ring_plan_path([2_c_int64_t, 0_c_int64_t, 0_c_int64_t], [0_c_int64_t, 0_c_int64_t, 2_c_int64_t], &
       [1d0, 1d0, 1d0], plan, c_pred=[1d0, 1d0, 1d0]) == HETBAL_OK, "path plan")
  call check(hetbal_plan_makespan(plan) == 3d0 .and. hetbal_plan_optimal(plan) == 1, "path: makespan 3")
  call hetbal_plan_free(plan)
  ! Unidirectional, P0 would need items from P2: refused, the prefix named.
  call check(hetbal_ring_plan_path([1_c_int64_t, 0_c_int64_t, 3_c_int64_t], [3_c_int64_t, 0_c_int64_t, 1_c_int64_t], &
       [1d0, 1d0, 1d0], plan) == HETBAL_ERROR_INPUT, "backward move on a unidirectional path")
  call check(index(hetbal_last_error(), "processors 0 to 0 (P0) hold 1 items but must end with 3") > 0, &
       "backward move: message")
  call check(hetbal_ring_plan(loads, goal, [2d0, 1d0, 1.5d0, 1d0], plan, l_succ=[0d0, 0d0, -1d0, 0d0]) &
       == HETBAL_ERROR_INPUT, "negative start-up")
  call check(index(hetbal_last_error(), "l_succ[2]") > 0, "negative start-up: message")
  call check(hetbal_ring_plan(loads, goal, [2d0, 1d0, 1.5d0, 1d0], plan, l_succ=[1d0, 1d0, 1d0, 1d0]) == HETBAL_OK, &
       "ring plan with start-ups (4 ranks)")

  ! The items: their global positions, as real(8).
  first = sum(loads(1:rank))
  count = loads(rank + 1)
  items = hetbal_alloc(int(count * 8, c_size_t))
  call c_f_pointer(items, values, [count])
  values = [(real(first + k, c_double), k = 0, count - 1)]
  call check(hetbal_ring_redistribute(MPI_COMM_WORLD, plan, 8_c_size_t, items, count) == HETBAL_OK, &
       "redistribute (integer communicator)")
  call c_f_pointer(items, values, [count])
  call check(count == goal(rank + 1), "count after")
  do k = 2, count
     call check(values(k) == modulo(values(k - 1) + 1, 12d0), "items in order")
  end do
  call check(hetbal_ring_redistribute(MPI_COMM_WORLD, plan, 0_c_size_t, items, count) == HETBAL_ERROR_INPUT, &
       "item_bytes 0")
  call hetbal_free(items)
  call hetbal_plan_free(plan)
  call hetbal_plan_free(plan)
  call check(hetbal_plan_optimal(plan) == -1, "freed plan")

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', 'hetbal (Fortran): plan, balance and redistribution with an integer communicator'
  call MPI_Finalize(ierr)
  if (total /= 0) error stop 1

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (.not. condition) then
       failures = failures + 1
       print '(a,i0,4a)', 'rank ', rank, ' FAILED: ', what, '; last error: ', hetbal_last_error()
    end if
  end subroutine check

end program plan_test
