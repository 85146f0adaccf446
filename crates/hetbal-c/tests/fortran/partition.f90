! `use hetbal` from Fortran: weighted partitions (hetbal_partition) and the
! least-moving partition within a tolerance (hetbal_partition_moving) on the
! answers the Rust tests and docs expect, bad input refused with the outputs
! left as they were. No MPI needed: run it directly.
program partition_test
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use hetbal
  implicit none
  integer :: failures
  integer(c_int64_t) :: cuts(3), cuts4(4), moved
  real(c_double) :: bottleneck, nan
  real(c_double), parameter :: eight(8) = 1d0
  integer(c_int64_t), parameter :: current(3) = [0, 5, 8]

  failures = 0
  nan = ieee_value(nan, ieee_quiet_nan)

  ! Six cells with 1 to 6 particles, P0 twice as fast as P1: P0 takes
  ! 1 + ... + 5 (15 s), P1 takes 6 (12 s).
  call check(hetbal_partition([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [1d0, 2d0], cuts, bottleneck) == HETBAL_OK, &
       "partition")
  call check(all(cuts == [0, 5, 6]) .and. bottleneck == 15d0, "partition: cuts 0 5 6, bottleneck 15")
  ! A very slow processor in the middle gets nothing.
  call check(hetbal_partition([3d0, 1d0, 2d0, 2d0], [1d0, 100d0, 1d0], cuts4, bottleneck) == HETBAL_OK, &
       "slow processor")
  call check(all(cuts4 == [0, 2, 2, 4]) .and. bottleneck == 4d0, "slow processor: cuts 0 2 2 4, bottleneck 4")
  call check(hetbal_partition([real(c_double) ::], [1d0, 100d0, 1d0], cuts4) == HETBAL_OK, "no items")
  call check(all(cuts4 == 0), "no items: every cut 0")

  ! Eight equal items on two equal processors, now 5 + 3.
  call check(hetbal_partition_moving(eight, [1d0, 1d0], current, 0d0, cuts, bottleneck, moved_bytes=moved) &
       == HETBAL_OK, "tolerance 0")
  call check(all(cuts == [0, 4, 8]) .and. bottleneck == 4d0 .and. moved == 1, "tolerance 0: cuts 0 4 8, moved 1")
  call check(hetbal_partition_moving(eight, [1d0, 1d0], current, 0.25d0, cuts, bottleneck, moved_bytes=moved) &
       == HETBAL_OK, "tolerance 0.25")
  call check(all(cuts == current) .and. bottleneck == 5d0 .and. moved == 0, "tolerance 0.25: cuts 0 5 8, moved 0")
  call check(hetbal_partition_moving(eight, [1d0, 1d0], current, 0d0, cuts, &
       sizes=[1_c_int64_t, 1_c_int64_t, 1_c_int64_t, 1_c_int64_t, 100_c_int64_t, 1_c_int64_t, 1_c_int64_t, &
       1_c_int64_t], moved_bytes=moved) == HETBAL_OK, "sizes")
  call check(moved == 100, "sizes: 100 bytes moved")

  ! Bad input: refused, outputs untouched.
  cuts = 7
  bottleneck = -7
  moved = 77
  call check(hetbal_partition([1d0, nan, 1d0], [1d0, 1d0], cuts, bottleneck) == HETBAL_ERROR_INPUT, "NaN weight")
  call check(index(hetbal_last_error(), "weights[1]") > 0, "NaN weight: message")
  call check(hetbal_partition([1d0, 1d0, 1d0], [1d0, 0d0], cuts, bottleneck) == HETBAL_ERROR_INPUT, "zero speed")
  call check(index(hetbal_last_error(), "seconds_per_unit[1]") > 0, "zero speed: message")
  call check(hetbal_partition([1d0, 1d0, 1d0], [real(c_double) ::], cuts(1:1), bottleneck) == HETBAL_ERROR_INPUT, &
       "no processors")
  call check(index(hetbal_last_error(), "n_procs is 0") > 0, "no processors: message")
  call check(hetbal_partition([1d0, 1d0, 1d0], [1d0, 1d0], cuts4, bottleneck) == HETBAL_ERROR_INPUT, &
       "cuts of the wrong size")
  call check(hetbal_partition_moving([1d0, nan, 1d0], [1d0, 1d0], [0_c_int64_t, 2_c_int64_t, 3_c_int64_t], &
       0d0, cuts, bottleneck, moved_bytes=moved) == HETBAL_ERROR_INPUT, "moving: NaN weight")
  call check(index(hetbal_last_error(), "weights[1]") > 0, "moving: NaN weight: message")
  call check(hetbal_partition_moving(eight, [1d0, 1d0], [1_c_int64_t, 5_c_int64_t, 8_c_int64_t], 0d0, cuts, &
       bottleneck, moved_bytes=moved) == HETBAL_ERROR_INPUT, "moving: current not from 0")
  call check(index(hetbal_last_error(), "current[0]") > 0, "moving: current: message")
  call check(hetbal_partition_moving(eight, [1d0, 1d0], current, -1d0, cuts, bottleneck, moved_bytes=moved) &
       == HETBAL_ERROR_INPUT, "moving: negative tolerance")
  call check(index(hetbal_last_error(), "tolerance") > 0, "moving: tolerance: message")
  call check(all(cuts == 7) .and. bottleneck == -7d0 .and. moved == 77, "outputs changed by a failure")

  if (failures == 0) print '(a)', 'hetbal (Fortran): partitions and least-moving partitions, bad input refused'
  if (failures /= 0) error stop 1

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (.not. condition) then
       failures = failures + 1
       print '(4a)', 'FAILED: ', what, '; last error: ', hetbal_last_error()
    end if
  end subroutine check

end program partition_test
