! `use hetbal`'s item buffer from Fortran, on 4 ranks: kept items never move
! (the Fortran side of tests/c/item_buffer.c). Each rank's items, one double
! each (its global position), live in a type(hetbal_item_buffer), filled half
! by hetbal_item_buffer_resize and the data pointer, half by
! hetbal_item_buffer_append; three ring redistributions
! (hetbal_ring_redistribute_buffer, even ranks passing mpi_f08's communicator
! and odd ones the integer handle: a path, where each rank ends with exactly
! its target's positions, a bidirectional ring, a unidirectional ring where
! rank 0 receives in front of its items across the ring's wrap) each check every item (value and order, every rank
! holding its target's positions, rank after rank) and that every item a rank
! kept is at the address it had before (c_loc before and after). Then bad
! arguments on one rank only (an item size that is not the buffer's on rank 1,
! one item too many on rank 2, a freed buffer on rank 0) refused on every rank
! with the library's message, every buffer untouched (items, count, address),
! and the same move then made with good arguments (checked as the others).
! Then the balancer on the item buffer (hetbal_balancer_step_buffer): 1200
! items, 300 a rank, ranks 2 and 3 emulating 2 and 4 times the others'
! seconds per item, six steps, each checking every item (every rank holding a
! contiguous run of the global positions, rank after rank, from
! decision%first, decision%count items; after a move, the counts those of
! hetbal_balance at the emulated speeds) and that every kept item stayed at
! its address; then bad arguments on one rank only (a freed buffer on rank 2,
! items of 16 bytes on rank 1, an empty buffer on rank 0) refused on every
! rank, every buffer untouched, and one more good step. Then the rank-2 view
! of items of two doubles; a freed buffer refused by every procedure. Run:
! mpirun -np 4 item_buffer-f. Exit 0 when everything holds.
program item_buffer_test
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use hetbal
  implicit none
  integer, parameter :: ranks = 4
  integer(c_int64_t), parameter :: total = 1200
  integer(c_size_t), parameter :: double_bytes = 8
  real(c_double), parameter :: c(ranks) = [2d0, 1d0, 1.5d0, 1d0], back(ranks) = 1d0
  ! The balancer's emulated seconds per item, by rank, and its links.
  real(c_double), parameter :: per_item(ranks) = [1d-5, 1d-5, 2d-5, 4d-5], link(ranks) = 1d-9
  integer :: rank, nranks, failures, all_failures
  integer(c_int64_t) :: loads(ranks), targets(ranks), count, k, half
  integer(c_int64_t) :: kept, kept_front, kept_behind, sums(3)
  type(hetbal_item_buffer) :: buffer, freed, pairs, wide, empty
  type(hetbal_balancer) :: balancer
  integer(c_int64_t) :: balanced(ranks), steps_moved, balancer_kept
  integer :: it
  type(hetbal_plan) :: plan
  real(c_double), pointer :: x(:), snapshot(:), two(:, :)
  type(c_ptr) :: data
  integer(c_int) :: status
  character(80) :: rank_named

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  failures = 0
  kept = 0
  kept_front = 0
  kept_behind = 0
  if (nranks /= ranks) then
     if (rank == 0) print '(a,i0,a)', 'item_buffer: run on ', ranks, ' ranks (mpirun -np 4)'
     call MPI_Finalize()
     error stop 2
  end if

  ! Rank r's items: its global positions, from sum(loads(1:r)) on.
  loads = [600, 100, 100, 400]
  call check(hetbal_item_buffer_create(double_bytes, buffer) == HETBAL_OK, "create")
  call check(hetbal_item_buffer_item_bytes(buffer) == double_bytes, "item_bytes")
  call check(hetbal_item_buffer_count(buffer) == 0, "a new buffer holds items")
  ! Odd ranks give back what they send as it leaves: the same items arrive.
  call check(hetbal_item_buffer_give_back_sent(buffer, mod(rank, 2) == 1) == HETBAL_OK, "give back sent")
  half = loads(rank + 1) / 2
  call check(hetbal_item_buffer_resize(buffer, half) == HETBAL_OK, "resize")
  call check(hetbal_item_buffer_doubles(buffer, x) == HETBAL_OK, "doubles")
  call check(size(x, kind=c_int64_t) == half, "resize: count")
  call check(all(x == 0), "resize: new items not zeroed")
  x = [(real(sum(loads(1:rank)) + k, c_double), k = 0, half - 1)]
  call check(hetbal_item_buffer_append(buffer, [(real(sum(loads(1:rank)) + k, c_double), &
       k = half, loads(rank + 1) - 1)], loads(rank + 1) - half) == HETBAL_OK, "append")
  call check(hetbal_item_buffer_count(buffer) == loads(rank + 1), "filled: count")
  call check(hetbal_item_buffer_doubles(buffer, x) == HETBAL_OK, "doubles")
  call check(all(x == [(real(sum(loads(1:rank)) + k, c_double), k = 0, loads(rank + 1) - 1)]), &
       "filled: items")

  ! A path (no item crosses from rank 3 to rank 0): rank r ends with exactly
  ! the positions sum(targets(1:r)) on. Rank 2 keeps its items and receives
  ! from rank 1 in front of them and from rank 3 behind; rank 1 keeps none.
  targets = [100, 500, 300, 300]
  call check(hetbal_ring_plan_path(loads, targets, c, plan, c_pred=back) == HETBAL_OK, "path plan")
  call move(plan, .true., "path")
  call hetbal_plan_free(plan)
  loads = targets
  ! A bidirectional ring.
  targets = [300, 300, 300, 300]
  call check(hetbal_ring_plan(loads, targets, c, plan, c_pred=back) == HETBAL_OK, "ring plan")
  call move(plan, .false., "ring")
  call hetbal_plan_free(plan)
  loads = targets
  ! A unidirectional ring: rank 0 receives from rank 3, across the wrap, in
  ! front of the items it keeps.
  targets = [600, 200, 200, 200]
  call check(hetbal_ring_plan(loads, targets, c, plan) == HETBAL_OK, "unidirectional plan")
  call move(plan, .false., "unidirectional ring")
  call hetbal_plan_free(plan)
  loads = targets
  ! Every case happened somewhere: kept items, with items received in front
  ! of them and behind.
  call MPI_Allreduce([kept, kept_front, kept_behind], sums, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check(all(sums > 0), "no kept items, or none with items received in front or behind")

  ! Bad arguments on one rank only: refused on every rank, nothing lost.
  targets = [300, 300, 300, 300]
  call check(hetbal_ring_plan(loads, targets, c, plan, c_pred=back) == HETBAL_OK, "plan")
  count = hetbal_item_buffer_count(buffer)
  data = hetbal_item_buffer_data(buffer)
  call check(hetbal_item_buffer_doubles(buffer, x) == HETBAL_OK, "doubles")
  allocate(snapshot(count))
  snapshot = x
  ! An item size that is not the buffer's on rank 1.
  status = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD, plan, merge(16_c_size_t, double_bytes, rank == 1), buffer)
  call refused(status, 1, "item_bytes is 16 but the buffer holds items of 8 bytes", "wrong item size on rank 1")
  ! One item too many on rank 2 (the integer handle).
  if (rank == 2) call check(hetbal_item_buffer_append(buffer, [-1d0], 1_c_int64_t) == HETBAL_OK, "append")
  status = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD%MPI_VAL, plan, double_bytes, buffer)
  write (rank_named, '(a,i0,a)') "the buffer's count is ", count + 1, " but the plan's load of rank 2"
  call refused(status, 2, trim(rank_named), "a count that is not the load on rank 2", count + merge(1, 0, rank == 2))
  if (rank == 2) call check(hetbal_item_buffer_resize(buffer, count) == HETBAL_OK, "resize back")
  ! A freed buffer on rank 0.
  call check(hetbal_item_buffer_create(double_bytes, freed) == HETBAL_OK, "create")
  call hetbal_item_buffer_free(freed)
  call hetbal_item_buffer_free(freed) ! twice: nothing
  if (rank == 0) then
     status = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD, plan, double_bytes, freed)
  else
     status = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD, plan, double_bytes, buffer)
  end if
  call refused(status, 0, "buffer is NULL, freed or not an item buffer", "a freed buffer on rank 0")
  ! The same plan with good arguments everywhere still moves the items.
  call move(plan, .false., "after the refusals")
  call hetbal_plan_free(plan)
  deallocate(snapshot)

  ! The balancer on the item buffer: 300 items a rank, positions from 0 again;
  ! rank 3 four times and rank 2 twice as slow per item as ranks 0 and 1.
  call check(hetbal_balancer_create(MPI_COMM_WORLD, double_bytes, balancer, link, link) == HETBAL_OK, &
       "balancer create")
  call check(hetbal_balancer_set_policy(balancer, HETBAL_POLICY_PROFITABILITY) == HETBAL_OK, "set_policy")
  call check(hetbal_balance(total, per_item, balanced) == HETBAL_OK, "balance")
  call check(hetbal_item_buffer_resize(buffer, total / ranks) == HETBAL_OK, "resize to 300")
  call check(hetbal_item_buffer_doubles(buffer, x) == HETBAL_OK, "doubles")
  x = [(real(rank * (total / ranks) + k, c_double), k = 0, total / ranks - 1)]
  steps_moved = 0
  balancer_kept = 0
  do it = 1, 6
     write (rank_named, '(a,i0)') 'balancer step ', it
     call step(trim(rank_named))
  end do
  call check(steps_moved > 0, "the balancer never moved the items")
  call check(hetbal_item_buffer_count(buffer) == balanced(rank + 1), "the balancer's counts are not balanced")
  ! Bad arguments on one rank only: refused on every rank, nothing lost.
  count = hetbal_item_buffer_count(buffer)
  data = hetbal_item_buffer_data(buffer)
  call check(hetbal_item_buffer_doubles(buffer, x) == HETBAL_OK, "doubles")
  allocate(snapshot(count))
  snapshot = x
  call check(hetbal_item_buffer_create(2 * double_bytes, wide) == HETBAL_OK, "create wide")
  call check(hetbal_item_buffer_append(wide, [1d0, 2d0], 1_c_int64_t) == HETBAL_OK, "append wide")
  call check(hetbal_item_buffer_create(double_bytes, empty) == HETBAL_OK, "create empty")
  ! A freed buffer on rank 2, items of 16 bytes on rank 1, an empty buffer
  ! on rank 0.
  call step_refused(2, freed, "buffer is NULL, freed or not an item buffer", "step: a freed buffer on rank 2")
  call step_refused(1, wide, "the buffer holds items of 16 bytes but the balancer's are 8 bytes", &
       "step: items of 16 bytes on rank 1")
  call check(hetbal_item_buffer_count(wide) == 1, "step: the wide buffer changed")
  call step_refused(0, empty, "the buffer is empty", "step: an empty buffer on rank 0")
  call check(hetbal_item_buffer_count(empty) == 0, "step: the empty buffer changed")
  ! Good arguments everywhere: the balancer still steps.
  call step("balancer step after the refusals")
  call hetbal_item_buffer_free(wide)
  call hetbal_item_buffer_free(empty)
  call hetbal_balancer_free(balancer)
  deallocate(snapshot)

  ! A freed buffer: refused by every procedure.
  call check(.not. c_associated(hetbal_item_buffer_data(freed)), "freed: data")
  call check(index(hetbal_last_error(), "freed") > 0, "freed: message")
  call check(hetbal_item_buffer_count(freed) == 0 .and. hetbal_item_buffer_item_bytes(freed) == 0, &
       "freed: count or item_bytes")
  call check(hetbal_item_buffer_resize(freed, 1_c_int64_t) == HETBAL_ERROR_INPUT, "freed: resize")
  call check(hetbal_item_buffer_append(freed, [1d0], 1_c_int64_t) == HETBAL_ERROR_INPUT, "freed: append")
  call check(hetbal_item_buffer_doubles(freed, x) == HETBAL_ERROR_INPUT, "freed: doubles")
  call check(.not. associated(x), "freed: doubles associated")
  ! Items of two doubles, seen one column per item; items of 12 bytes have
  ! no view as doubles.
  call check(hetbal_item_buffer_create(2 * double_bytes, pairs) == HETBAL_OK, "create pairs")
  call check(hetbal_item_buffer_append(pairs, [1d0, 2d0, 3d0, 4d0, 5d0, 6d0], 3_c_int64_t) == HETBAL_OK, &
       "append pairs")
  call check(hetbal_item_buffer_doubles(pairs, two) == HETBAL_OK, "pairs: doubles")
  call check(all(shape(two) == [2, 3]), "pairs: shape")
  call check(all(two(:, 3) == [5d0, 6d0]), "pairs: item 3")
  call check(hetbal_item_buffer_doubles(pairs, x) == HETBAL_OK, "pairs: rank 1")
  call check(size(x) == 6, "pairs: rank 1 size")
  call check(c_associated(c_loc(x(5)), c_loc(two(1, 3))), "pairs: the two views differ")
  call check(hetbal_item_buffer_resize(pairs, 1_c_int64_t) == HETBAL_OK, "pairs: resize")
  call check(hetbal_item_buffer_doubles(pairs, two) == HETBAL_OK, "pairs: doubles after resize")
  call check(all(shape(two) == [2, 1]), "pairs: shape after resize")
  call hetbal_item_buffer_free(pairs)
  call check(hetbal_item_buffer_create(12_c_size_t, pairs) == HETBAL_OK, "create 12")
  call check(hetbal_item_buffer_doubles(pairs, x) == HETBAL_ERROR_INPUT, "items of 12 bytes seen as doubles")
  call check(.not. associated(x), "items of 12 bytes: x associated")
  call hetbal_item_buffer_free(pairs)
  call check(hetbal_item_buffer_create(0_c_size_t, pairs) == HETBAL_ERROR_INPUT, "item_bytes 0 accepted")
  call check(index(hetbal_last_error(), "item_bytes is 0") > 0, "item_bytes 0: message")
  call hetbal_item_buffer_free(buffer)

  call MPI_Allreduce(MPI_IN_PLACE, balancer_kept, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check(balancer_kept > 0, "no kept items checked at the balancer's moves")
  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. all_failures == 0) print '(5(a,i0),a)', 'hetbal item buffer (Fortran): '// &
       '4 moves on 4 ranks, ', sums(1), ' kept items checked in place (', sums(2), ' with items received '// &
       'in front, ', sums(3), ' behind), balancer steps that moved: ', steps_moved, ' (', balancer_kept, &
       ' kept items in place), bad input on one rank refused on every rank'
  call MPI_Finalize()
  if (all_failures /= 0) error stop 1

contains

  !> Moves the buffer's items (holding loads(rank + 1)) as plan says, then
  !> checks them: targets(rank + 1) items, consecutive positions (modulo
  !> total), each rank's first the one after the previous rank's last (path:
  !> rank 0's first is 0), and every item this rank held before at the address
  !> it had. Even ranks pass mpi_f08's communicator, odd ones the integer
  !> handle.
  subroutine move(plan, path, what)
    type(hetbal_plan), intent(in) :: plan
    logical, intent(in) :: path
    character(*), intent(in) :: what
    type(c_ptr) :: before(0:total - 1)
    real(c_double), pointer :: y(:)
    integer(c_int64_t) :: k, n, firsts(2, ranks), origin, expected, found, front
    integer(c_int) :: s
    integer :: r
    before = c_null_ptr
    call check(hetbal_item_buffer_count(buffer) == loads(rank + 1), what//": count before")
    call check(hetbal_item_buffer_doubles(buffer, y) == HETBAL_OK, what//": doubles before")
    do k = 1, size(y)
       before(int(y(k), c_int64_t)) = c_loc(y(k))
    end do
    if (modulo(rank, 2) == 0) then
       s = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD, plan, double_bytes, buffer)
    else
       s = hetbal_ring_redistribute_buffer(MPI_COMM_WORLD%MPI_VAL, plan, double_bytes, buffer)
    end if
    call check(s == HETBAL_OK, what//": redistribution")
    n = hetbal_item_buffer_count(buffer)
    call check(n == targets(rank + 1), what//": count after")
    call check(hetbal_item_buffer_doubles(buffer, y) == HETBAL_OK, what//": doubles after")
    if (.not. associated(y)) return
    do k = 2, size(y)
       call check(int(y(k), c_int64_t) == modulo(int(y(k - 1), c_int64_t) + 1, total), what//": out of order")
    end do
    ! Every rank's count and first position: ranks follow one another.
    firsts(:, rank + 1) = [n, -1_c_int64_t]
    if (n > 0) firsts(2, rank + 1) = int(y(1), c_int64_t)
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_INTEGER8, firsts, 2, MPI_INTEGER8, MPI_COMM_WORLD)
    origin = -1
    do r = 1, ranks
       if (firsts(1, r) > 0 .and. origin < 0) origin = modulo(firsts(2, r) - sum(firsts(1, 1:r - 1)), total)
    end do
    if (path) call check(origin == 0, what//": a path's positions start at rank 0")
    expected = modulo(origin + sum(targets(1:rank)), total)
    if (n > 0) call check(firsts(2, rank + 1) == expected, what//": not the target's positions")
    call kept_in_place(y, before, what, found, front)
    kept = kept + found
    if (found > 0 .and. front > 0) kept_front = kept_front + found
    if (found > 0 .and. front + found < n) kept_behind = kept_behind + found
  end subroutine move

  !> One balancer step on the buffer (emulated compute time: per_item of this
  !> rank times its count), then checks: the decision's count is the buffer's,
  !> its items are the positions from decision%first on (modulo total), the
  !> ranks' runs follow one another and hold total items, after a move the
  !> counts are balanced, and every item this rank held before is at the
  !> address it had.
  subroutine step(what)
    character(*), intent(in) :: what
    type(c_ptr) :: before(0:total - 1)
    real(c_double), pointer :: y(:)
    type(hetbal_decision) :: d
    integer(c_int64_t) :: k, n, firsts(2, ranks), found, front
    integer :: r
    before = c_null_ptr
    call check(hetbal_item_buffer_doubles(buffer, y) == HETBAL_OK, what//": doubles before")
    do k = 1, size(y)
       before(int(y(k), c_int64_t)) = c_loc(y(k))
    end do
    n = hetbal_item_buffer_count(buffer)
    call check(hetbal_balancer_step_buffer(balancer, per_item(rank + 1) * real(n, c_double), 100_c_int64_t, &
         buffer, d) == HETBAL_OK, what)
    n = hetbal_item_buffer_count(buffer)
    call check(d%count == n, what//": the decision's count is not the buffer's")
    call check(hetbal_item_buffer_doubles(buffer, y) == HETBAL_OK, what//": doubles after")
    if (.not. associated(y)) return
    do k = 1, size(y)
       call check(int(y(k), c_int64_t) == modulo(d%first + k - 1, total), what//": not the positions from first")
    end do
    firsts(:, rank + 1) = [n, d%first]
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_INTEGER8, firsts, 2, MPI_INTEGER8, MPI_COMM_WORLD)
    call check(sum(firsts(1, :)) == total, what//": items lost")
    do r = 2, ranks
       call check(firsts(2, r) == modulo(firsts(2, r - 1) + firsts(1, r - 1), total), what//": runs not in order")
    end do
    if (d%redistribute == 1) then
       steps_moved = steps_moved + 1
       call check(n == balanced(rank + 1), what//": the count is not the balanced target")
    end if
    call kept_in_place(y, before, what, found, front)
    if (d%redistribute == 1) balancer_kept = balancer_kept + found
  end subroutine step

  !> The items of y this rank held before the call (before(position): their
  !> address then, null for the others) are where they were: found counts
  !> them, front is how many items come before the first of them (-1: none).
  subroutine kept_in_place(y, before, what, found, front)
    real(c_double), pointer, intent(in) :: y(:)
    type(c_ptr), intent(in) :: before(0:)
    character(*), intent(in) :: what
    integer(c_int64_t), intent(out) :: found, front
    integer(c_int64_t) :: k, pos, moved
    character(24) :: text
    found = 0
    front = -1
    moved = 0
    do k = 1, size(y)
       pos = int(y(k), c_int64_t)
       if (pos < 0 .or. pos >= total) cycle
       if (.not. c_associated(before(pos))) cycle
       if (.not. c_associated(before(pos), c_loc(y(k)))) moved = moved + 1
       if (found == 0) front = k - 1
       found = found + 1
    end do
    write (text, '(i0)') moved
    call check(moved == 0, what//": "//trim(text)//" kept items moved")
  end subroutine kept_in_place

  !> A balancer step given `bad` on bad_rank and the good buffer elsewhere:
  !> refused on every rank (see refused).
  subroutine step_refused(bad_rank, bad, says, what)
    integer, intent(in) :: bad_rank
    type(hetbal_item_buffer), intent(inout) :: bad
    character(*), intent(in) :: says, what
    integer(c_int) :: status
    type(hetbal_decision) :: d
    if (rank == bad_rank) then
       status = hetbal_balancer_step_buffer(balancer, 1d-3, 100_c_int64_t, bad, d)
    else
       status = hetbal_balancer_step_buffer(balancer, 1d-3, 100_c_int64_t, buffer, d)
    end if
    call refused(status, bad_rank, says, what)
  end subroutine step_refused

  !> A refused redistribution (status, on every rank): HETBAL_ERROR_INPUT, the
  !> message says says on bad_rank and names bad_rank elsewhere, and the
  !> buffer is as it was (held items, default the snapshot's count, at data).
  subroutine refused(status, bad_rank, says, what, held)
    integer(c_int), intent(in) :: status
    integer, intent(in) :: bad_rank
    character(*), intent(in) :: says, what
    integer(c_int64_t), intent(in), optional :: held
    character(16) :: named
    real(c_double), pointer :: y(:)
    integer(c_int64_t) :: n
    n = count
    if (present(held)) n = held
    write (named, '(a,i0)') 'rank ', bad_rank
    call check(status == HETBAL_ERROR_INPUT, what//": not refused")
    if (rank == bad_rank) then
       call check(index(hetbal_last_error(), says) > 0, what//": message")
    else
       call check(index(hetbal_last_error(), trim(named)) > 0, what//": the rank not named")
    end if
    call check(hetbal_item_buffer_count(buffer) == n, what//": the count changed")
    call check(c_associated(hetbal_item_buffer_data(buffer), data), what//": the items moved")
    call check(hetbal_item_buffer_doubles(buffer, y) == HETBAL_OK, what//": doubles")
    if (associated(y)) call check(all(y(1:count) == snapshot), what//": the items changed")
  end subroutine refused

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (.not. condition) then
       failures = failures + 1
       print '(a,i0,4a)', 'rank ', rank, ' FAILED: ', what, '; last error: ', hetbal_last_error()
    end if
  end subroutine check

end program item_buffer_test
