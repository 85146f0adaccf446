! hetbal for Fortran 2008: `use hetbal`, over the C ABI of libhetbal (hetbal.h,
! hetbal_mpi.h). install.sh builds it (hetbal.mod, libhetbal_fortran.a):
!   mpif90 app.f90 $(pkg-config --cflags --libs hetbal-fortran)
!
! Every function returns a status (HETBAL_OK on success); on failure
! hetbal_last_error() says why. Item counts, offsets and cuts are
! integer(c_int64_t) (hetbal's u64: values above 2^63 are out of Fortran's
! reach). Communicators: the old integer handle or mpi_f08's type(MPI_Comm).
! Items move in a buffer of hetbal_alloc (type(c_ptr), which the library may
! replace) or in an item buffer (type(hetbal_item_buffer), whose kept items
! never move); map either with c_f_pointer.
module hetbal
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  integer(c_int), parameter, public :: HETBAL_OK = 0, HETBAL_ERROR_INPUT = 1, &
       HETBAL_ERROR_NOT_APPLICABLE = 2, HETBAL_ERROR_LIMIT = 3, HETBAL_ERROR_RUN = 4
  !> Models of hetbal_balancer_set_model and policies of hetbal_balancer_set_policy.
  integer(c_int), parameter, public :: HETBAL_MODEL_CONSTANT = 0, HETBAL_MODEL_FUNCTIONAL = 1, &
       HETBAL_MODEL_MONOTONE_CUBIC = 2
  integer(c_int), parameter, public :: HETBAL_POLICY_ADAPTIVE = 0, HETBAL_POLICY_PROFITABILITY = 1, &
       HETBAL_POLICY_NEVER = 2, HETBAL_POLICY_FIXED = 3

  !> What the balancer decided after an iteration (hetbal_decision).
  type, bind(C), public :: hetbal_decision
     integer(c_int) :: redistribute          ! 1 when the items moved
     integer(c_int32_t) :: iteration         ! the iteration just measured (from 1)
     real(c_double) :: current_step          ! iteration time with the loads before
     real(c_double) :: balanced_step         ! ... with the balanced loads
     real(c_double) :: redistribution_time   ! predicted time of the move (s)
     real(c_double) :: predicted_gain        ! NaN when the policy weighed none
     integer(c_int64_t) :: first             ! global position of this rank's first item
     integer(c_int64_t) :: count             ! this rank's items now
  end type hetbal_decision

  !> What the weighted balancer decided at a step (hetbal_weighted_decision).
  type, bind(C), public :: hetbal_weighted_decision
     integer(c_int) :: redistribute          ! 1 when the items moved
     integer(c_int64_t) :: first             ! this rank's first global item index after the step (from 0)
     integer(c_int64_t) :: count             ! this rank's items after the step
     real(c_double) :: current_seconds       ! iteration time of the cuts before, at the speeds learned
     real(c_double) :: balanced_seconds      ! ... of the least-moving partition within the tolerance
     real(c_double) :: optimum_seconds       ! ... of the best partition
     integer(c_int64_t) :: moved_items       ! items that change owner in that partition
     integer(c_int64_t) :: moved_bytes       ! bytes of those items
     real(c_double) :: move_seconds          ! the move's estimated time (s)
     real(c_double) :: saved_seconds         ! the time the move saves over the iterations left
  end type hetbal_weighted_decision

  !> A ring plan (from hetbal_ring_plan; free it with hetbal_plan_free).
  type, public :: hetbal_plan
     type(c_ptr) :: handle = c_null_ptr
  end type hetbal_plan

  !> A balancer (from hetbal_balancer_create; free it with hetbal_balancer_free).
  type, public :: hetbal_balancer
     type(c_ptr) :: handle = c_null_ptr
  end type hetbal_balancer

  !> An item buffer (from hetbal_item_buffer_create; free it with
  !> hetbal_item_buffer_free): a rank's items of one size, in a range of
  !> addresses that grows in front and behind, so that the items a rank keeps
  !> through hetbal_ring_redistribute_buffer or hetbal_balancer_step_buffer
  !> never move.
  type, public :: hetbal_item_buffer
     type(c_ptr) :: handle = c_null_ptr
  end type hetbal_item_buffer

  !> A weighted balancer (from hetbal_weighted_balancer_create; free it with
  !> hetbal_weighted_balancer_free).
  type, public :: hetbal_weighted_balancer
     type(c_ptr) :: handle = c_null_ptr
  end type hetbal_weighted_balancer

  public :: hetbal_last_error, hetbal_balance, hetbal_ring_plan, hetbal_ring_plan_path, hetbal_plan_makespan, &
       hetbal_plan_lower_bound, hetbal_plan_optimal, hetbal_plan_transfer_count, &
       hetbal_plan_free, hetbal_alloc, hetbal_free, hetbal_ring_redistribute, &
       hetbal_balancer_create, hetbal_balancer_step, hetbal_balancer_step_buffer, hetbal_balancer_free, &
       hetbal_balancer_set_model, hetbal_balancer_set_policy, &
       hetbal_partition, hetbal_partition_moving, hetbal_redistribute_items, &
       hetbal_weighted_balancer_create, hetbal_weighted_balancer_step, hetbal_weighted_balancer_free, &
       hetbal_item_buffer_create, hetbal_item_buffer_free, hetbal_item_buffer_data, hetbal_item_buffer_count, &
       hetbal_item_buffer_item_bytes, hetbal_item_buffer_append, hetbal_item_buffer_resize, &
       hetbal_item_buffer_give_back_sent, hetbal_item_buffer_doubles, hetbal_ring_redistribute_buffer

  interface hetbal_ring_redistribute
     module procedure ring_redistribute_int, ring_redistribute_f08
  end interface hetbal_ring_redistribute

  interface hetbal_ring_redistribute_buffer
     module procedure ring_redistribute_buffer_int, ring_redistribute_buffer_f08
  end interface hetbal_ring_redistribute_buffer

  !> An item buffer's doubles as a Fortran pointer: rank 1, every double in
  !> order; rank 2, one column per item.
  interface hetbal_item_buffer_doubles
     module procedure item_buffer_doubles_1, item_buffer_doubles_2
  end interface hetbal_item_buffer_doubles

  interface hetbal_balancer_create
     module procedure balancer_create_int, balancer_create_f08
  end interface hetbal_balancer_create

  interface hetbal_redistribute_items
     module procedure redistribute_items_int, redistribute_items_f08
  end interface hetbal_redistribute_items

  interface hetbal_weighted_balancer_create
     module procedure weighted_balancer_create_int, weighted_balancer_create_f08
  end interface hetbal_weighted_balancer_create

  interface
     function c_last_error() bind(C, name="hetbal_last_error")
       import :: c_ptr
       type(c_ptr) :: c_last_error
     end function c_last_error
     function c_strlen(s) bind(C, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: c_strlen
     end function c_strlen
     function c_balance(n, total, seconds, targets, time) bind(C, name="hetbal_balance")
       import :: c_size_t, c_int64_t, c_double, c_int
       integer(c_size_t), value :: n
       integer(c_int64_t), value :: total
       real(c_double), intent(in) :: seconds(*)
       integer(c_int64_t), intent(out) :: targets(*)
       real(c_double), intent(out) :: time
       integer(c_int) :: c_balance
     end function c_balance
     function c_partition(n_items, weights, n_procs, seconds, cuts, bottleneck) &
          bind(C, name="hetbal_partition")
       import :: c_size_t, c_int64_t, c_double, c_int
       integer(c_size_t), value :: n_items, n_procs
       real(c_double), intent(in) :: weights(*), seconds(*)
       integer(c_int64_t), intent(inout) :: cuts(*)
       real(c_double), intent(inout) :: bottleneck
       integer(c_int) :: c_partition
     end function c_partition
     function c_partition_moving(n_items, weights, n_procs, seconds, current, tolerance, sizes, &
          cuts, bottleneck, moved_bytes) bind(C, name="hetbal_partition_moving")
       import :: c_size_t, c_int64_t, c_double, c_int, c_ptr
       integer(c_size_t), value :: n_items, n_procs
       real(c_double), intent(in) :: weights(*), seconds(*)
       integer(c_int64_t), intent(in) :: current(*)
       real(c_double), value :: tolerance
       type(c_ptr), value :: sizes
       integer(c_int64_t), intent(inout) :: cuts(*)
       real(c_double), intent(inout) :: bottleneck
       integer(c_int64_t), intent(inout) :: moved_bytes
       integer(c_int) :: c_partition_moving
     end function c_partition_moving
     function c_ring_plan(n, loads, targets, c_succ, c_pred, plan) bind(C, name="hetbal_ring_plan")
       import :: c_size_t, c_int64_t, c_double, c_int, c_ptr
       integer(c_size_t), value :: n
       integer(c_int64_t), intent(in) :: loads(*), targets(*)
       real(c_double), intent(in) :: c_succ(*)
       type(c_ptr), value :: c_pred
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: c_ring_plan
     end function c_ring_plan
     function c_ring_plan_startups(n, loads, targets, c_succ, c_pred, l_succ, l_pred, plan) &
          bind(C, name="hetbal_ring_plan_startups")
       import :: c_size_t, c_int64_t, c_double, c_int, c_ptr
       integer(c_size_t), value :: n
       integer(c_int64_t), intent(in) :: loads(*), targets(*)
       real(c_double), intent(in) :: c_succ(*)
       type(c_ptr), value :: c_pred, l_succ, l_pred
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: c_ring_plan_startups
     end function c_ring_plan_startups
     function c_ring_plan_path(n, loads, targets, c_succ, c_pred, l_succ, l_pred, plan) &
          bind(C, name="hetbal_ring_plan_path")
       import :: c_size_t, c_int64_t, c_double, c_int, c_ptr
       integer(c_size_t), value :: n
       integer(c_int64_t), intent(in) :: loads(*), targets(*)
       real(c_double), intent(in) :: c_succ(*)
       type(c_ptr), value :: c_pred, l_succ, l_pred
       type(c_ptr), intent(out) :: plan
       integer(c_int) :: c_ring_plan_path
     end function c_ring_plan_path
     function c_plan_double(plan) bind(C, name="hetbal_plan_makespan")
       import :: c_ptr, c_double
       type(c_ptr), value :: plan
       real(c_double) :: c_plan_double
     end function c_plan_double
     function c_plan_lower_bound(plan) bind(C, name="hetbal_plan_lower_bound")
       import :: c_ptr, c_double
       type(c_ptr), value :: plan
       real(c_double) :: c_plan_lower_bound
     end function c_plan_lower_bound
     function c_plan_optimal(plan) bind(C, name="hetbal_plan_optimal")
       import :: c_ptr, c_int
       type(c_ptr), value :: plan
       integer(c_int) :: c_plan_optimal
     end function c_plan_optimal
     function c_plan_transfer_count(plan) bind(C, name="hetbal_plan_transfer_count")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: plan
       integer(c_size_t) :: c_plan_transfer_count
     end function c_plan_transfer_count
     subroutine c_plan_free(plan) bind(C, name="hetbal_plan_free")
       import :: c_ptr
       type(c_ptr), value :: plan
     end subroutine c_plan_free
     function c_alloc(bytes) bind(C, name="hetbal_alloc")
       import :: c_ptr, c_size_t
       integer(c_size_t), value :: bytes
       type(c_ptr) :: c_alloc
     end function c_alloc
     subroutine c_free(buffer) bind(C, name="hetbal_free")
       import :: c_ptr
       type(c_ptr), value :: buffer
     end subroutine c_free
     function c_ring_redistribute(comm, plan, item_bytes, items, count) &
          bind(C, name="hetbal_mpi_ring_redistribute_f")
       import :: c_int, c_ptr, c_size_t, c_int64_t
       integer(c_int), value :: comm
       type(c_ptr), value :: plan
       integer(c_size_t), value :: item_bytes
       type(c_ptr), intent(inout) :: items
       integer(c_int64_t), intent(inout) :: count
       integer(c_int) :: c_ring_redistribute
     end function c_ring_redistribute
     function c_item_buffer_create(item_bytes, buffer) bind(C, name="hetbal_item_buffer_create")
       import :: c_int, c_ptr, c_size_t
       integer(c_size_t), value :: item_bytes
       type(c_ptr), intent(out) :: buffer
       integer(c_int) :: c_item_buffer_create
     end function c_item_buffer_create
     subroutine c_item_buffer_free(buffer) bind(C, name="hetbal_item_buffer_free")
       import :: c_ptr
       type(c_ptr), value :: buffer
     end subroutine c_item_buffer_free
     function c_item_buffer_data(buffer) bind(C, name="hetbal_item_buffer_data")
       import :: c_ptr
       type(c_ptr), value :: buffer
       type(c_ptr) :: c_item_buffer_data
     end function c_item_buffer_data
     function c_item_buffer_count(buffer) bind(C, name="hetbal_item_buffer_count")
       import :: c_ptr, c_int64_t
       type(c_ptr), value :: buffer
       integer(c_int64_t) :: c_item_buffer_count
     end function c_item_buffer_count
     function c_item_buffer_item_bytes(buffer) bind(C, name="hetbal_item_buffer_item_bytes")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: buffer
       integer(c_size_t) :: c_item_buffer_item_bytes
     end function c_item_buffer_item_bytes
     function c_item_buffer_append(buffer, items, count) bind(C, name="hetbal_item_buffer_append")
       import :: c_ptr, c_int64_t, c_int
       type(c_ptr), value :: buffer
       type(*), intent(in) :: items(*)
       integer(c_int64_t), value :: count
       integer(c_int) :: c_item_buffer_append
     end function c_item_buffer_append
     function c_item_buffer_resize(buffer, count) bind(C, name="hetbal_item_buffer_resize")
       import :: c_ptr, c_int64_t, c_int
       type(c_ptr), value :: buffer
       integer(c_int64_t), value :: count
       integer(c_int) :: c_item_buffer_resize
     end function c_item_buffer_resize
     function c_item_buffer_give_back_sent(buffer, on) bind(C, name="hetbal_item_buffer_give_back_sent")
       import :: c_ptr, c_int
       type(c_ptr), value :: buffer
       integer(c_int), value :: on
       integer(c_int) :: c_item_buffer_give_back_sent
     end function c_item_buffer_give_back_sent
     function c_ring_redistribute_buffer(comm, plan, item_bytes, buffer) &
          bind(C, name="hetbal_mpi_ring_redistribute_buffer_f")
       import :: c_int, c_ptr, c_size_t
       integer(c_int), value :: comm
       type(c_ptr), value :: plan
       integer(c_size_t), value :: item_bytes
       type(c_ptr), value :: buffer
       integer(c_int) :: c_ring_redistribute_buffer
     end function c_ring_redistribute_buffer
     function c_balancer_create(comm, item_bytes, c_succ, c_pred, balancer) &
          bind(C, name="hetbal_mpi_balancer_create_f")
       import :: c_int, c_ptr, c_size_t
       integer(c_int), value :: comm
       integer(c_size_t), value :: item_bytes
       type(c_ptr), value :: c_succ, c_pred
       type(c_ptr), intent(out) :: balancer
       integer(c_int) :: c_balancer_create
     end function c_balancer_create
     function c_balancer_step(balancer, seconds, remaining, items, count, decision) &
          bind(C, name="hetbal_mpi_balancer_step")
       import :: c_int, c_ptr, c_double, c_int64_t, hetbal_decision
       type(c_ptr), value :: balancer
       real(c_double), value :: seconds
       integer(c_int64_t), value :: remaining
       type(c_ptr), intent(inout) :: items
       integer(c_int64_t), intent(inout) :: count
       type(hetbal_decision), intent(out) :: decision
       integer(c_int) :: c_balancer_step
     end function c_balancer_step
     function c_balancer_step_buffer(balancer, seconds, remaining, buffer, decision) &
          bind(C, name="hetbal_mpi_balancer_step_buffer")
       import :: c_int, c_ptr, c_double, c_int64_t, hetbal_decision
       type(c_ptr), value :: balancer
       real(c_double), value :: seconds
       integer(c_int64_t), value :: remaining
       type(c_ptr), value :: buffer
       type(hetbal_decision), intent(out) :: decision
       integer(c_int) :: c_balancer_step_buffer
     end function c_balancer_step_buffer
     subroutine c_balancer_free(balancer) bind(C, name="hetbal_mpi_balancer_free")
       import :: c_ptr
       type(c_ptr), value :: balancer
     end subroutine c_balancer_free
     function c_balancer_set_model(balancer, model) bind(C, name="hetbal_mpi_balancer_set_model")
       import :: c_ptr, c_int
       type(c_ptr), value :: balancer
       integer(c_int), value :: model
       integer(c_int) :: c_balancer_set_model
     end function c_balancer_set_model
     function c_balancer_set_policy(balancer, policy, redistributions) &
          bind(C, name="hetbal_mpi_balancer_set_policy")
       import :: c_ptr, c_int, c_int32_t
       type(c_ptr), value :: balancer
       integer(c_int), value :: policy
       integer(c_int32_t), value :: redistributions
       integer(c_int) :: c_balancer_set_policy
     end function c_balancer_set_policy
     function c_redistribute_items(comm, element_bytes, data, offsets, count, cuts, cut_count) &
          bind(C, name="hetbal_mpi_redistribute_items_f")
       import :: c_int, c_ptr, c_size_t, c_int64_t
       integer(c_int), value :: comm
       integer(c_size_t), value :: element_bytes
       type(c_ptr), intent(inout) :: data, offsets
       integer(c_int64_t), intent(inout) :: count
       integer(c_int64_t), intent(in) :: cuts(*)
       integer(c_size_t), value :: cut_count
       integer(c_int) :: c_redistribute_items
     end function c_redistribute_items
     function c_weighted_balancer_create(comm, tolerance, balancer) &
          bind(C, name="hetbal_mpi_weighted_balancer_create_f")
       import :: c_int, c_ptr, c_double
       integer(c_int), value :: comm
       real(c_double), value :: tolerance
       type(c_ptr), intent(out) :: balancer
       integer(c_int) :: c_weighted_balancer_create
     end function c_weighted_balancer_create
     function c_weighted_balancer_step(balancer, element_bytes, data, offsets, weights, count, seconds, &
          remaining, decision) bind(C, name="hetbal_mpi_weighted_balancer_step")
       import :: c_int, c_ptr, c_size_t, c_double, c_int64_t, hetbal_weighted_decision
       type(c_ptr), value :: balancer
       integer(c_size_t), value :: element_bytes
       type(c_ptr), intent(inout) :: data, offsets, weights
       integer(c_int64_t), intent(inout) :: count
       real(c_double), value :: seconds
       integer(c_int64_t), value :: remaining
       type(hetbal_weighted_decision), intent(out) :: decision
       integer(c_int) :: c_weighted_balancer_step
     end function c_weighted_balancer_step
     subroutine c_weighted_balancer_free(balancer) bind(C, name="hetbal_mpi_weighted_balancer_free")
       import :: c_ptr
       type(c_ptr), value :: balancer
     end subroutine c_weighted_balancer_free
  end interface

contains

  !> This thread's last failure, as text.
  function hetbal_last_error() result(message)
    character(:), allocatable :: message
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: text
    integer :: i, n
    text = c_last_error()
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate(character(n) :: message)
    do i = 1, n
       message(i:i) = chars(i)
    end do
  end function hetbal_last_error

  !> Splits total items over size(seconds_per_item) processors so that the
  !> slowest finishes first: targets(i) items for processor i.
  function hetbal_balance(total, seconds_per_item, targets, iteration_time) result(status)
    integer(c_int64_t), intent(in) :: total
    real(c_double), intent(in), contiguous :: seconds_per_item(:)
    integer(c_int64_t), intent(out), contiguous :: targets(:)
    real(c_double), intent(out), optional :: iteration_time
    integer(c_int) :: status
    real(c_double) :: time
    if (size(targets) /= size(seconds_per_item)) then
       status = HETBAL_ERROR_INPUT
       return
    end if
    status = c_balance(int(size(seconds_per_item), c_size_t), total, seconds_per_item, targets, time)
    if (present(iteration_time) .and. status == HETBAL_OK) iteration_time = time
  end function hetbal_balance

  !> Cuts size(weights) items, in their order, into size(seconds_per_unit)
  !> contiguous ranges, one per processor in its order, so that the slowest
  !> finishes first (hetbal_partition). cuts has size(seconds_per_unit) + 1
  !> entries, 0-based item positions from 0 to size(weights): processor j
  !> (from 1) holds weights(cuts(j) + 1 : cuts(j + 1)), possibly none.
  !> bottleneck: max_j seconds_per_unit(j) * sum(weights(cuts(j) + 1 : cuts(j + 1))).
  !> cuts and bottleneck are unchanged on failure.
  function hetbal_partition(weights, seconds_per_unit, cuts, bottleneck) result(status)
    real(c_double), intent(in), contiguous :: weights(:), seconds_per_unit(:)
    integer(c_int64_t), intent(inout), contiguous :: cuts(:)
    real(c_double), intent(inout), optional :: bottleneck
    integer(c_int) :: status
    real(c_double) :: worst
    if (size(cuts) /= size(seconds_per_unit) + 1) then
       status = HETBAL_ERROR_INPUT
       return
    end if
    worst = 0
    status = c_partition(int(size(weights), c_size_t), weights, int(size(seconds_per_unit), c_size_t), &
         seconds_per_unit, cuts, worst)
    if (present(bottleneck) .and. status == HETBAL_OK) bottleneck = worst
  end function hetbal_partition

  !> hetbal_partition for items already distributed by the cuts current (as
  !> cuts, 0-based): among the partitions within 1 + tolerance of the optimal
  !> bottleneck, the one that moves the fewest bytes (hetbal_partition_moving).
  !> sizes (optional): each item's bytes (absent: 1 each, so that moved_bytes
  !> counts items). cuts must not be current. Outputs unchanged on failure.
  function hetbal_partition_moving(weights, seconds_per_unit, current, tolerance, cuts, bottleneck, &
       sizes, moved_bytes) result(status)
    real(c_double), intent(in), contiguous :: weights(:), seconds_per_unit(:)
    integer(c_int64_t), intent(in), contiguous :: current(:)
    real(c_double), intent(in) :: tolerance
    integer(c_int64_t), intent(inout), contiguous :: cuts(:)
    real(c_double), intent(inout), optional :: bottleneck
    integer(c_int64_t), intent(in), contiguous, target, optional :: sizes(:)
    integer(c_int64_t), intent(inout), optional :: moved_bytes
    integer(c_int) :: status
    real(c_double) :: worst
    integer(c_int64_t) :: moved
    type(c_ptr) :: bytes
    status = HETBAL_ERROR_INPUT
    if (size(cuts) /= size(seconds_per_unit) + 1 .or. size(current) /= size(cuts)) return
    bytes = c_null_ptr
    if (present(sizes)) then
       if (size(sizes) /= size(weights)) return
       if (size(sizes) > 0) bytes = c_loc(sizes)
    end if
    worst = 0
    moved = 0
    status = c_partition_moving(int(size(weights), c_size_t), weights, int(size(seconds_per_unit), c_size_t), &
         seconds_per_unit, current, tolerance, bytes, cuts, worst, moved)
    if (status /= HETBAL_OK) return
    if (present(bottleneck)) bottleneck = worst
    if (present(moved_bytes)) moved_bytes = moved
  end function hetbal_partition_moving

  !> Plans the fastest redistribution of a ring from loads to targets;
  !> c_pred absent: a unidirectional ring. l_succ / l_pred (optional): a
  !> start-up per message on each link to the successor / predecessor, so that
  !> a transfer of m items costs l + m c (hetbal_ring_plan_startups).
  function hetbal_ring_plan(loads, targets, c_succ, plan, c_pred, l_succ, l_pred) result(status)
    integer(c_int64_t), intent(in), contiguous :: loads(:), targets(:)
    real(c_double), intent(in), contiguous :: c_succ(:)
    type(hetbal_plan), intent(out) :: plan
    real(c_double), intent(in), contiguous, target, optional :: c_pred(:), l_succ(:), l_pred(:)
    integer(c_int) :: status
    type(c_ptr) :: pred, lsucc, lpred
    integer :: n
    n = size(loads)
    status = HETBAL_ERROR_INPUT
    if (size(targets) /= n .or. size(c_succ) /= n) return
    pred = c_null_ptr
    lsucc = c_null_ptr
    lpred = c_null_ptr
    if (present(c_pred)) then
       if (size(c_pred) /= n) return
       pred = c_loc(c_pred)
    end if
    if (present(l_succ)) then
       if (size(l_succ) /= n) return
       lsucc = c_loc(l_succ)
    end if
    if (present(l_pred)) then
       if (size(l_pred) /= n) return
       lpred = c_loc(l_pred)
    end if
    if (present(l_succ) .or. present(l_pred)) then
       status = c_ring_plan_startups(int(n, c_size_t), loads, targets, c_succ, pred, lsucc, lpred, plan%handle)
    else
       status = c_ring_plan(int(n, c_size_t), loads, targets, c_succ, pred, plan%handle)
    end if
  end function hetbal_ring_plan

  !> hetbal_ring_plan on a path: no item crosses the link between the last
  !> processor and the first (hetbal_ring_plan_path). A unidirectional path
  !> whose first processors hold fewer items than they end with is refused
  !> (HETBAL_ERROR_INPUT, the message names that prefix).
  function hetbal_ring_plan_path(loads, targets, c_succ, plan, c_pred, l_succ, l_pred) result(status)
    integer(c_int64_t), intent(in), contiguous :: loads(:), targets(:)
    real(c_double), intent(in), contiguous :: c_succ(:)
    type(hetbal_plan), intent(out) :: plan
    real(c_double), intent(in), contiguous, target, optional :: c_pred(:), l_succ(:), l_pred(:)
    integer(c_int) :: status
    type(c_ptr) :: pred, lsucc, lpred
    integer :: n
    n = size(loads)
    status = HETBAL_ERROR_INPUT
    if (size(targets) /= n .or. size(c_succ) /= n) return
    pred = c_null_ptr
    lsucc = c_null_ptr
    lpred = c_null_ptr
    if (present(c_pred)) then
       if (size(c_pred) /= n) return
       pred = c_loc(c_pred)
    end if
    if (present(l_succ)) then
       if (size(l_succ) /= n) return
       lsucc = c_loc(l_succ)
    end if
    if (present(l_pred)) then
       if (size(l_pred) /= n) return
       lpred = c_loc(l_pred)
    end if
    status = c_ring_plan_path(int(n, c_size_t), loads, targets, c_succ, pred, lsucc, lpred, plan%handle)
  end function hetbal_ring_plan_path

  real(c_double) function hetbal_plan_makespan(plan)
    type(hetbal_plan), intent(in) :: plan
    hetbal_plan_makespan = c_plan_double(plan%handle)
  end function hetbal_plan_makespan

  real(c_double) function hetbal_plan_lower_bound(plan)
    type(hetbal_plan), intent(in) :: plan
    hetbal_plan_lower_bound = c_plan_lower_bound(plan%handle)
  end function hetbal_plan_lower_bound

  !> 1 proven optimal, 0 not proven, -1 no plan.
  integer(c_int) function hetbal_plan_optimal(plan)
    type(hetbal_plan), intent(in) :: plan
    hetbal_plan_optimal = c_plan_optimal(plan%handle)
  end function hetbal_plan_optimal

  integer(c_size_t) function hetbal_plan_transfer_count(plan)
    type(hetbal_plan), intent(in) :: plan
    hetbal_plan_transfer_count = c_plan_transfer_count(plan%handle)
  end function hetbal_plan_transfer_count

  subroutine hetbal_plan_free(plan)
    type(hetbal_plan), intent(inout) :: plan
    call c_plan_free(plan%handle)
    plan%handle = c_null_ptr
  end subroutine hetbal_plan_free

  !> A malloc'ed buffer of bytes bytes that the library may grow; map it with
  !> c_f_pointer, free it with hetbal_free.
  type(c_ptr) function hetbal_alloc(bytes)
    integer(c_size_t), intent(in) :: bytes
    hetbal_alloc = c_alloc(bytes)
  end function hetbal_alloc

  subroutine hetbal_free(buffer)
    type(c_ptr), intent(inout) :: buffer
    call c_free(buffer)
    buffer = c_null_ptr
  end subroutine hetbal_free

  function ring_redistribute_int(comm, plan, item_bytes, items, count) result(status)
    integer, intent(in) :: comm
    type(hetbal_plan), intent(in) :: plan
    integer(c_size_t), intent(in) :: item_bytes
    type(c_ptr), intent(inout) :: items
    integer(c_int64_t), intent(inout) :: count
    integer(c_int) :: status
    status = c_ring_redistribute(int(comm, c_int), plan%handle, item_bytes, items, count)
  end function ring_redistribute_int

  function ring_redistribute_f08(comm, plan, item_bytes, items, count) result(status)
    type(MPI_Comm), intent(in) :: comm
    type(hetbal_plan), intent(in) :: plan
    integer(c_size_t), intent(in) :: item_bytes
    type(c_ptr), intent(inout) :: items
    integer(c_int64_t), intent(inout) :: count
    integer(c_int) :: status
    status = ring_redistribute_int(comm%MPI_VAL, plan, item_bytes, items, count)
  end function ring_redistribute_f08

  !> Makes an empty item buffer for items of item_bytes bytes (1 TiB of
  !> addresses reserved, no memory until items are written; up to 512 GiB of
  !> items). Its first item is aligned for any type of item_bytes bytes. Not
  !> collective. HETBAL_ERROR_INPUT for item_bytes 0 or too large,
  !> HETBAL_ERROR_RUN when the system refuses the reservation
  !> (hetbal_item_buffer_create).
  function hetbal_item_buffer_create(item_bytes, buffer) result(status)
    integer(c_size_t), intent(in) :: item_bytes
    type(hetbal_item_buffer), intent(out) :: buffer
    integer(c_int) :: status
    status = c_item_buffer_create(item_bytes, buffer%handle)
  end function hetbal_item_buffer_create

  !> Frees an item buffer (its items and addresses go back to the system;
  !> pointers into it become invalid). A freed buffer does nothing.
  subroutine hetbal_item_buffer_free(buffer)
    type(hetbal_item_buffer), intent(inout) :: buffer
    call c_item_buffer_free(buffer%handle)
    buffer%handle = c_null_ptr
  end subroutine hetbal_item_buffer_free

  !> The address of the buffer's first item (items follow one another,
  !> item_bytes apart); map it with c_f_pointer, or use
  !> hetbal_item_buffer_doubles. Valid until the next call that changes the
  !> buffer: take it again after a redistribution (kept items stay where they
  !> are, but the first item may be another one). c_null_ptr for a freed
  !> buffer, with hetbal_last_error set.
  type(c_ptr) function hetbal_item_buffer_data(buffer)
    type(hetbal_item_buffer), intent(in) :: buffer
    hetbal_item_buffer_data = c_item_buffer_data(buffer%handle)
  end function hetbal_item_buffer_data

  !> The number of items the buffer holds (0 too for a freed buffer, with
  !> hetbal_last_error set: hetbal_item_buffer_item_bytes is then 0).
  integer(c_int64_t) function hetbal_item_buffer_count(buffer)
    type(hetbal_item_buffer), intent(in) :: buffer
    hetbal_item_buffer_count = c_item_buffer_count(buffer%handle)
  end function hetbal_item_buffer_count

  !> The size of the buffer's items in bytes; 0 for a freed buffer.
  integer(c_size_t) function hetbal_item_buffer_item_bytes(buffer)
    type(hetbal_item_buffer), intent(in) :: buffer
    hetbal_item_buffer_item_bytes = c_item_buffer_item_bytes(buffer%handle)
  end function hetbal_item_buffer_item_bytes

  !> Appends a copy of count items (count * item_bytes bytes of the array
  !> items, of any type) behind those the buffer holds, which stay where they
  !> are. Nothing appended on failure (hetbal_item_buffer_append).
  function hetbal_item_buffer_append(buffer, items, count) result(status)
    type(hetbal_item_buffer), intent(inout) :: buffer
    type(*), intent(in) :: items(*)
    integer(c_int64_t), intent(in) :: count
    integer(c_int) :: status
    status = c_item_buffer_append(buffer%handle, items, count)
  end function hetbal_item_buffer_append

  !> Makes the buffer hold count items: its first count, or its items followed
  !> by new ones whose bytes are all 0. The items held stay where they are.
  !> Nothing changed on failure (hetbal_item_buffer_resize).
  function hetbal_item_buffer_resize(buffer, count) result(status)
    type(hetbal_item_buffer), intent(inout) :: buffer
    integer(c_int64_t), intent(in) :: count
    integer(c_int) :: status
    status = c_item_buffer_resize(buffer%handle, count)
  end function hetbal_item_buffer_resize

  !> With on = .true., redistributions give back the memory of the items this
  !> rank sends as soon as they have left, not at the commit (a rank that
  !> keeps, sends and receives at once then holds its items plus a few
  !> chunks); a failure after items left then leaves the buffer only its
  !> items that had not left (hetbal_item_buffer_give_back_sent in
  !> hetbal_mpi.h).
  function hetbal_item_buffer_give_back_sent(buffer, on) result(status)
    type(hetbal_item_buffer), intent(inout) :: buffer
    logical, intent(in) :: on
    integer(c_int) :: status
    status = c_item_buffer_give_back_sent(buffer%handle, merge(1_c_int, 0_c_int, on))
  end function hetbal_item_buffer_give_back_sent

  !> items => the buffer's count * item_bytes / 8 doubles, in order (valid as
  !> long as hetbal_item_buffer_data's address). HETBAL_ERROR_INPUT, items
  !> null, for a freed buffer (hetbal_last_error says so) or items whose size
  !> is not a multiple of 8 bytes (no message).
  function item_buffer_doubles_1(buffer, items) result(status)
    type(hetbal_item_buffer), intent(in) :: buffer
    real(c_double), pointer, intent(out) :: items(:)
    integer(c_int) :: status
    integer(c_int64_t) :: per_item
    nullify(items)
    status = doubles_per_item(buffer, per_item)
    if (status /= HETBAL_OK) return
    call c_f_pointer(c_item_buffer_data(buffer%handle), items, [per_item * c_item_buffer_count(buffer%handle)])
  end function item_buffer_doubles_1

  !> items => the buffer's items as item_bytes / 8 by count doubles (item k is
  !> items(:, k)); as item_buffer_doubles_1 otherwise.
  function item_buffer_doubles_2(buffer, items) result(status)
    type(hetbal_item_buffer), intent(in) :: buffer
    real(c_double), pointer, intent(out) :: items(:, :)
    integer(c_int) :: status
    integer(c_int64_t) :: per_item
    nullify(items)
    status = doubles_per_item(buffer, per_item)
    if (status /= HETBAL_OK) return
    call c_f_pointer(c_item_buffer_data(buffer%handle), items, [per_item, c_item_buffer_count(buffer%handle)])
  end function item_buffer_doubles_2

  !> The doubles in each of the buffer's items; HETBAL_ERROR_INPUT for a freed
  !> buffer or a size that is not a multiple of 8 bytes.
  function doubles_per_item(buffer, per_item) result(status)
    type(hetbal_item_buffer), intent(in) :: buffer
    integer(c_int64_t), intent(out) :: per_item
    integer(c_int) :: status
    integer(c_size_t) :: bytes
    bytes = c_item_buffer_item_bytes(buffer%handle)
    per_item = int(bytes / c_sizeof(0.0_c_double), c_int64_t)
    status = HETBAL_ERROR_INPUT
    if (bytes == 0 .or. mod(bytes, c_sizeof(0.0_c_double)) /= 0) return
    status = HETBAL_OK
  end function doubles_per_item

  !> hetbal_ring_redistribute with this rank's items in an item buffer (of
  !> items of item_bytes bytes, holding the plan's load of this rank): the
  !> items it keeps never move (each stays at its address), those it receives
  !> land where they stay, in front of them or behind. On success the buffer
  !> holds this rank's new items in order: take hetbal_item_buffer_data (or
  !> hetbal_item_buffer_doubles) again. Wrong arguments on any rank (a freed
  !> buffer, item_bytes not the buffer's, a count not the plan's load): every
  !> rank gets HETBAL_ERROR_INPUT and its buffer as it was, addresses included
  !> (hetbal_mpi_ring_redistribute_buffer). Collective.
  function ring_redistribute_buffer_int(comm, plan, item_bytes, buffer) result(status)
    integer, intent(in) :: comm
    type(hetbal_plan), intent(in) :: plan
    integer(c_size_t), intent(in) :: item_bytes
    type(hetbal_item_buffer), intent(inout) :: buffer
    integer(c_int) :: status
    status = c_ring_redistribute_buffer(int(comm, c_int), plan%handle, item_bytes, buffer%handle)
  end function ring_redistribute_buffer_int

  function ring_redistribute_buffer_f08(comm, plan, item_bytes, buffer) result(status)
    type(MPI_Comm), intent(in) :: comm
    type(hetbal_plan), intent(in) :: plan
    integer(c_size_t), intent(in) :: item_bytes
    type(hetbal_item_buffer), intent(inout) :: buffer
    integer(c_int) :: status
    status = ring_redistribute_buffer_int(comm%MPI_VAL, plan, item_bytes, buffer)
  end function ring_redistribute_buffer_f08

  !> A balancer for items of item_bytes bytes; links measured unless c_succ
  !> (and c_pred for a bidirectional ring) are given, in seconds per item.
  function balancer_create_int(comm, item_bytes, balancer, c_succ, c_pred) result(status)
    integer, intent(in) :: comm
    integer(c_size_t), intent(in) :: item_bytes
    type(hetbal_balancer), intent(out) :: balancer
    real(c_double), intent(in), contiguous, target, optional :: c_succ(:), c_pred(:)
    integer(c_int) :: status
    type(c_ptr) :: succ, pred
    succ = c_null_ptr
    pred = c_null_ptr
    if (present(c_succ)) succ = c_loc(c_succ)
    if (present(c_pred)) pred = c_loc(c_pred)
    status = c_balancer_create(int(comm, c_int), item_bytes, succ, pred, balancer%handle)
  end function balancer_create_int

  function balancer_create_f08(comm, item_bytes, balancer, c_succ, c_pred) result(status)
    type(MPI_Comm), intent(in) :: comm
    integer(c_size_t), intent(in) :: item_bytes
    type(hetbal_balancer), intent(out) :: balancer
    real(c_double), intent(in), contiguous, target, optional :: c_succ(:), c_pred(:)
    integer(c_int) :: status
    status = balancer_create_int(comm%MPI_VAL, item_bytes, balancer, c_succ, c_pred)
  end function balancer_create_f08

  !> After each iteration, on every rank: this rank's compute time (halo
  !> exchanges excluded), the iterations remaining, its items (a buffer of
  !> hetbal_alloc, which may be replaced) and count (updated when they move).
  function hetbal_balancer_step(balancer, compute_seconds, remaining, items, count, decision) &
       result(status)
    type(hetbal_balancer), intent(inout) :: balancer
    real(c_double), intent(in) :: compute_seconds
    integer(c_int64_t), intent(in) :: remaining
    type(c_ptr), intent(inout) :: items
    integer(c_int64_t), intent(inout) :: count
    type(hetbal_decision), intent(out) :: decision
    integer(c_int) :: status
    status = c_balancer_step(balancer%handle, compute_seconds, remaining, items, count, decision)
  end function hetbal_balancer_step

  !> hetbal_balancer_step with this rank's items in an item buffer (of the
  !> balancer's item size, one item at least): when the items move, those this
  !> rank keeps never move (each stays at its address), as in
  !> hetbal_ring_redistribute_buffer. Take hetbal_item_buffer_data (or
  !> hetbal_item_buffer_doubles) and the count (or decision%count) again after
  !> the step. A freed buffer, or items of another size, on any rank: every
  !> rank gets HETBAL_ERROR_INPUT and its buffer as it was, addresses included
  !> (hetbal_mpi_balancer_step_buffer).
  function hetbal_balancer_step_buffer(balancer, compute_seconds, remaining, buffer, decision) &
       result(status)
    type(hetbal_balancer), intent(inout) :: balancer
    real(c_double), intent(in) :: compute_seconds
    integer(c_int64_t), intent(in) :: remaining
    type(hetbal_item_buffer), intent(inout) :: buffer
    type(hetbal_decision), intent(out) :: decision
    integer(c_int) :: status
    status = c_balancer_step_buffer(balancer%handle, compute_seconds, remaining, buffer%handle, decision)
  end function hetbal_balancer_step_buffer

  subroutine hetbal_balancer_free(balancer)
    type(hetbal_balancer), intent(inout) :: balancer
    call c_balancer_free(balancer%handle)
    balancer%handle = c_null_ptr
  end subroutine hetbal_balancer_free

  !> How the balancer models each rank's compute time: HETBAL_MODEL_CONSTANT
  !> (one time per item, the default), HETBAL_MODEL_FUNCTIONAL (a
  !> piecewise-linear function of the load, learned on line: memory cliffs,
  !> GPU overheads) or HETBAL_MODEL_MONOTONE_CUBIC. The same on every rank
  !> (hetbal_mpi_balancer_set_model).
  function hetbal_balancer_set_model(balancer, model) result(status)
    type(hetbal_balancer), intent(inout) :: balancer
    integer(c_int), intent(in) :: model
    integer(c_int) :: status
    status = c_balancer_set_model(balancer%handle, model)
  end function hetbal_balancer_set_model

  !> The policy the balancer decides with: HETBAL_POLICY_ADAPTIVE (the
  !> default), HETBAL_POLICY_PROFITABILITY, HETBAL_POLICY_NEVER or
  !> HETBAL_POLICY_FIXED (redistributions moves evenly spaced over the run;
  !> ignored by the others). The decider starts again. The same on every rank
  !> (hetbal_mpi_balancer_set_policy).
  function hetbal_balancer_set_policy(balancer, policy, redistributions) result(status)
    type(hetbal_balancer), intent(inout) :: balancer
    integer(c_int), intent(in) :: policy
    integer(c_int32_t), intent(in), optional :: redistributions
    integer(c_int) :: status
    integer(c_int32_t) :: r
    r = 0
    if (present(redistributions)) r = redistributions
    status = c_balancer_set_policy(balancer%handle, policy, r)
  end function hetbal_balancer_set_policy

  !> Moves variable-size items so that rank r holds the global items cuts(r + 1)
  !> to cuts(r + 2) - 1 (0-based; the ranks' items, rank after rank), along a
  !> chain. data: this rank's elements of element_bytes bytes, a buffer of
  !> hetbal_alloc (c_null_ptr when it holds none); offsets: a buffer of
  !> hetbal_alloc of count + 1 integer(c_int64_t) offsets in elements, from 0
  !> (item i, from 1, is elements offsets(i) + 1 to offsets(i + 1)); cuts: p + 1
  !> values, the same on every rank, from 0 to the total. On success data,
  !> offsets (either may be replaced; data c_null_ptr when no element is left)
  !> and count hold the new items. Wrong arguments on any rank: every rank gets
  !> HETBAL_ERROR_INPUT and keeps its items (hetbal_mpi_redistribute_items).
  function redistribute_items_int(comm, element_bytes, data, offsets, count, cuts) result(status)
    integer, intent(in) :: comm
    integer(c_size_t), intent(in) :: element_bytes
    type(c_ptr), intent(inout) :: data, offsets
    integer(c_int64_t), intent(inout) :: count
    integer(c_int64_t), intent(in), contiguous :: cuts(:)
    integer(c_int) :: status
    status = c_redistribute_items(int(comm, c_int), element_bytes, data, offsets, count, cuts, &
         int(size(cuts), c_size_t))
  end function redistribute_items_int

  function redistribute_items_f08(comm, element_bytes, data, offsets, count, cuts) result(status)
    type(MPI_Comm), intent(in) :: comm
    integer(c_size_t), intent(in) :: element_bytes
    type(c_ptr), intent(inout) :: data, offsets
    integer(c_int64_t), intent(inout) :: count
    integer(c_int64_t), intent(in), contiguous :: cuts(:)
    integer(c_int) :: status
    status = redistribute_items_int(comm%MPI_VAL, element_bytes, data, offsets, count, cuts)
  end function redistribute_items_f08

  !> A weighted balancer: among the partitions within 1 + tolerance of the
  !> optimal one (0.05: 5 %), it moves to the one moving the fewest bytes, when
  !> that pays. Links measured now. Collective.
  function weighted_balancer_create_int(comm, tolerance, balancer) result(status)
    integer, intent(in) :: comm
    real(c_double), intent(in) :: tolerance
    type(hetbal_weighted_balancer), intent(out) :: balancer
    integer(c_int) :: status
    status = c_weighted_balancer_create(int(comm, c_int), tolerance, balancer%handle)
  end function weighted_balancer_create_int

  function weighted_balancer_create_f08(comm, tolerance, balancer) result(status)
    type(MPI_Comm), intent(in) :: comm
    real(c_double), intent(in) :: tolerance
    type(hetbal_weighted_balancer), intent(out) :: balancer
    integer(c_int) :: status
    status = weighted_balancer_create_int(comm%MPI_VAL, tolerance, balancer)
  end function weighted_balancer_create_f08

  !> After each iteration, on every rank: this rank's items (data, offsets and
  !> count as for hetbal_redistribute_items), weights their costs (a buffer of
  !> hetbal_alloc of count real(c_double) values, finite and >= 0; c_null_ptr
  !> when count is 0), its compute time (halo exchanges excluded) and the
  !> iterations remaining. When the move pays, the items and their weights
  !> move (the buffers may be replaced, count updated).
  function hetbal_weighted_balancer_step(balancer, element_bytes, data, offsets, weights, count, &
       compute_seconds, remaining, decision) result(status)
    type(hetbal_weighted_balancer), intent(inout) :: balancer
    integer(c_size_t), intent(in) :: element_bytes
    type(c_ptr), intent(inout) :: data, offsets, weights
    integer(c_int64_t), intent(inout) :: count
    real(c_double), intent(in) :: compute_seconds
    integer(c_int64_t), intent(in) :: remaining
    type(hetbal_weighted_decision), intent(out) :: decision
    integer(c_int) :: status
    status = c_weighted_balancer_step(balancer%handle, element_bytes, data, offsets, weights, count, &
         compute_seconds, remaining, decision)
  end function hetbal_weighted_balancer_step

  subroutine hetbal_weighted_balancer_free(balancer)
    type(hetbal_weighted_balancer), intent(inout) :: balancer
    call c_weighted_balancer_free(balancer%handle)
    balancer%handle = c_null_ptr
  end subroutine hetbal_weighted_balancer_free

end module hetbal
