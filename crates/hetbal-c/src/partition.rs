//! Weighted partitions without MPI (`hetbal.h`): items of unequal cost cut into
//! contiguous ranges, one per processor, for processors of different speeds.

use hetbal::partition::{partition, partition_with_movement, PartitionError};

use crate::plan::MAX_LENGTH;
use crate::{guard, hetbal_status, slice, Failure, HETBAL_ERROR_INPUT, HETBAL_ERROR_LIMIT};

/// Refuses absurd lengths (`n_items`, `n_procs`) before any array is read.
fn check_size(n: usize, name: &str) -> Result<(), Failure> {
    if n > MAX_LENGTH {
        return Err(Failure::input(format!(
            "{name} = {n} is beyond the {MAX_LENGTH} elements the library accepts"
        )));
    }
    Ok(())
}

/// `n` elements from a C array; NULL is allowed when `n` is 0.
///
/// # Safety
/// `data`, when not NULL, points to `n` valid elements.
unsafe fn array<'a, T>(data: *const T, n: usize, name: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    slice(data, n, name)
}

/// The library's error as a failure of `function`: its message, with `n_procs`
/// named when there is no processor.
fn failure(function: &str, e: PartitionError) -> Failure {
    let status = match e {
        PartitionError::Limit { .. } => HETBAL_ERROR_LIMIT,
        _ => HETBAL_ERROR_INPUT,
    };
    let message = match e {
        PartitionError::NoProcessors => format!("{function}: n_procs is 0 ({e})"),
        e => format!("{function}: {e}"),
    };
    Failure { status, message }
}

/// Refuses a NULL output array (checked before any work, so that nothing is
/// computed for a call that cannot report it).
fn check_output<T>(data: *mut T, name: &str) -> Result<(), Failure> {
    if data.is_null() {
        return Err(Failure::input(format!("{name} is NULL")));
    }
    Ok(())
}

/// Cuts `n_items` items, in their order, into `n_procs` contiguous ranges, one
/// per processor in its order, so that the slowest processor finishes first:
/// processor j holds items `cuts_out[j]` to `cuts_out[j+1] - 1` (`cuts_out`
/// gets `n_procs + 1` entries, from 0 to `n_items`, non-decreasing; a very
/// slow processor may get no item) and takes `seconds_per_unit[j]` seconds
/// per unit of weight. The partition minimises the bottleneck
/// `max_j seconds_per_unit[j] * (weights[cuts[j]] + ... + weights[cuts[j+1] - 1])`,
/// which goes to `*bottleneck_out` (when not NULL): the library's exact
/// optimum (chains-on-chains partitioning for heterogeneous processors), in
/// O(n_items) for the prefix sums and at most 66 probes of
/// O(n_procs log(n_items / n_procs)).
///
/// `n_items = 0` is allowed (with `weights` NULL): every cut is 0.
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing written): `n_procs`
/// is 0, `cuts_out` is NULL, `weights` is NULL while `n_items > 0`,
/// `seconds_per_unit` is NULL, a weight that is NaN, infinite or negative,
/// weights whose sum is infinite, a time per unit that is not finite and > 0
/// (the message names the array and the index, e.g. `weights[1]`).
///
/// # Safety
/// `weights` points to `n_items` elements, `seconds_per_unit` to `n_procs`
/// and `cuts_out` has room for `n_procs + 1` (or they are NULL);
/// `bottleneck_out` is NULL or points to a double.
#[no_mangle]
pub unsafe extern "C" fn hetbal_partition(
    n_items: usize,
    weights: *const f64,
    n_procs: usize,
    seconds_per_unit: *const f64,
    cuts_out: *mut u64,
    bottleneck_out: *mut f64,
) -> hetbal_status {
    guard(|| {
        let function = "hetbal_partition";
        check_size(n_items, "hetbal_partition: n_items")?;
        check_size(n_procs, "hetbal_partition: n_procs")?;
        let weights = array(weights, n_items, "hetbal_partition: weights")?;
        let speeds = array(
            seconds_per_unit,
            n_procs,
            "hetbal_partition: seconds_per_unit",
        )?;
        check_output(cuts_out, "hetbal_partition: cuts_out")?;
        let p = partition(weights, speeds).map_err(|e| failure(function, e))?;
        std::ptr::copy_nonoverlapping(p.cuts.as_ptr(), cuts_out, n_procs + 1);
        if !bottleneck_out.is_null() {
            *bottleneck_out = p.bottleneck;
        }
        Ok(())
    })
}

/// [`hetbal_partition`] for data already distributed: among the partitions
/// whose bottleneck is within `1 + tolerance` of the optimum (0.05: 5 %
/// above it), the one that moves the fewest bytes away from the `current`
/// cuts (`n_procs + 1` entries, from 0 to `n_items`, non-decreasing: processor
/// j holds items `current[j]` to `current[j+1] - 1` now). An item moves when
/// its owner changes; it weighs `sizes[i]` bytes (`sizes` NULL: 1 byte each,
/// so that bytes count items). With `tolerance` 0 it is the optimal partition
/// that moves least; when the current cuts are already within the limit,
/// nothing moves and `cuts_out` is `current`. Exact (the library's dynamic
/// programme over the cuts' windows).
///
/// Outputs: the cuts (`n_procs + 1` entries; `cuts_out` may be `current`,
/// which is then updated in place), their bottleneck in `*bottleneck_out` and
/// the bytes whose owner changes in `*moved_bytes_out` (each when not NULL).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing written): those of
/// [`hetbal_partition`], `current` NULL or not cuts of `n_items` items (the
/// message names the entry, e.g. `current[0]`), a `tolerance` that is
/// NaN, infinite or negative, sizes whose sum overflows 64 bits.
///
/// # Safety
/// As [`hetbal_partition`]; `current` points to `n_procs + 1` elements (or is
/// NULL), `sizes` is NULL or points to `n_items` elements, `moved_bytes_out`
/// is NULL or points to a `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn hetbal_partition_moving(
    n_items: usize,
    weights: *const f64,
    n_procs: usize,
    seconds_per_unit: *const f64,
    current: *const u64,
    tolerance: f64,
    sizes: *const u64,
    cuts_out: *mut u64,
    bottleneck_out: *mut f64,
    moved_bytes_out: *mut u64,
) -> hetbal_status {
    guard(|| {
        let function = "hetbal_partition_moving";
        check_size(n_items, "hetbal_partition_moving: n_items")?;
        check_size(n_procs, "hetbal_partition_moving: n_procs")?;
        let weights = array(weights, n_items, "hetbal_partition_moving: weights")?;
        let speeds = array(
            seconds_per_unit,
            n_procs,
            "hetbal_partition_moving: seconds_per_unit",
        )?;
        let current = slice(current, n_procs + 1, "hetbal_partition_moving: current")?;
        let sizes = if sizes.is_null() {
            None
        } else {
            Some(array(sizes, n_items, "hetbal_partition_moving: sizes")?)
        };
        check_output(cuts_out, "hetbal_partition_moving: cuts_out")?;
        let p = partition_with_movement(weights, speeds, current, tolerance, sizes)
            .map_err(|e| failure(function, e))?;
        // `cuts_out` may be `current`: the result is written from the library's
        // own vector, once the inputs are no longer read.
        std::ptr::copy_nonoverlapping(p.cuts.as_ptr(), cuts_out, n_procs + 1);
        if !bottleneck_out.is_null() {
            *bottleneck_out = p.bottleneck;
        }
        if !moved_bytes_out.is_null() {
            *moved_bytes_out = p.moved_bytes;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{last_error, HETBAL_OK};

    #[test]
    fn known_partitions() {
        let (mut cuts, mut bottleneck) = ([9u64; 3], -1.0);
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let s = unsafe {
            hetbal_partition(
                6,
                w.as_ptr(),
                2,
                [1.0, 2.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        // P0: 1 + ... + 5 in 15 s, P1: 6 units in 12 s.
        assert_eq!((s, cuts, bottleneck), (HETBAL_OK, [0, 5, 6], 15.0));
        let mut cuts = [9u64; 4];
        let w = [3.0, 1.0, 2.0, 2.0];
        let s = unsafe {
            hetbal_partition(
                4,
                w.as_ptr(),
                3,
                [1.0, 100.0, 1.0].as_ptr(),
                cuts.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!((s, cuts), (HETBAL_OK, [0, 2, 2, 4]));
        // No items, no weights.
        let s = unsafe {
            hetbal_partition(
                0,
                std::ptr::null(),
                3,
                [1.0, 1.0, 1.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        assert_eq!((s, cuts, bottleneck), (HETBAL_OK, [0, 0, 0, 0], 0.0));
    }

    #[test]
    fn bad_input_leaves_the_outputs() {
        let (mut cuts, mut bottleneck) = ([9u64; 3], -1.0);
        let s = unsafe {
            hetbal_partition(
                3,
                [1.0, f64::NAN, 1.0].as_ptr(),
                2,
                [1.0, 1.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        assert_eq!(s, HETBAL_ERROR_INPUT);
        assert!(
            last_error().contains("hetbal_partition: weights[1] = NaN"),
            "{}",
            last_error()
        );
        let s = unsafe {
            hetbal_partition(
                1,
                [1.0].as_ptr(),
                0,
                [1.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        assert_eq!(s, HETBAL_ERROR_INPUT);
        assert!(last_error().contains("n_procs is 0"), "{}", last_error());
        let s = unsafe {
            hetbal_partition(
                1,
                [1.0].as_ptr(),
                2,
                [1.0, 1.0].as_ptr(),
                std::ptr::null_mut(),
                &mut bottleneck,
            )
        };
        assert_eq!(s, HETBAL_ERROR_INPUT);
        assert!(
            last_error().contains("cuts_out is NULL"),
            "{}",
            last_error()
        );
        let s = unsafe {
            hetbal_partition(
                1,
                std::ptr::null(),
                2,
                [1.0, 1.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        assert_eq!(s, HETBAL_ERROR_INPUT);
        assert!(last_error().contains("weights is NULL"), "{}", last_error());
        let s = unsafe {
            hetbal_partition(
                usize::MAX,
                [1.0].as_ptr(),
                2,
                [1.0, 1.0].as_ptr(),
                cuts.as_mut_ptr(),
                &mut bottleneck,
            )
        };
        assert_eq!(s, HETBAL_ERROR_INPUT);
        assert!(last_error().contains("beyond"), "{}", last_error());
        assert_eq!((cuts, bottleneck), ([9; 3], -1.0));
    }

    #[test]
    fn least_moving_partitions() {
        let w = [1.0; 8];
        let s = [1.0, 1.0];
        let (mut cuts, mut bottleneck, mut moved) = ([9u64; 3], -1.0, 99u64);
        let run = |current: &[u64],
                   tolerance: f64,
                   sizes: *const u64,
                   cuts: &mut [u64; 3],
                   b: &mut f64,
                   m: &mut u64| unsafe {
            hetbal_partition_moving(
                8,
                w.as_ptr(),
                2,
                s.as_ptr(),
                current.as_ptr(),
                tolerance,
                sizes,
                cuts.as_mut_ptr(),
                b,
                m,
            )
        };
        let null = std::ptr::null();
        assert_eq!(
            run(
                &[0, 5, 8],
                0.0,
                null,
                &mut cuts,
                &mut bottleneck,
                &mut moved
            ),
            HETBAL_OK
        );
        assert_eq!((cuts, bottleneck, moved), ([0, 4, 8], 4.0, 1));
        assert_eq!(
            run(
                &[0, 5, 8],
                0.25,
                null,
                &mut cuts,
                &mut bottleneck,
                &mut moved
            ),
            HETBAL_OK
        );
        assert_eq!((cuts, bottleneck, moved), ([0, 5, 8], 5.0, 0));
        let sizes = [10u64; 8];
        assert_eq!(
            run(
                &[0, 5, 8],
                0.0,
                sizes.as_ptr(),
                &mut cuts,
                &mut bottleneck,
                &mut moved
            ),
            HETBAL_OK
        );
        assert_eq!((cuts, moved), ([0, 4, 8], 10));
        // In place: cuts_out is current.
        let mut now = [0u64, 6, 8];
        let both = now.as_mut_ptr();
        let status = unsafe {
            hetbal_partition_moving(
                8,
                w.as_ptr(),
                2,
                s.as_ptr(),
                both,
                0.0,
                null,
                both,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!((status, now), (HETBAL_OK, [0, 4, 8]));
        // Bad input: nothing written.
        let (mut cuts, mut bottleneck, mut moved) = ([9u64; 3], -1.0, 99u64);
        assert_eq!(
            run(
                &[1, 5, 8],
                0.0,
                null,
                &mut cuts,
                &mut bottleneck,
                &mut moved
            ),
            HETBAL_ERROR_INPUT
        );
        assert!(last_error().contains("current[0]"), "{}", last_error());
        assert_eq!(
            run(
                &[0, 5, 8],
                f64::NAN,
                null,
                &mut cuts,
                &mut bottleneck,
                &mut moved
            ),
            HETBAL_ERROR_INPUT
        );
        assert!(last_error().contains("tolerance"), "{}", last_error());
        let status = unsafe {
            hetbal_partition_moving(
                8,
                w.as_ptr(),
                2,
                s.as_ptr(),
                null,
                0.0,
                null,
                cuts.as_mut_ptr(),
                &mut bottleneck,
                &mut moved,
            )
        };
        assert_eq!(status, HETBAL_ERROR_INPUT);
        assert!(last_error().contains("current is NULL"), "{}", last_error());
        assert_eq!((cuts, bottleneck, moved), ([9; 3], -1.0, 99));
    }
}
