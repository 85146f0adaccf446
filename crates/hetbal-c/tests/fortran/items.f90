! `use hetbal` from Fortran with mpi_f08's communicator (and the integer handle
! once), on 4 ranks: items of 0 to 9 elements (two int64 each: the item's
! global index and the element's place in it) moved to new cuts six times,
! from ranks without data (c_null_ptr: one empty item, no item), ranks left
! empty and filled again, every element checked; too few cuts on
! one rank and bad offsets on another refused on every rank with every buffer
! untouched; a weighted balancer step moving heavy items off a slow rank, items
! and weights checked; a balancer with the functional model
! (hetbal_balancer_set_model, hetbal_balancer_set_policy) settling on a memory
! cliff, its items checked.
! Run: mpirun -np 4 items
program items_test
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use hetbal
  implicit none
  integer, parameter :: ranks = 4
  integer(c_int64_t), parameter :: total = 80, even(ranks + 1) = [0, 20, 40, 60, 80], &
       start(ranks + 1) = [0, 14, 15, 15, 80]
  integer(c_size_t), parameter :: element_bytes = 16
  real(c_double), parameter :: speed(0:ranks - 1) = [1d-3, 1d-3, 1d-3, 3d-3]
  integer :: rank, nranks, failures, all_failures, m, r
  integer(c_int64_t) :: cuts(ranks + 1), next(ranks + 1), count, k, saved, heavy_before, heavy_after
  type(c_ptr) :: data, offsets, weights
  integer(c_int64_t), pointer :: offs(:)
  real(c_double), pointer :: w(:)
  real(c_double) :: bottleneck
  integer(c_int) :: status
  type(hetbal_weighted_balancer) :: balancer
  type(hetbal_weighted_decision) :: d
  type(hetbal_balancer) :: fbalancer
  type(hetbal_decision) :: bd
  type(c_ptr) :: items
  integer(c_int64_t), pointer :: positions(:)
  real(c_double), parameter :: cheap(ranks) = 1d-6
  integer :: moves, last_move

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  failures = 0
  if (nranks /= ranks) then
     if (rank == 0) print '(a,i0,a)', 'items: run on ', ranks, ' ranks (mpirun -np 4)'
     call MPI_Finalize()
     error stop 1
  end if

  ! Rank 1 holds item 14 (no element), rank 2 no item: no data buffer.
  cuts = start
  call make_items(cuts(rank + 1), cuts(rank + 2), data, offsets)
  count = cuts(rank + 2) - cuts(rank + 1)
  call check(c_associated(data) .eqv. (rank /= 1 .and. rank /= 2), "start: data buffers")

  ! Six moves, some ranks left empty and filled again.
  do m = 0, 5
     next = [0_c_int64_t, (int(modulo(m * 17 + r * 23, int(total)), c_int64_t), r = 1, ranks - 1), total]
     if (modulo(m, 3) == 1) next(3) = next(2)
     do r = 2, ranks + 1
        next(r) = max(next(r), next(r - 1))
     end do
     status = hetbal_redistribute_items(MPI_COMM_WORLD, element_bytes, data, offsets, count, next)
     call check(status == HETBAL_OK, "move")
     call check(holds(data, offsets, count, next(rank + 1), next(rank + 2)), "move: wrong items")
     cuts = next
  end do
  call check(hetbal_redistribute_items(MPI_COMM_WORLD, element_bytes, data, offsets, count, even) &
       == HETBAL_OK, "back to even cuts")
  call check(holds(data, offsets, count, even(rank + 1), even(rank + 2)), "even cuts: wrong items")
  cuts = even

  ! Too few cuts on rank 1 (the integer handle): refused on every rank.
  if (rank == 1) then
     status = hetbal_redistribute_items(MPI_COMM_WORLD%MPI_VAL, element_bytes, data, offsets, count, cuts(1:ranks))
  else
     status = hetbal_redistribute_items(MPI_COMM_WORLD%MPI_VAL, element_bytes, data, offsets, count, cuts)
  end if
  call check(status == HETBAL_ERROR_INPUT, "too few cuts on rank 1 not refused")
  if (rank == 1) call check(index(hetbal_last_error(), "4 cuts for 4 ranks") > 0, "too few cuts: message")
  if (rank /= 1) call check(index(hetbal_last_error(), "rank 1") > 0, "too few cuts: the rank not named")
  call check(holds(data, offsets, count, cuts(rank + 1), cuts(rank + 2)), "too few cuts: items changed")
  ! Offsets that decrease on rank 2: refused on every rank.
  call c_f_pointer(offsets, offs, [count + 1])
  saved = offs(2)
  if (rank == 2) offs(2) = offs(count + 1) + 1
  status = hetbal_redistribute_items(MPI_COMM_WORLD, element_bytes, data, offsets, count, cuts)
  call check(status == HETBAL_ERROR_INPUT, "bad offsets on rank 2 not refused")
  call c_f_pointer(offsets, offs, [count + 1])
  offs(2) = saved
  call check(holds(data, offsets, count, cuts(rank + 1), cuts(rank + 2)), "bad offsets: items changed")

  ! The weighted balancer: items 70 to 79 ten times heavier, on rank 3, three
  ! times slower (its compute time given: speed * its weight).
  weights = hetbal_alloc(int(count * 8, c_size_t))
  call c_f_pointer(weights, w, [count])
  w = [(weight(cuts(rank + 1) + k), k = 0, count - 1)]
  heavy_before = count_heavy(cuts(rank + 1), count)
  call check(hetbal_weighted_balancer_create(MPI_COMM_WORLD%MPI_VAL, 0.05d0, balancer) == HETBAL_OK, "create")
  call check(hetbal_weighted_balancer_step(balancer, element_bytes, data, offsets, weights, count, &
       speed(rank) * sum(w), 50_c_int64_t, d) == HETBAL_OK, "weighted step")
  call check(d%redistribute == 1, "the weighted step did not move")
  call check(d%balanced_seconds <= 1.05d0 * d%optimum_seconds + 1d-15, "not within 5 %")
  call check(d%balanced_seconds < d%current_seconds .and. d%moved_items > 0 .and. d%moved_bytes > 0, &
       "decision: no gain or nothing moved")
  call check(d%count == count, "decision count")
  call check(holds(data, offsets, count, d%first, d%first + count), "weighted move: wrong items")
  if (count > 0) call c_f_pointer(weights, w, [count])
  do k = 1, count
     call check(w(k) == weight(d%first + k - 1), "the weight of an item")
  end do
  ! The slowest rank's time now is the balanced one; rank 3 kept fewer heavy items.
  bottleneck = 0
  if (count > 0) bottleneck = speed(rank) * sum(w)
  call MPI_Allreduce(MPI_IN_PLACE, bottleneck, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call check(abs(bottleneck - d%balanced_seconds) <= 1d-9 * bottleneck, "balanced time not the items'")
  heavy_after = count_heavy(d%first, count)
  if (rank == ranks - 1) call check(heavy_before == 10 .and. heavy_after < heavy_before, &
       "heavy items not moved off the slow rank")
  call hetbal_weighted_balancer_free(balancer)
  call hetbal_weighted_balancer_free(balancer)
  call check(hetbal_weighted_balancer_step(balancer, element_bytes, data, offsets, weights, count, &
       1d-3, 1_c_int64_t, d) == HETBAL_ERROR_INPUT, "freed balancer not refused")

  call hetbal_free(data)
  call hetbal_free(offsets)
  call hetbal_free(weights)

  ! The balancer with the functional model and the profitability policy:
  ! 2000 items of 8 bytes each, rank 0 computing 1d-4 s per item up to 1500
  ! items and 2d-3 s per item past them (a memory cliff), the others steady;
  ! twelve steps, every item checked, at most 6 moves, none after the ninth.
  call check(hetbal_balancer_create(MPI_COMM_WORLD, 8_c_size_t, fbalancer, cheap, cheap) == HETBAL_OK, &
       "balancer create")
  call check(hetbal_balancer_set_model(fbalancer, 7_c_int) == HETBAL_ERROR_INPUT, "model 7 accepted")
  call check(hetbal_balancer_set_policy(fbalancer, -1_c_int) == HETBAL_ERROR_INPUT, "policy -1 accepted")
  call check(hetbal_balancer_set_model(fbalancer, HETBAL_MODEL_FUNCTIONAL) == HETBAL_OK, "set_model")
  call check(hetbal_balancer_set_policy(fbalancer, HETBAL_POLICY_PROFITABILITY) == HETBAL_OK, "set_policy")
  count = 2000
  items = hetbal_alloc(int(count * 8, c_size_t))
  call c_f_pointer(items, positions, [count])
  positions = [(rank * 2000_c_int64_t + k, k = 0, count - 1)]
  moves = 0
  last_move = 0
  do m = 1, 12
     call check(hetbal_balancer_step(fbalancer, cliff_seconds(rank, count), int(12 - m, c_int64_t), items, &
          count, bd) == HETBAL_OK, "balancer step")
     if (bd%redistribute == 1) then
        moves = moves + 1
        last_move = m
     end if
     call c_f_pointer(items, positions, [count])
     do k = 1, count
        call check(positions(k) == mod(bd%first + k - 1, ranks * 2000_c_int64_t), "balancer: an item")
     end do
  end do
  call check(moves >= 1 .and. moves <= 6 .and. last_move <= 9, "functional balancer did not settle")
  call hetbal_balancer_free(fbalancer)
  call check(hetbal_balancer_set_model(fbalancer, HETBAL_MODEL_CONSTANT) == HETBAL_ERROR_INPUT, &
       "freed balancer not refused")
  call hetbal_free(items)

  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. all_failures == 0) print '(a)', 'hetbal (Fortran): six moves of variable-size items, a '// &
       'weighted balancer step and a functional balancer on a memory cliff checked, bad input refused on every rank'
  call MPI_Finalize()
  if (all_failures /= 0) error stop 1

contains

  !> The compute seconds of rank r holding x items: the library's memory-cliff
  !> scenario (ranks 0 and 1 past their capacity 20 and 15 times slower per item).
  real(c_double) function cliff_seconds(r, x)
    integer, intent(in) :: r
    integer(c_int64_t), intent(in) :: x
    select case (r)
    case (0)
       cliff_seconds = merge(1d-4, 2d-3, x <= 1500) * x
    case (1)
       cliff_seconds = merge(2d-4, 3d-3, x <= 2500) * x
    case (2)
       cliff_seconds = 5d-4 * x
    case default
       cliff_seconds = 1d-3 * x
    end select
  end function cliff_seconds

  !> Elements of item g (from 0): 0 to 9, every sixth empty.
  integer(c_int64_t) function item_size(g)
    integer(c_int64_t), intent(in) :: g
    item_size = modulo(g * 7, 10_c_int64_t)
    if (modulo(g, 6_c_int64_t) == 2) item_size = 0
  end function item_size

  real(c_double) function weight(g)
    integer(c_int64_t), intent(in) :: g
    weight = 1
    if (g >= 70) weight = 10
  end function weight

  integer(c_int64_t) function count_heavy(first, n)
    integer(c_int64_t), intent(in) :: first, n
    integer(c_int64_t) :: k
    count_heavy = 0
    do k = first, first + n - 1
       if (weight(k) > 1) count_heavy = count_heavy + 1
    end do
  end function count_heavy

  !> The items first to last - 1 in buffers of hetbal_alloc (data c_null_ptr
  !> when they hold no element).
  subroutine make_items(first, last, data, offsets)
    integer(c_int64_t), intent(in) :: first, last
    type(c_ptr), intent(out) :: data, offsets
    integer(c_int64_t), pointer :: offs(:), elements(:, :)
    integer(c_int64_t) :: g, j
    offsets = hetbal_alloc(int((last - first + 1) * 8, c_size_t))
    call c_f_pointer(offsets, offs, [last - first + 1])
    offs(1) = 0
    do g = first, last - 1
       offs(g - first + 2) = offs(g - first + 1) + item_size(g)
    end do
    data = c_null_ptr
    if (offs(last - first + 1) == 0) return
    data = hetbal_alloc(int(offs(last - first + 1), c_size_t) * element_bytes)
    call c_f_pointer(data, elements, [2_c_int64_t, offs(last - first + 1)])
    do g = first, last - 1
       do j = 0, item_size(g) - 1
          elements(:, offs(g - first + 1) + j + 1) = [g, j]
       end do
    end do
  end subroutine make_items

  !> Whether data, offsets and count hold exactly the items first to last - 1.
  logical function holds(data, offsets, count, first, last)
    type(c_ptr), intent(in) :: data, offsets
    integer(c_int64_t), intent(in) :: count, first, last
    integer(c_int64_t), pointer :: offs(:), elements(:, :)
    integer(c_int64_t) :: g, j, at
    holds = count == last - first
    if (.not. holds) return
    call c_f_pointer(offsets, offs, [count + 1])
    at = 0
    do g = first, last - 1
       holds = offs(g - first + 1) == at
       if (.not. holds) return
       at = at + item_size(g)
    end do
    holds = offs(count + 1) == at
    if (.not. holds .or. at == 0) return
    holds = c_associated(data)
    if (.not. holds) return
    call c_f_pointer(data, elements, [2_c_int64_t, at])
    do g = first, last - 1
       do j = 0, item_size(g) - 1
          holds = all(elements(:, offs(g - first + 1) + j + 1) == [g, j])
          if (.not. holds) return
       end do
    end do
  end function holds

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (.not. condition) then
       failures = failures + 1
       print '(a,i0,4a)', 'rank ', rank, ' FAILED: ', what, '; last error: ', hetbal_last_error()
    end if
  end subroutine check

end program items_test
